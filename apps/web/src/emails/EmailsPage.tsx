import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { CampaignList, Domain, EmailLogPage } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { FirstEmailSnippet } from '../overview/FirstEmailSnippet';
import { useTeam } from '../session/session';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FilterForm } from '../ui/FilterForm';
import { formatDateTime, formatNumber, formatRelative } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { StatusBadge } from '../ui/StatusBadge';
import { EMAIL_SOURCE_LABELS, EMAIL_SOURCES, EMAIL_STATUSES } from './statuses';
import { DataTable } from '../ui/DataTable';
import { CursorPager } from '../ui/Pager';

const FILTERS = ['status', 'source', 'campaignId', 'domainId', 'from', 'to', 'search'] as const;

/** The planner's estimate in round words: "about 1.2 million emails". */
function aboutEmails(n: number): string {
  if (n >= 1_000_000) return `about ${(n / 1_000_000).toFixed(n >= 10_000_000 ? 0 : 1)} million emails`;
  if (n >= 1_000) return `about ${formatNumber(Number(n.toPrecision(2)))} emails`;
  return `about ${formatNumber(n)} email${n === 1 ? '' : 's'}`;
}

/** A day picked in the browser's zone as the instant it starts; `to` is inclusive, so it ends at the next day's start. */
function dayStart(day: string, plusDays = 0): string | undefined {
  if (!day) return undefined;
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y, m - 1, d + plusDays).toISOString();
}

export default function EmailsPage() {
  const { base } = useTeam();
  const [params, setParams] = useSearchParams();
  // Keyset paging: the server gives the next page's cursor; "Previous" walks back the cursors used.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = {
    status: params.get('status') || undefined,
    source: params.get('source') || undefined,
    campaignId: params.get('campaignId') || undefined,
    domainId: params.get('domainId') || undefined,
    startDate: dayStart(params.get('from') ?? ''),
    endDate: dayStart(params.get('to') ?? '', 1),
    search: params.get('search') || undefined,
    limit: 50,
    cursor,
  };
  const filtered = FILTERS.some((f) => params.get(f));
  // The first page refreshes itself so new emails and status changes show up while watching.
  const log = useTeamQuery<EmailLogPage>(['email-log'], '/email-log', query, {
    refetchInterval: cursor ? false : 5000,
    placeholderData: (prev) => prev,
  });
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  const domainName = (id: number | null) => domains.data?.find((d) => d.id === id)?.name ?? '';
  const campaigns = useTeamQuery<CampaignList>(['campaigns'], '/v1/campaigns', { page: 1 });
  // The estimate comes with the first page; later pages keep showing it.
  const [estimate, setEstimate] = useState<{ key: string; total: number }>();
  const filterKey = params.toString();
  const firstPageTotal = log.data?.estimatedTotal;
  if (firstPageTotal !== undefined && (estimate?.key !== filterKey || estimate.total !== firstPageTotal))
    setEstimate({ key: filterKey, total: firstPageTotal });
  const estimatedTotal = estimate?.key === filterKey ? estimate.total : undefined;

  const applyFilters = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const next = new URLSearchParams();
    for (const f of FILTERS) {
      const v = String(form.get(f) ?? '').trim();
      if (v) next.set(f, v);
    }
    setCursors([]);
    setParams(next);
  };
  const clearFilters = () => {
    setCursors([]);
    setParams(new URLSearchParams());
  };

  return (
    <>
      <PageHeader title="Emails" description="Every email of the team, newest first. The first page refreshes every few seconds." />
      <FilterForm label="Filter emails" filters={{ params, filtered, applyFilters, clearFilters }}>
        <Field label="Status">
          <select name="status" defaultValue={params.get('status') ?? ''}>
            <option value="">Any status</option>
            {EMAIL_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replaceAll('_', ' ').toLowerCase()}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Source">
          <select name="source" defaultValue={params.get('source') ?? ''}>
            <option value="">Any source</option>
            {EMAIL_SOURCES.map((s) => (
              <option key={s} value={s}>
                {EMAIL_SOURCE_LABELS[s]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Campaign">
          <select name="campaignId" defaultValue={params.get('campaignId') ?? ''}>
            <option value="">Any campaign</option>
            {campaigns.data?.campaigns.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Domain">
          <select name="domainId" defaultValue={params.get('domainId') ?? ''}>
            <option value="">Any domain</option>
            {domains.data?.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="From day">
          <input type="date" name="from" defaultValue={params.get('from') ?? ''} />
        </Field>
        <Field label="To day">
          <input type="date" name="to" defaultValue={params.get('to') ?? ''} />
        </Field>
        <Field label="Recipient or subject">
          <input type="search" name="search" defaultValue={params.get('search') ?? ''} placeholder="ada@example.org" />
        </Field>
      </FilterForm>
      <ErrorNotice error={log.error} />
      <ErrorNotice error={domains.error} prefix="The domains could not be loaded" />
      <ErrorNotice error={campaigns.error} prefix="The campaigns could not be loaded" />
      {log.isPending && <Loading />}
      {log.data &&
        log.data.data.length === 0 &&
        !cursor &&
        (filtered ? (
          <EmptyState title="No email matches these filters">
            <p>Widen the date range, pick another status, or clear the filters.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No emails yet">
            <p>Emails sent through the API or SMTP with this team's keys show up here within seconds.</p>
            <FirstEmailSnippet domain={domains.data?.find((d) => d.status === 'SUCCESS')?.name} />
          </EmptyState>
        ))}
      {log.data && log.data.data.length > 0 && estimatedTotal !== undefined && (
        <p className="muted small" data-testid="email-estimate">
          {filtered ? 'Matching: ' : 'In total: '}
          {cursors.length === 0 && !log.data.nextCursor
            ? `${formatNumber(estimatedTotal)} email${estimatedTotal === 1 ? '' : 's'}`
            : `${aboutEmails(estimatedTotal)} (an estimate from the database's statistics, not an exact count)`}
        </p>
      )}
      {log.data && log.data.data.length > 0 && (
        <DataTable caption="Emails, newest first" columns={['Status', 'Subject', 'To', 'Source', 'Domain', 'Created']}>
          {log.data.data.map((e) => (
            <tr key={e.id}>
              <td>
                <StatusBadge status={e.latestStatus} />
                {e.latestStatus === 'SCHEDULED' && e.scheduledAt && <div className="muted small">for {formatDateTime(e.scheduledAt)}</div>}
              </td>
              <td className="truncate">
                <Link to={`${base}/emails/${e.id}`}>{e.subject || '(no subject)'}</Link>
              </td>
              <td className="truncate">{e.to.join(', ')}</td>
              <td>{EMAIL_SOURCE_LABELS[e.source]}</td>
              <td>{domainName(e.domainId)}</td>
              <td title={formatDateTime(e.createdAt, true)}>{formatRelative(e.createdAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      <CursorPager
        page={cursors.length + 1}
        hasNext={!!log.data?.nextCursor}
        onPrevious={() => setCursors((c) => c.slice(0, -1))}
        onNext={() => setCursors((c) => [...c, log.data!.nextCursor!])}
        label="Email"
      />
    </>
  );
}
