import { Link, useParams } from 'react-router';
import type { Automation, AutomationRunLog } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { RunStatusBadge } from './RunsList';
import { detailWords, outcomeWords, stepLabel, stepTypeWords } from './words';

// One run (GET /v1/automations/{id}/runs/{runId}): each step it executed, what came of it, why,
// and where it went next, with the email it wrote and its contact.

export default function RunPage() {
  const { base } = useTeam();
  const { automationId, runId } = useParams() as { automationId: string; runId: string };
  const query = useTeamQuery<AutomationRunLog>(
    ['automations', automationId, 'run', runId],
    `/v1/automations/${encodeURIComponent(automationId)}/runs/${encodeURIComponent(runId)}`,
  );
  const automation = useTeamQuery<Automation>(['automations', automationId], `/v1/automations/${encodeURIComponent(automationId)}`);
  // The run may be on an earlier version: a step of it that the current one lacks keeps its id.
  const label = (id: string) =>
    stepLabel(automation.data && automation.data.version === query.data?.run.version ? automation.data.steps : [], id);
  const r = query.data?.run;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/automations/${automationId}`}>← {automation.data?.name ?? 'The automation'}</Link>
      </p>
      <ErrorNotice error={query.error} />
      {query.isPending && <Loading />}
      {r && query.data && (
        <>
          <PageHeader title={`Run of ${r.contactEmail ?? 'a deleted contact'}`} description={<RunStatusBadge status={r.status} />} />
          <section className="card" aria-labelledby="run-h">
            <h2 id="run-h">Details</h2>
            <dl className="fields event-fields">
              <dt>Contact</dt>
              <dd>
                {r.contactEmail && r.contactBookId ? (
                  <Link to={`${base}/contact-books/${r.contactBookId}?search=${encodeURIComponent(r.contactEmail)}`}>{r.contactEmail}</Link>
                ) : (
                  <span className="muted">deleted ({r.contactId})</span>
                )}
              </dd>
              <dt>Version</dt>
              <dd>{r.version} (a run finishes on the version it entered on)</dd>
              <dt>Entered</dt>
              <dd>{formatDateTime(r.enteredAt)}</dd>
              {r.stepId && (
                <>
                  <dt>Next step</dt>
                  <dd>
                    {label(r.stepId)}
                    {r.waitingFor ? `, waiting for the event ${r.waitingFor}` : ''}
                    {r.dueAt ? `, ${r.waitingFor ? 'until' : 'at'} ${formatDateTime(r.dueAt)}` : ''}
                  </dd>
                </>
              )}
              {r.finishedAt && (
                <>
                  <dt>Ended</dt>
                  <dd>
                    {formatDateTime(r.finishedAt)}: {outcomeWords(r.exitReason)}
                  </dd>
                </>
              )}
            </dl>
          </section>
          <section className="card" aria-labelledby="log-h">
            <h2 id="log-h">Steps executed</h2>
            {query.data.log.length === 0 ? (
              <p className="muted">No step has run yet.</p>
            ) : (
              <ol className="timeline run-log">
                {query.data.log.map((l) => (
                  <li key={l.seq}>
                    <div className="timeline-head">
                      <strong>
                        {stepTypeWords(l.type)} <span className="muted small">“{l.stepId}”</span>
                      </strong>
                      <time dateTime={l.at}>{formatDateTime(l.at)}</time>
                    </div>
                    <p>
                      <span className="outcome">{outcomeWords(l.outcome)}</span>: {detailWords(l.detail, (iso) => formatDateTime(iso))}
                    </p>
                    <p className="small muted">{l.nextStepId ? `Then: ${label(l.nextStepId)}` : 'The run ended here'}</p>
                    {l.emailId && (
                      <p className="small">
                        <Link to={`${base}/emails/${l.emailId}`}>Open the email it sent</Link>
                      </p>
                    )}
                  </li>
                ))}
              </ol>
            )}
          </section>
        </>
      )}
    </>
  );
}
