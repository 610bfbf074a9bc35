import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { successors } from '@mailrail/domain/automations/successors';
import { api } from '../api/client';
import type { Automation, AutomationStepCounts, Domain, Template } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatNumber } from '../ui/format';
import { useToast } from '../ui/toast';
import { incomingPaths, issuesOf, newStep, patchBody, type Draft, type Issues, type Loose, type StepDraft } from './draft';
import { StepFields } from './StepFields';
import { TriggerEditorFields } from './TriggerEditor';
import { useNames } from './useNames';
import { STEP_TYPES, stepSummary, stepTypeWords } from './words';

// The builder: the trigger at the top, then the steps as a vertical flow in list order. A step
// reached only by a labelled path (a branch's yes or no, an event's arrival or timeout) is drawn
// indented under its label. Every action is a button (move up and down, remove, add), so the
// keyboard does everything; Save writes the next version through PATCH.

const END = '__end';

const GOES_TO_LABEL: Record<string, Record<string, string>> = {
  branch: { then: 'If the condition holds, go to', else: 'Otherwise, go to' },
  waitForEvent: { next: 'When the event arrives, go to', timeoutNext: 'When it times out, go to' },
};

function GoesTo({
  steps,
  index,
  field,
  onChange,
  error,
}: {
  steps: StepDraft[];
  index: number;
  field: string;
  onChange: (v: string | null | undefined) => void;
  error?: string;
}) {
  const step = steps[index];
  const raw = step[field];
  const following = steps[index + 1]?.id;
  // The default is kept as a default (it follows the list when steps move), so it is named apart from "end the run".
  const dflt =
    field === 'timeoutNext'
      ? 'end the run (default)'
      : following
        ? `the next step in the list (${following})`
        : 'the next step in the list (none: the run ends)';
  const value = raw === undefined || (raw === null && field === 'timeoutNext') ? '' : raw === null ? END : String(raw);
  return (
    <Field label={GOES_TO_LABEL[step.type]?.[field] ?? 'Then go to'} error={error}>
      <select value={value} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value === END ? null : e.target.value)}>
        <option value="">{dflt}</option>
        {field !== 'timeoutNext' && <option value={END}>end the run</option>}
        {steps
          .filter((s) => s.id !== step.id)
          .map((s) => (
            <option key={s.id} value={s.id}>
              step “{s.id}” ({stepTypeWords(s.type)})
            </option>
          ))}
      </select>
    </Field>
  );
}

function StepCounts({ counts }: { counts?: AutomationStepCounts['data'][number] }) {
  const c = counts ?? { entered: 0, waiting: 0, done: 0, exited: 0 };
  return (
    <dl className="step-counts" aria-label="Contacts at this step">
      <div>
        <dt>entered</dt>
        <dd>{formatNumber(c.entered)}</dd>
      </div>
      <div>
        <dt>here now</dt>
        <dd>{formatNumber(c.waiting)}</dd>
      </div>
      <div>
        <dt>done</dt>
        <dd>{formatNumber(c.done)}</dd>
      </div>
      <div>
        <dt>left here</dt>
        <dd>{formatNumber(c.exited)}</dd>
      </div>
    </dl>
  );
}

