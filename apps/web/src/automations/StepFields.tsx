import type { ContactBook, Template } from '../api/types';
import { Field } from '../ui/Field';
import { ConditionGroupEditor } from './ConditionGroupEditor';
import type { Issues, Loose, StepDraft } from './draft';

// The fields of one step, by type. A step of a type without fields here shows its summary only.

const UNITS: [number, string][] = [
  [86_400, 'days'],
  [3_600, 'hours'],
  [60, 'minutes'],
];

/** A number of seconds as a count and a unit (days, hours or minutes), whichever divides it. */
function DurationField({
  label,
  seconds,
  onChange,
  error,
}: {
  label: string;
  seconds: number;
  onChange: (s: number) => void;
  error?: string;
}) {
  const unit = UNITS.find(([size]) => seconds % size === 0)?.[0] ?? 60;
  return (
    <div className="duration-field">
      <Field label={label} error={error}>
        <input
          type="number"
          min={1}
          step={1}
          value={Math.max(1, Math.round(seconds / unit))}
          onChange={(e) => onChange(Math.max(1, Number(e.target.value) || 1) * unit)}
        />
      </Field>
      <Field label="Unit">
        <select value={unit} onChange={(e) => onChange(Math.max(1, Math.round(seconds / unit)) * Number(e.target.value))}>
          {UNITS.map(([size, name]) => (
            <option key={size} value={size}>
              {name}
            </option>
          ))}
        </select>
      </Field>
    </div>
  );
}

