import { Link } from 'react-router';
import { builtinEventNames } from '@mailrail/domain/events/builtin-events';
import type { EventsPage as Page } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime, formatRelative } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { CursorPager } from '../ui/Pager';
import { FilterForm, TimeRangeFields } from '../ui/FilterForm';
import { instant, useUrlFilters } from '../ui/url-filters';
import { eventSummary } from './event-summary';

// The team's events (GET /v1/events): custom ones sent with POST /v1/events and mailrail's built-in
// ones. The filters live in the URL, so a contact or an email can link here filtered.

const FILTERS = ['name', 'email', 'source', 'startDate', 'endDate'] as const;

export default function EventsPage() {
  const { base } = useTeam();
  const urlFilters = useUrlFilters(FILTERS);
  const { params, cursor, cursors, setCursors, filtered } = urlFilters;
  const query = {
    name: params.get('name') || undefined,
    email: params.get('email') || undefined,
    source: params.get('source') || undefined,
    startDate: instant(params.get('startDate')),
    endDate: instant(params.get('endDate')),
    limit: 50,
    cursor,
  };
  const events = useTeamQuery<Page>(['events'], '/v1/events', query, {
    refetchInterval: cursor ? false : 5000,
    placeholderData: (prev) => prev,
  });

  return (
    <>
      <PageHeader
        title="Events"
        description="What happened to your contacts, newest first: events your application sends (POST /api/v1/events) and mailrail's own (contact created, email delivered, opened, clicked...)."
      />
      <FilterForm label="Filter events" filters={urlFilters}>
        <Field label="Name">
          <input type="search" name="name" list="builtin-event-names" maxLength={100} defaultValue={params.get('name') ?? ''} />
        </Field>
        <datalist id="builtin-event-names">
          {builtinEventNames.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
        <Field label="Contact email">
          <input type="search" name="email" maxLength={320} defaultValue={params.get('email') ?? ''} placeholder="ann@example.org" />
        </Field>
        <Field label="Source">
          <select name="source" defaultValue={params.get('source') ?? ''}>
            <option value="">Any source</option>
            <option value="api">Sent through the API</option>
            <option value="mailrail">Built-in (mailrail)</option>
          </select>
        </Field>
        <TimeRangeFields params={params} />
      </FilterForm>
      <ErrorNotice error={events.error} />
      {events.isPending && <Loading />}
      {events.data && events.data.data.length === 0 && !cursor && (
        <EmptyState title={filtered ? 'No event matches these filters' : 'No events yet'}>
          <p>
            {filtered
              ? 'Widen the time range or clear the filters.'
              : 'Events appear when contacts are added, emails are delivered, opened or clicked, or your application sends them.'}
          </p>
        </EmptyState>
      )}
      {events.data && events.data.data.length > 0 && (
        <DataTable caption="Events, newest first" columns={['Event', 'Contact', 'Details', 'When']}>
          {events.data.data.map((e) => (
            <tr key={e.id}>
              <td>
                <Link to={`${base}/events/${e.id}`}>
                  <code>{e.name}</code>
                </Link>{' '}
                {e.source === 'mailrail' && <span className="badge badge-neutral">built-in</span>}
              </td>
              <td className="truncate">{e.contactEmail ?? <span className="muted">deleted contact</span>}</td>
              <td className="truncate small" title={eventSummary(e)}>
                {eventSummary(e)}
              </td>
              <td title={formatDateTime(e.occurredAt, true)}>{formatRelative(e.occurredAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      <CursorPager
        page={cursors.length + 1}
        hasNext={!!events.data?.nextCursor}
        onPrevious={() => setCursors((c) => c.slice(0, -1))}
        onNext={() => setCursors((c) => [...c, events.data!.nextCursor!])}
        label="Event"
      />
    </>
  );
}