export function FlowEditor({ automation }: { automation: Automation }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const showToast = useToast();
  const initial = (): Draft => ({
    name: automation.name,
    trigger: automation.trigger as Loose,
    reEntry: automation.reEntry as Loose,
    goal: automation.goal?.event ?? '',
    steps: automation.steps as StepDraft[],
  });
  const [draft, setDraft] = useState<Draft>(initial);
  const [adding, setAdding] = useState('sendEmail');
  // Steps added since the page opened start unfolded, ready to fill in.
  const [added, setAdded] = useState<string[]>([]);
  const { books, names } = useNames();
  const templates = useTeamQuery<{ data: Template[] }>(['templates'], '/v1/templates', { page: 1, limit: 100 });
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  const counts = useTeamQuery<AutomationStepCounts>(['automations', automation.id, 'steps'], `/v1/automations/${automation.id}/steps`);
  const countOf = new Map((counts.data?.data ?? []).map((c) => [c.stepId, c]));
  const save = useMutation({
    mutationFn: () => api.patch<Automation>(`${base}/v1/automations/${automation.id}`, patchBody(draft)),
    onSuccess: async (a) => {
      showToast({ title: `Saved as version ${a.version}` });
      await qc.invalidateQueries({ queryKey: teamKey(team.id, 'automations') });
    },
  });
  const issues: Issues = issuesOf(save.error);
  const dirty = JSON.stringify(patchBody(draft)) !== JSON.stringify(patchBody(initial()));
  const paths = incomingPaths(draft.steps);
  const setSteps = (steps: StepDraft[]) => setDraft({ ...draft, steps });
  const setStep = (i: number, s: StepDraft) => setSteps(draft.steps.map((x, j) => (j === i ? s : x)));
  const move = (i: number, by: number) => {
    const steps = [...draft.steps];
    [steps[i], steps[i + by]] = [steps[i + by], steps[i]];
    setSteps(steps);
    // Keep the focus on the moved step's button, now at its new place.
    requestAnimationFrame(() => document.getElementById(`step-${steps[i + by].id}`)?.focus());
  };
  const defaultFrom = domains.data?.find((d) => d.status === 'SUCCESS')?.name;
  const reEntryMode = String(draft.reEntry.mode ?? 'once');
  const oldCounts = (counts.data?.data ?? []).filter((c) => !draft.steps.some((s) => s.id === c.stepId));

  return (
    <form
      className="flow-editor stack"
      aria-label="Automation builder"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <section className="card stack" aria-labelledby="trigger-h">
        <h2 id="trigger-h">Trigger</h2>
        <Field label="Name" error={issues.at('name')}>
          <input
            value={draft.name}
            onChange={(e) => setDraft({ ...draft, name: e.target.value })}
            maxLength={255}
            required
            autoComplete="off"
          />
        </Field>
        <TriggerEditorFields
          trigger={draft.trigger}
          onChange={(trigger) => setDraft({ ...draft, trigger })}
          issues={issues}
          books={books}
          names={names}
        />
        <div className="two-cols-wrap">
          <Field label="A contact may enter" error={issues.at('reEntry') ?? issues.at('reEntry', 'periodSeconds')}>
            <select
              value={reEntryMode}
              onChange={(e) =>
                setDraft({
                  ...draft,
                  reEntry:
                    e.target.value === 'oncePerPeriod' ? { mode: 'oncePerPeriod', periodSeconds: 30 * 86_400 } : { mode: e.target.value },
                })
              }
            >
              <option value="once">once, ever</option>
              <option value="everyTime">every time the trigger happens</option>
              <option value="oncePerPeriod">at most once per period</option>
            </select>
          </Field>
          {reEntryMode === 'oncePerPeriod' && (
            <Field label="Period, in days">
              <input
                type="number"
                min={1}
                max={366}
                value={Math.max(1, Math.round(Number(draft.reEntry.periodSeconds) / 86_400))}
                onChange={(e) =>
                  setDraft({
                    ...draft,
                    reEntry: { mode: 'oncePerPeriod', periodSeconds: Math.max(1, Number(e.target.value) || 1) * 86_400 },
                  })
                }
              />
            </Field>
          )}
          <Field
            label="Goal event (optional)"
            error={issues.at('goal', 'event')}
            hint="When the contact records it, their run ends as completed, e.g. order.paid"
          >
            <input value={draft.goal} onChange={(e) => setDraft({ ...draft, goal: e.target.value })} maxLength={100} autoComplete="off" />
          </Field>
        </div>
      </section>

      <section aria-labelledby="steps-h" className="stack">
        <h2 id="steps-h">Steps</h2>
        <p className="muted small">
          Counts are over every version: <strong>entered</strong> reached the step, <strong>here now</strong> are in it (waiting, or about
          to run it), <strong>done</strong> carried it out, <strong>left here</strong> ended there (exit step, goal reached, unsubscribed,
          failed).
        </p>
        {counts.error && <ErrorNotice error={counts.error} prefix="Counts unavailable" />}
        <ol className="flow">
          {draft.steps.map((s, i) => {
            const path = paths.get(s.id);
            const stepProblems = [issues.at('steps', i)].filter((m): m is string => !!m);
            const links = successors(draft.steps, i);
            return (
              <li key={s.id} className={path?.indent ? 'flow-step flow-indent' : 'flow-step'}>
                {path && <p className="flow-path">{path.label}</p>}
                <article className="card step-card" aria-labelledby={`step-${s.id}-h`}>
                  <header className="step-head">
                    <h3 id={`step-${s.id}-h`}>
                      {i + 1}. {stepTypeWords(s.type)} <span className="muted small">“{s.id}”</span>
                    </h3>
                    {counts.data && <StepCounts counts={countOf.get(s.id)} />}
                  </header>
                  <p className="step-summary">{stepSummary(s, names)}</p>
                  <details open={added.includes(s.id) || issues.under('steps', i).length > 0 || undefined}>
                    <summary id={`step-${s.id}`}>Edit step {i + 1}</summary>
                    <div className="stack step-fields">
                      <StepFields
                        step={s}
                        index={i}
                        onChange={(n) => setStep(i, n)}
                        issues={issues}
                        books={books}
                        templates={templates.data?.data ?? []}
                      />
                      {links.map(({ field }) => (
                        <GoesTo
                          key={field}
                          steps={draft.steps}
                          index={i}
                          field={field}
                          error={issues.at('steps', i, field)}
                          onChange={(v) => {
                            const next = { ...s } as StepDraft;
                            if (v === undefined) delete next[field];
                            else next[field] = v;
                            setStep(i, next);
                          }}
                        />
                      ))}
                    </div>
                  </details>
                  {stepProblems.map((m) => (
                    <p key={m} className="field-error">
                      {m}
                    </p>
                  ))}
                  <div className="step-actions">
                    <button
                      type="button"
                      className="btn btn-small"
                      onClick={() => move(i, -1)}
                      disabled={i === 0}
                      aria-label={`Move step ${i + 1} up`}
                    >
                      Move up
                    </button>
                    <button
                      type="button"
                      className="btn btn-small"
                      onClick={() => move(i, 1)}
                      disabled={i === draft.steps.length - 1}
                      aria-label={`Move step ${i + 1} down`}
                    >
                      Move down
                    </button>
                    <button
                      type="button"
                      className="btn btn-small btn-danger"
                      onClick={() => setSteps(draft.steps.filter((_, j) => j !== i))}
                      disabled={draft.steps.length === 1}
                      aria-label={`Remove step ${i + 1}`}
                    >
                      Remove
                    </button>
                  </div>
                </article>
              </li>
            );
          })}
        </ol>
        <div className="inline-form">
          <Field label="New step">
            <select value={adding} onChange={(e) => setAdding(e.target.value)}>
              {STEP_TYPES.map(([type, label]) => (
                <option key={type} value={type}>
                  {label}
                </option>
              ))}
            </select>
          </Field>
          <button
            type="button"
            className="btn"
            onClick={() => {
              const step = newStep(adding, draft.steps, defaultFrom ? `hello@${defaultFrom}` : '');
              setSteps([...draft.steps, step]);
              setAdded([...added, step.id]);
              requestAnimationFrame(() => document.getElementById(`step-${step.id}`)?.focus());
            }}
            disabled={draft.steps.length >= 100}
          >
            Add the step at the end
          </button>
        </div>
        {oldCounts.length > 0 && (
          <p className="muted small">
            Steps of earlier versions, where contacts still are or were:{' '}
            {oldCounts.map((c) => `“${c.stepId}” (${formatNumber(c.waiting)} here now, ${formatNumber(c.entered)} entered)`).join(', ')}
          </p>
        )}
      </section>

      <div className={dirty ? 'card save-bar save-bar-dirty' : 'card save-bar'}>
        <p className="small">
          You are editing version {automation.version}. Saving writes version {automation.version + 1}: contacts who enter from then on
          follow it; contacts already on their way finish on the version they started on.
        </p>
        {save.error instanceof Error && (
          <div className="notice notice-error" role="alert">
            {issues.count > 0
              ? `Not saved: ${issues.count === 1 ? 'one field needs' : `${issues.count} fields need`} a change, marked in red above (${save.error.message.replace(/^Invalid request body: [^:]*: /, '')}).`
              : `Not saved: ${save.error.message}`}
          </div>
        )}
        <div className="actions">
          <button type="submit" className="btn btn-primary" disabled={!dirty || save.isPending}>
            {save.isPending ? 'Saving…' : dirty ? 'Save as a new version' : 'No changes to save'}
          </button>
          {dirty && (
            <button type="button" className="btn" onClick={() => (save.reset(), setDraft(initial()))}>
              Discard changes
            </button>
          )}
        </div>
      </div>
    </form>
  );
}
