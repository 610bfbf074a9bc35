import { useState } from 'react';
import { Link } from 'react-router';
import type { Automation, AutomationRunsPage } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { StatusBadge } from '../ui/StatusBadge';
import { outcomeWords, stepLabel } from './words';

// The automation's runs (GET /v1/automations/{id}/runs), newest entry first, a page at a time by
// the cursor the API gives; each opens its run log.

const RUN_STATUS: Record<string, { tone: string; label: string }> = {
  ACTIVE: { tone: 'PENDING', label: 'in progress' },
  COMPLETED: { tone: 'SUCCESS', label: 'completed' },
  EXITED: { tone: 'CANCELLED', label: 'exited' },
  FAILED: { tone: 'FAILED', label: 'failed' },
};
export function RunStatusBadge({ status }: { status: string }) {
  const s = RUN_STATUS[status];
  return <StatusBadge status={s?.tone ?? status} label={s?.label} />;
}

export function RunsList({ automation }: { automation: Automation }) {
  const { base } = useTeam();
  const [status, setStatus] = useState('');
  // The cursors of the pages before this one: Previous pops, Next pushes.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const runs = useTeamQuery<AutomationRunsPage>(
    ['automations', automation.id, 'runs'],
    `/v1/automations/${automation.id}/runs`,
    { limit: 25, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) },
    { placeholderData: (prev) => prev },
  );
  return (
    <section aria-labelledby="runs-h" className="stack">
      <h2 id="runs-h">Runs</h2>
      <div className="inline-form">
        <Field label="Status">
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.target.value);
              setCursors([]);
            }}
          >
            <option value="">All</option>
            {Object.entries(RUN_STATUS).map(([s, { label }]) => (
              <option key={s} value={s}>
                {label}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNotice error={runs.error} />
      {runs.isPending && <Loading />}
      {runs.data?.data.length === 0 && (
        <p className="muted">
          No runs{status ? ' with this status' : ''} yet: contacts enter when the trigger happens while the automation is active.
        </p>
      )}
      {!!runs.data?.data.length && (
        <DataTable caption="Runs, newest entry first" columns={['Contact', 'Status', 'Next step', 'When', 'Ended', 'Entered']}>
          {runs.data.data.map((r) => (
            <tr key={r.id}>
              <td>
                <Link
                  to={`${base}/automations/${automation.id}/runs/${r.id}`}
                  aria-label={`Run log of ${r.contactEmail ?? 'a deleted contact'}, entered ${formatDateTime(r.enteredAt)}`}
                >
                  {r.contactEmail ?? 'deleted contact'}
                </Link>
              </td>
              <td>
                <RunStatusBadge status={r.status} />
              </td>
              <td>
                {r.stepId
                  ? `${stepLabel(r.version === automation.version ? automation.steps : [], r.stepId)}${r.waitingFor ? `, waiting for ${r.waitingFor}` : ''}`
                  : '—'}
              </td>
              <td>{r.dueAt ? formatDateTime(r.dueAt) : '—'}</td>
              <td>{r.finishedAt ? `${outcomeWords(r.exitReason)}, ${formatDateTime(r.finishedAt)}` : '—'}</td>
              <td>{formatDateTime(r.enteredAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {(cursors.length > 0 || runs.data?.nextCursor) && (
        <div className="pager">
          <button type="button" className="btn" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer runs
          </button>
          <button
            type="button"
            className="btn"
            disabled={!runs.data?.nextCursor}
            onClick={() => runs.data?.nextCursor && setCursors([...cursors, runs.data.nextCursor])}
          >
            Older runs
          </button>
        </div>
      )}
    </section>
  );
}