/** Key/value rows (updateContact's properties, webhook's payload). */
function PairsField({
  legend,
  pairs,
  onChange,
  issues,
  path,
}: {
  legend: string;
  pairs: Loose;
  onChange: (p: Loose) => void;
  issues: Issues;
  path: (string | number)[];
}) {
  const entries = Object.entries(pairs);
  const set = (list: [string, unknown][]) => onChange(Object.fromEntries(list));
  return (
    <fieldset className="pairs">
      <legend>{legend}</legend>
      {entries.map(([k, v], i) => (
        <div key={i} className="pair-row" role="group" aria-label={`${legend}, row ${i + 1}`}>
          <Field label="Property">
            <input
              value={k}
              maxLength={128}
              autoComplete="off"
              onChange={(e) => set(entries.map((x, j) => (j === i ? [e.target.value, x[1]] : x)))}
            />
          </Field>
          <Field label="Value">
            <input
              value={v === null ? '' : String(v)}
              maxLength={1000}
              autoComplete="off"
              onChange={(e) => set(entries.map((x, j) => (j === i ? [x[0], e.target.value] : x)))}
            />
          </Field>
          <button
            type="button"
            className="btn btn-small btn-danger"
            aria-label={`Remove ${legend.toLowerCase()} row ${i + 1}`}
            onClick={() => set(entries.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      {issues.at(...path) && <p className="field-error">{issues.at(...path)}</p>}
      <button
        type="button"
        className="btn btn-small"
        onClick={() => set([...entries, ['', '']])}
        disabled={entries.length >= 50 || entries.some(([k]) => k === '')}
      >
        Add a property
      </button>
    </fieldset>
  );
}

export function StepFields({
  step,
  index,
  onChange,
  issues,
  books,
  templates,
}: {
  step: StepDraft;
  index: number;
  onChange: (s: StepDraft) => void;
  issues: Issues;
  books: ContactBook[];
  templates: Template[];
}) {
  const at = (field: string) => issues.at('steps', index, field);
  const set = (patch: Loose) => {
    const next = { ...step, ...patch } as StepDraft;
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete next[k];
    onChange(next);
  };
  const text = (field: string) => (typeof step[field] === 'string' ? (step[field] as string) : '');
  switch (step.type) {
    case 'sendEmail': {
      const usesTemplate = step.templateId !== undefined;
      return (
        <>
          <Field label="From" error={at('from')} hint="A sender on one of your verified domains, e.g. Team <hello@example.com>">
            <input value={text('from')} onChange={(e) => set({ from: e.target.value })} maxLength={320} required autoComplete="off" />
          </Field>
          <Field label="Content">
            <select
              value={usesTemplate ? 'template' : 'html'}
              onChange={(e) =>
                e.target.value === 'template'
                  ? set({ templateId: templates[0]?.id ?? '', subject: undefined, html: undefined })
                  : set({ templateId: undefined, subject: '', html: '' })
              }
            >
              <option value="html">Write a subject and HTML here</option>
              <option value="template">Use a template</option>
            </select>
          </Field>
          {usesTemplate ? (
            <Field label="Template" error={at('templateId')}>
              <select value={text('templateId')} onChange={(e) => set({ templateId: e.target.value })} required>
                <option value="">Choose a template…</option>
                {templates.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            </Field>
          ) : (
            <>
              <Field
                label="Subject"
                error={at('subject')}
                hint="{{firstName}}, {{email}}, contact properties by name, {{event_<property>}}"
              >
                <input
                  value={text('subject')}
                  onChange={(e) => set({ subject: e.target.value })}
                  maxLength={998}
                  required
                  autoComplete="off"
                />
              </Field>
              <Field label="HTML" error={at('html')}>
                <textarea value={text('html')} onChange={(e) => set({ html: e.target.value })} rows={5} required />
              </Field>
            </>
          )}
        </>
      );
    }
    case 'wait': {
      const untilTime = step.untilTime !== undefined;
      return (
        <>
          <Field label="Wait" error={at('seconds')}>
            <select
              value={untilTime ? 'time' : 'duration'}
              onChange={(e) =>
                e.target.value === 'time'
                  ? set({ seconds: undefined, untilTime: '09:00' })
                  : set({ untilTime: undefined, timezoneProperty: undefined, seconds: 86_400 })
              }
            >
              <option value="duration">for a length of time</option>
              <option value="time">until a time of day, in the contact's time zone</option>
            </select>
          </Field>
          {untilTime ? (
            <>
              <Field label="Time of day" error={at('untilTime')} hint="24-hour, e.g. 09:00">
                <input type="time" value={text('untilTime')} onChange={(e) => set({ untilTime: e.target.value })} required />
              </Field>
              <Field
                label="Time zone property"
                error={at('timezoneProperty')}
                hint="The contact property holding an IANA time zone such as Europe/Paris; UTC when the contact has none"
              >
                <input
                  value={text('timezoneProperty')}
                  placeholder="timezone"
                  onChange={(e) => set({ timezoneProperty: e.target.value || undefined })}
                  maxLength={128}
                  autoComplete="off"
                />
              </Field>
            </>
          ) : (
            <DurationField label="How long" seconds={Number(step.seconds ?? 86_400)} onChange={(seconds) => set({ seconds })} />
          )}
        </>
      );
    }
    case 'waitForEvent':
      return (
        <>
          <Field label="Event name" error={at('event')} hint="An event of this contact, recorded after the wait begins">
            <input value={text('event')} onChange={(e) => set({ event: e.target.value })} maxLength={100} required autoComplete="off" />
          </Field>
          <DurationField
            label="Wait at most"
            seconds={Number(step.timeoutSeconds ?? 86_400)}
            onChange={(timeoutSeconds) => set({ timeoutSeconds })}
            error={at('timeoutSeconds')}
          />
        </>
      );
    case 'branch':
      return (
        <ConditionGroupEditor
          group={(step.condition as Loose) ?? { match: 'all', conditions: [] }}
          onChange={(condition) => set({ condition })}
          issues={issues}
          path={['steps', index, 'condition']}
          legend="The condition"
        />
      );
    case 'updateContact':
      return (
        <PairsField
          legend="Properties to set"
          pairs={(step.properties as Loose) ?? {}}
          onChange={(properties) => set({ properties })}
          issues={issues}
          path={['steps', index, 'properties']}
        />
      );
    case 'webhook':
      return (
        <PairsField
          legend="Extra fields of the event"
          pairs={(step.payload as Loose) ?? {}}
          onChange={(payload) => set({ payload: Object.keys(payload).length ? payload : undefined })}
          issues={issues}
          path={['steps', index, 'payload']}
        />
      );
    case 'addToBook':
    case 'removeFromBook':
      return (
        <Field label="Contact book" error={at('contactBookId')}>
          <select value={text('contactBookId')} onChange={(e) => set({ contactBookId: e.target.value })} required>
            <option value="">Choose a book…</option>
            {books.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
          </select>
        </Field>
      );
    default:
      return null;
  }
}
