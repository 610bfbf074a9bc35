import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client';
import type { Automation, AutomationDryRun } from '../api/types';
import { useTeam } from '../session/session';
import { Field } from '../ui/Field';
import { issuesOf } from './draft';
import { formatDateTime } from '../ui/format';
import { detailWords, outcomeWords, stepLabel, stepTypeWords } from './words';

// The path one contact would take through the current version (POST /v1/automations/{id}/dry-run),
// decided by the runtime's own rules on the contact as stored now, writing nothing.

export function DryRun({ automation }: { automation: Automation }) {
  const { base } = useTeam();
  const [contact, setContact] = useState('');
  const [arriving, setArriving] = useState('');
  const run = useMutation({
    mutationFn: () =>
      api.post<AutomationDryRun>(`${base}/v1/automations/${automation.id}/dry-run`, {
        ...(contact.includes('@') ? { email: contact.trim() } : { contactId: contact.trim() }),
        arrivingEvents: arriving
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      }),
  });
  const issues = issuesOf(run.error);
  const contactError = issues.at('email') ?? issues.at('contactId');
  return (
    <section className="card stack" aria-labelledby="dry-run-h">
      <h2 id="dry-run-h">Dry run</h2>
      <p className="muted small">
        The path a contact would take through version {automation.version}, as they are stored now. Nothing is sent or changed.
      </p>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          run.mutate();
        }}
      >
        <Field label="Contact email or id" error={contactError}>
          <input value={contact} onChange={(e) => setContact(e.target.value)} required maxLength={320} autoComplete="off" />
        </Field>
        <Field label="Events that arrive (optional)" hint="Comma-separated; wait-for-event steps for other events time out">
          <input value={arriving} onChange={(e) => setArriving(e.target.value)} maxLength={2000} autoComplete="off" />
        </Field>
        <button type="submit" className="btn btn-primary" disabled={run.isPending}>
          {run.isPending ? 'Working…' : 'Show the path'}
        </button>
      </form>
      {run.error && !contactError && (
        <div className="notice notice-error" role="alert">
          {run.error.message}
        </div>
      )}
      {run.data && (
        <div className="dry-run-result" aria-live="polite">
          <p>
            <strong>{run.data.enters ? 'Would enter' : 'Would not enter'}</strong>{' '}
            {run.data.why === 'no filter' ? '(the trigger has no filter)' : `(${run.data.why})`}
          </p>
          {run.data.path.length > 0 && (
            <ol className="timeline">
              {run.data.path.map((p) => (
                <li key={p.stepId}>
                  <div className="timeline-head">
                    <strong>{stepTypeWords(p.type)}</strong> <span className="muted small">“{p.stepId}”</span>
                    <span>{outcomeWords(p.outcome)}</span>
                    <time dateTime={p.at}>{formatDateTime(p.at)}</time>
                  </div>
                  <p className="small">
                    {detailWords(p.detail, (iso) => formatDateTime(iso))}.{' '}
                    {p.nextStepId ? `Then: ${stepLabel(automation.steps, p.nextStepId)}` : 'Then the run ends.'}
                  </p>
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
