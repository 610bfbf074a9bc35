import type { ReactNode } from 'react';
import { Field } from '../ui/Field';
import type { Issues, Loose } from './draft';
import { SegmentSelect } from './SegmentSelect';
import { useNames } from './useNames';
import { conditionWords, EMAIL_ACTIVITY, operatorTakesValue, operatorWords } from './words';

// A group of conditions (all or any), as a branch's condition or an event trigger's filter. Each
// source of condition has an editor in CONDITION_EDITORS; a condition of a source without one (a
// kind the API has and this dashboard does not) is shown in words, kept as it is, and may be removed.

const PROPERTY_OPERATORS = ['equals', 'notEquals', 'contains', 'exists', 'notExists', 'gt', 'gte', 'lt', 'lte'];

interface ConditionEditor {
  label: string;
  blank: () => Loose;
  Fields: (p: { condition: Loose; onChange: (c: Loose) => void; issues: Issues; path: (string | number)[] }) => ReactNode;
}

const propertyEditor = (source: 'contact' | 'event', label: string, fieldHint: string): ConditionEditor => ({
  label,
  blank: () => ({ source, field: '', operator: 'equals', value: '' }),
  Fields: ({ condition, onChange, issues, path }) => (
    <>
      <Field label={source === 'contact' ? 'Contact field' : 'Event property'} error={issues.at(...path, 'field')} hint={fieldHint}>
        <input
          value={String(condition.field ?? '')}
          onChange={(e) => onChange({ ...condition, field: e.target.value })}
          maxLength={128}
          required
          autoComplete="off"
        />
      </Field>
      <Field label="Test">
        <select
          value={String(condition.operator)}
          onChange={(e) => {
            const { value, ...rest } = condition;
            onChange(
              operatorTakesValue(e.target.value)
                ? { ...rest, operator: e.target.value, value: value ?? '' }
                : { ...rest, operator: e.target.value },
            );
          }}
        >
          {PROPERTY_OPERATORS.map((op) => (
            <option key={op} value={op}>
              {operatorWords(op)}
            </option>
          ))}
        </select>
      </Field>
      {operatorTakesValue(String(condition.operator)) && (
        <Field label="Value" error={issues.at(...path, 'value')}>
          <input
            value={String(condition.value ?? '')}
            onChange={(e) => onChange({ ...condition, value: e.target.value })}
            maxLength={1000}
            autoComplete="off"
          />
        </Field>
      )}
    </>
  ),
});

const segmentEditor: ConditionEditor = {
  label: 'Membership of a segment',
  blank: () => ({ source: 'segment', segmentId: '', operator: 'in' }),
  Fields: function SegmentFields({ condition, onChange, issues, path }) {
    const { segments } = useNames();
    return (
      <>
        <Field label="The contact">
          <select value={String(condition.operator)} onChange={(e) => onChange({ ...condition, operator: e.target.value })}>
            <option value="in">is in</option>
            <option value="notIn">is not in</option>
          </select>
        </Field>
        <Field label="Segment" error={issues.at(...path, 'segmentId')}>
          <SegmentSelect
            value={String(condition.segmentId ?? '')}
            segments={segments}
            onChange={(segmentId) => onChange({ ...condition, segmentId })}
          />
        </Field>
      </>
    );
  },
};

const DEFAULT_ACTIVITY_DAYS = 30;

