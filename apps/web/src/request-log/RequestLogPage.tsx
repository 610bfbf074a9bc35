import type { RequestLogPage as Page } from '../api/types';
import { useTeamQuery } from '../api/team-query';
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

// The team's request log (GET /api/v1/logs). The filters live in the URL, so the email page can
// link here filtered to the moment an email was created.

const FILTERS = ['status', 'path', 'apiKeyId', 'startDate', 'endDate'] as const;

const tone = (status: number) => (status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'good');

export default function RequestLogPage() {
  const urlFilters = useUrlFilters(FILTERS);
  const { params, cursor, cursors, setCursors, filtered, setFilters } = urlFilters;
  const query = {
    status: params.get('status') || undefined,
    path: params.get('path') || undefined,
    apiKeyId: params.get('apiKeyId') || undefined,
    startDate: instant(params.get('startDate')),
    endDate: instant(params.get('endDate')),
    limit: 50,
    cursor,
  };
  const log = useTeamQuery<Page>(['request-log'], '/v1/logs', query, {
    refetchInterval: cursor ? false : 5000,
    placeholderData: (prev) => prev,
  });

  const byKey = (id: number) => {
    const next = new URLSearchParams(params);
    next.set('apiKeyId', String(id));
    setFilters(next);
  };

  return (
    <>
      <PageHeader
        title="Request log"
        description="Every API request of the team with its answer, newest first. Entries appear a second or two after the request; bodies are redacted."
      />
      <FilterForm label="Filter requests" filters={urlFilters}>
        <Field label="Status">
          <select name="status" defaultValue={params.get('status') ?? ''}>
            <option value="">Any status</option>
            <option value="2xx">2xx success</option>
            <option value="4xx">4xx refused</option>
            <option value="5xx">5xx failed</option>
          </select>
        </Field>
        <Field label="Path starts with">
          <input type="search" name="path" defaultValue={params.get('path') ?? ''} placeholder="/api/v1/emails" />
        </Field>
        <Field label="Key id">
          <input type="number" min={1} name="apiKeyId" defaultValue={params.get('apiKeyId') ?? ''} />
        </Field>
        <TimeRangeFields params={params} />
      </FilterForm>
      <ErrorNotice error={log.error} />
      {log.isPending && <Loading />}
      {log.data && log.data.data.length === 0 && !cursor && (
        <EmptyState title={filtered ? 'No request matches these filters' : 'No requests yet'}>
          <p>{filtered ? 'Widen the time range or clear the filters.' : "Requests made with this team's API keys show up here."}</p>
        </EmptyState>
      )}
      {log.data && log.data.data.length > 0 && (
        <DataTable
          caption="Requests, newest first"
          columns={['Status', 'Request', 'Key', 'Error', { label: 'Duration', numeric: true }, 'Time']}
        >
          {log.data.data.map((e) => (
            <tr key={e.id}>
              <td>
                <span className={`badge badge-${tone(e.status)}`}>{e.status}</span>
              </td>
              <td>
                <details>
                  <summary>
                    <code>
                      {e.method} {e.path}
                    </code>
                  </summary>
                  <pre className="small request-body">{e.requestBody === null ? '(no body)' : JSON.stringify(e.requestBody, null, 2)}</pre>
                </details>
              </td>
              <td>
                {e.apiKey ? (
                  <button type="button" className="btn btn-small" onClick={() => byKey(e.apiKey!.id)} title="Only this key's requests">
                    {e.apiKey.name ?? `key ${e.apiKey.id} (deleted)`}
                  </button>
                ) : (
                  <span className="muted">dashboard</span>
                )}
              </td>
              <td className="truncate" title={e.error?.message}>
                {e.error ? `${e.error.code}: ${e.error.message}` : ''}
              </td>
              <td className="num">{e.durationMs} ms</td>
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
        label="Request"
      />
    </>
  );
}
