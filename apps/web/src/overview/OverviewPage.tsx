import { lazy, Suspense } from 'react';
import { Link } from 'react-router';
import type { Counts, Domain, OutcomeRates, Overview } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { formatNumber, formatPercent } from '../ui/format';
import { Loading } from '../ui/Loading';
import { OutcomeRate } from '../ui/OutcomeRate';
import { PageHeader } from '../ui/PageHeader';
import { FirstEmailSnippet } from './FirstEmailSnippet';
import { TestEmailButton } from './TestEmailButton';

// uPlot draws on canvas and is only needed here: its own chunk, after the figures are shown.
const DailyChart = lazy(() => import('../ui/DailyChart'));

const FIGURES: { key: keyof Counts; label: string }[] = [
  { key: 'sent', label: 'Sent' },
  { key: 'delivered', label: 'Delivered' },
  { key: 'bounced', label: 'Bounced' },
  { key: 'complained', label: 'Complained' },
  { key: 'opened', label: 'Opened' },
  { key: 'clicked', label: 'Clicked' },
];

export default function OverviewPage() {
  const { team } = useTeam();
  const overview = useTeamQuery<Overview>(['overview'], '/overview');
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  return (
    <>
      <PageHeader title="Overview" description={`${team.name}: what was sent today and over the last 30 days (UTC days).`} />
      <ErrorNotice error={overview.error} />
      <ErrorNotice error={domains.error} prefix="The domains could not be loaded" />
      {overview.isPending && <Loading />}
      {overview.data && (
        <>
          {overview.data.last30Days.sent === 0 && <GetStarted domains={domains.data ?? []} />}
          <section aria-labelledby="sending-h" className="card">
            <h2 id="sending-h">Sending</h2>
            <Figures overview={overview.data} />
            <Suspense fallback={<Loading label="Loading the chart…" />}>
              <DailyChart series={overview.data.series} caption="Emails per day over the last 30 days" />
            </Suspense>
          </section>
          <Reputation overview={overview.data} />
        </>
      )}
    </>
  );
}

function Figures({ overview }: { overview: Overview }) {
  const rows: [string, Counts, OutcomeRates][] = [
    ['Today', overview.today, overview.todayRates],
    ['Last 30 days', overview.last30Days, overview.last30DaysRates],
  ];
  return (
    <table className="figures">
      <caption className="visually-hidden">Emails today and over the last 30 days</caption>
      <thead>
        <tr>
          <td />
          {FIGURES.map((f) => (
            <th key={f.key} scope="col">
              {f.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map(([label, counts, rates]) => (
          <tr key={label}>
            <th scope="row">{label}</th>
            {FIGURES.map((f) => (
              <td key={f.key}>
                {formatNumber(counts[f.key])}
                <OutcomeRate figure={f.key} rates={rates} />
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Reputation({ overview }: { overview: Overview }) {
  const { reputation: r, thresholds: t } = overview;
  const w = r.window;
  return (
    <section aria-labelledby="rep-h" className="card">
      <h2 id="rep-h">Reputation</h2>
      <p className="muted">
        Over the last {w.days} days ({w.from} to {w.to}, UTC), in percent of sent mail ({plural(w.sent, 'email')} sent), as SES judges a
        recent window. SES reviews an account at the first mark and may pause its sending at the second.
      </p>
      <div className="rates">
        <RateMeter
          label="Bounce rate"
          value={w.bounceRate}
          review={t.bounceRate.review}
          pause={t.bounceRate.pause}
          count={plural(w.hardBounced, 'hard bounce')}
        />
        <RateMeter
          label="Complaint rate"
          value={w.complaintRate}
          review={t.complaintRate.review}
          pause={t.complaintRate.pause}
          count={plural(w.complained, 'complaint')}
        />
      </div>
      <p className="muted small" data-testid="reputation-all-time">
        All time, in percent of delivered mail ({formatNumber(r.delivered)} delivered): bounce rate{' '}
        {formatPercent(r.bounceRate, r.bounceRate < 1 ? 3 : 2)} ({plural(r.hardBounced, 'hard bounce')}), complaint rate{' '}
        {formatPercent(r.complaintRate, 3)} ({plural(r.complained, 'complaint')}).
      </p>
    </section>
  );
}

const plural = (n: number, word: string) => `${formatNumber(n)} ${word}${n === 1 ? '' : 's'}`;

function RateMeter({ label, value, review, pause, count }: { label: string; value: number; review: number; pause: number; count: string }) {
  const state = value >= pause ? 'bad' : value >= review ? 'warn' : 'good';
  const words =
    state === 'bad'
      ? 'at or above the pause threshold'
      : state === 'warn'
        ? 'at or above the review threshold'
        : 'below the review threshold';
  const scale = pause * 1.25;
  const pct = (v: number) => `${Math.min(100, (v / scale) * 100)}%`;
  return (
    <div className="rate">
      <p className="rate-head">
        <span>{label}</span>
        <strong className={`tone-${state}`}>{formatPercent(value, value < 1 ? 3 : 2)}</strong>
      </p>
      <div
        className="meter"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={scale}
        aria-valuenow={value}
        aria-valuetext={`${formatPercent(value)}, ${words}`}
      >
        <div className={`meter-fill tone-bg-${state}`} style={{ width: pct(value) }} />
        <div className="meter-mark" style={{ left: pct(review) }} title={`review at ${review} %`} />
        <div className="meter-mark meter-mark-pause" style={{ left: pct(pause) }} title={`pause at ${pause} %`} />
      </div>
      <p className="muted small">
        {count}; {words} (review at {review} %, pause at {pause} %).
      </p>
    </div>
  );
}

function GetStarted({ domains }: { domains: Domain[] }) {
  const { isAdmin, base } = useTeam();
  const verified = domains.find((d) => d.status === 'SUCCESS');
  return (
    <section aria-labelledby="start-h" className="card card-accent">
      <h2 id="start-h">Send your first email</h2>
      <ol className="steps">
        <li className={domains.length ? 'done' : ''}>
          {domains.length ? (
            <>
              Domain added: {domains.map((d) => d.name).join(', ')}
              {!verified && (
                <>
                  {' '}
                  (not verified yet: <Link to={`${base}/domains/${domains[0].id}`}>publish its DNS records</Link>)
                </>
              )}
            </>
          ) : (
            <>
              <Link to={`${base}/domains`}>Add a sending domain</Link> and publish its DNS records.
            </>
          )}
        </li>
        <li>
          {isAdmin ? <Link to={`${base}/api-keys`}>Create an API key</Link> : 'Ask an admin of the team for an API key'} (SENDING is enough
          to send).
        </li>
        <li>
          Send with it:
          <FirstEmailSnippet domain={verified?.name ?? domains[0]?.name} />
        </li>
        <li>
          Or check that sending works first:
          <TestEmailButton />
        </li>
      </ol>
    </section>
  );
}