const emailActivityEditor: ConditionEditor = {
  label: 'Email activity',
  blank: () => ({ source: 'emailActivity', operator: 'openedWithin', value: DEFAULT_ACTIVITY_DAYS }),
  Fields: function EmailActivityFields({ condition, onChange, issues, path }) {
    const { campaigns } = useNames();
    const takes = EMAIL_ACTIVITY[String(condition.operator)]?.takes ?? 'days';
    const value = String(condition.value ?? '');
    return (
      <>
        <Field label="The contact">
          <select
            className="select-wide"
            value={String(condition.operator)}
            onChange={(e) => {
              const operator = e.target.value;
              // Days and a campaign id are not interchangeable: a change of kind starts the value afresh.
              const same = EMAIL_ACTIVITY[operator].takes === takes;
              onChange({
                ...condition,
                operator,
                value: same ? condition.value : EMAIL_ACTIVITY[operator].takes === 'days' ? DEFAULT_ACTIVITY_DAYS : '',
              });
            }}
          >
            {Object.entries(EMAIL_ACTIVITY).map(([op, activity]) => (
              <option key={op} value={op}>
                {`${activity.words} ${activity.takes === 'days' ? 'N days' : '…'}`}
              </option>
            ))}
          </select>
        </Field>
        {takes === 'days' ? (
          <Field label="Days (1 to 365)" error={issues.at(...path, 'value')}>
            <input
              type="number"
              inputMode="numeric"
              min={1}
              max={365}
              step={1}
              value={value}
              onChange={(e) => onChange({ ...condition, value: e.target.value === '' ? '' : Number(e.target.value) })}
              required
            />
          </Field>
        ) : (
          <Field label="Campaign" error={issues.at(...path, 'value')}>
            <select value={value} onChange={(e) => onChange({ ...condition, value: e.target.value })} required>
              <option value="">Choose a campaign…</option>
              {campaigns.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
              {value && !campaigns.some((c) => c.id === value) && <option value={value}>{value}</option>}
            </select>
          </Field>
        )}
      </>
    );
  },
};

/** The sources this dashboard edits; a new kind of condition adds its editor here. */
export const CONDITION_EDITORS: Record<string, ConditionEditor> = {
  contact: propertyEditor('contact', 'A field of the contact', 'email, firstName, lastName, subscribed, or properties.<name>'),
  event: propertyEditor('event', "A property of the trigger's event", 'A property name; dots reach into nested ones (plan.tier)'),
  segment: segmentEditor,
  emailActivity: emailActivityEditor,
};

export function ConditionGroupEditor({
  group,
  onChange,
  issues,
  path,
  legend,
}: {
  group: Loose;
  onChange: (g: Loose) => void;
  issues: Issues;
  path: (string | number)[];
  legend: string;
}) {
  const conditions = Array.isArray(group.conditions) ? (group.conditions as Loose[]) : [];
  const setAt = (i: number, c: Loose) => onChange({ ...group, conditions: conditions.map((x, j) => (j === i ? c : x)) });
  const groupProblems = issues.at(...path) ?? issues.at(...path, 'conditions');
  return (
    <fieldset className="condition-group">
      <legend>{legend}</legend>
      <Field label="Match">
        <select value={group.match === 'any' ? 'any' : 'all'} onChange={(e) => onChange({ ...group, match: e.target.value })}>
          <option value="all">all of the conditions</option>
          <option value="any">any of the conditions</option>
        </select>
      </Field>
      {conditions.map((c, i) => {
        const editor = CONDITION_EDITORS[String(c.source)];
        const cpath = [...path, 'conditions', i];
        const problems = [issues.at(...cpath)].filter((m): m is string => !!m);
        return (
          <div key={i} className="condition-row" role="group" aria-label={`Condition ${i + 1}`}>
            {editor ? (
              <>
                <Field label="About">
                  <select value={String(c.source)} onChange={(e) => setAt(i, CONDITION_EDITORS[e.target.value].blank())}>
                    {Object.entries(CONDITION_EDITORS).map(([source, ed]) => (
                      <option key={source} value={source}>
                        {ed.label}
                      </option>
                    ))}
                  </select>
                </Field>
                <editor.Fields condition={c} onChange={(next) => setAt(i, next)} issues={issues} path={cpath} />
              </>
            ) : (
              <p className="condition-readonly">
                {conditionWords(c)} <span className="muted small">(edited through the API)</span>
              </p>
            )}
            <button
              type="button"
              className="btn btn-small btn-danger"
              onClick={() => onChange({ ...group, conditions: conditions.filter((_, j) => j !== i) })}
              disabled={conditions.length === 1}
              aria-label={`Remove condition ${i + 1}`}
            >
              Remove
            </button>
            {problems.map((m) => (
              <p key={m} className="field-error">
                {m}
              </p>
            ))}
          </div>
        );
      })}
      {groupProblems && <p className="field-error">{groupProblems}</p>}
      <button
        type="button"
        className="btn btn-small"
        onClick={() => onChange({ ...group, conditions: [...conditions, CONDITION_EDITORS.contact.blank()] })}
        disabled={conditions.length >= 20}
      >
        Add a condition
      </button>
    </fieldset>
  );
}
