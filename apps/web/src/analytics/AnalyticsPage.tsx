import { lazy, Suspense } from 'react';
import { useSearchParams } from 'react-router';
import type { CampaignList, Counts, Domain, TimeSeries } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';
import { OutcomeRate } from '../ui/OutcomeRate';
import { PageHeader } from '../ui/PageHeader';

const DailyChart = lazy(() => import('../ui/DailyChart'));

const FIGURES: { key: keyof Counts; label: string }[] = [
  { key: 'sent', label: 'Sent' },
  { key: 'delivered', label: 'Delivered' },
  { key: 'bounced', label: 'Bounced' },
  { key: 'complained', label: 'Complained' },
  { key: 'opened', label: 'Opened' },
  { key: 'clicked', label: 'Clicked' },
];

/** GET /v1/analytics/email-time-series, for the team, one domain or one campaign; the filters live in the URL. */
export default function AnalyticsPage() {
  const [params, setParams] = useSearchParams();
  const days = params.get('days') === '7' ? '7' : '30';
  const domainId = params.get('domainId') ?? '';
  const campaignId = params.get('campaignId') ?? '';
  const set = (k: string, v: string) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next, { replace: true });
  };
  const series = useTeamQuery<TimeSeries>(['analytics'], '/v1/analytics/email-time-series', {
    days,
    domainId: domainId || undefined,
    campaignId: campaignId || undefined,
  });
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  const campaigns = useTeamQuery<CampaignList>(['campaigns'], '/v1/campaigns', { page: 1 });
  const campaignName = campaigns.data?.campaigns.find((c) => c.id === campaignId)?.name;
  const domainName = domains.data?.find((d) => String(d.id) === domainId)?.name;
  const scope =
    [campaignName && `campaign "${campaignName}"`, domainName && `domain ${domainName}`].filter(Boolean).join(', ') ||
    'all email of the team';
  return (
    <>
      <PageHeader title="Analytics" description="What happened to the email sent each day (UTC): per domain and per campaign." />
      <div className="filters card" role="group" aria-label="Analytics filters">
        <Field label="Period">
          <select value={days} onChange={(e) => set('days', e.target.value === '30' ? '' : e.target.value)}>
            <option value="30">Last 30 days</option>
            <option value="7">Last 7 days</option>
          </select>
        </Field>
        <Field label="Domain">
          <select value={domainId} onChange={(e) => set('domainId', e.target.value)}>
            <option value="">All domains</option>
            {domains.data?.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Campaign">
          <select value={campaignId} onChange={(e) => set('campaignId', e.target.value)}>
            <option value="">Any email</option>
            {campaigns.data?.campaigns.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNotice error={series.error} />
      {series.isPending && <Loading />}
      {series.data && (
        <section className="card" aria-labelledby="analytics-h">
          <h2 id="analytics-h">
            {days} days of {scope}
          </h2>
          <table className="figures">
            <caption className="visually-hidden">Totals over the period</caption>
            <thead>
              <tr>
                {FIGURES.map((f) => (
                  <th key={f.key} scope="col">
                    {f.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              <tr>
                {FIGURES.map((f) => (
                  <td key={f.key} data-testid={`total-${f.key}`}>
                    {formatNumber(series.data.totalCounts[f.key])}
                    <OutcomeRate figure={f.key} rates={series.data.totalRates} />
                  </td>
                ))}
              </tr>
            </tbody>
          </table>
          <Suspense fallback={<Loading label="Loading the chart…" />}>
            <DailyChart series={series.data.result} caption={`Emails per day over the last ${days} days, ${scope}`} />
          </Suspense>
        </section>
      )}
    </>
  );
}
