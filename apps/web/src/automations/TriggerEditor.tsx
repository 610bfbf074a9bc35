import type { ReactNode } from 'react';
import type { ContactBook } from '../api/types';
import { PROPERTY_TYPE_LABELS, useContactProperties } from '../contact-books/useContactProperties';
import { Field } from '../ui/Field';
import { ConditionGroupEditor } from './ConditionGroupEditor';
import type { Issues, Loose } from './draft';
import { SegmentSelect } from './SegmentSelect';
import { useNames } from './useNames';
import { triggerWords, type Names } from './words';

// What starts an automation. Each kind of trigger has an editor in TRIGGER_EDITORS; a trigger of a
// kind without one (added to the API after this dashboard) is shown in words and kept as it is.

interface TriggerEditor {
  label: string;
  blank: () => Loose;
  Fields: (p: { trigger: Loose; onChange: (t: Loose) => void; issues: Issues; books: ContactBook[] }) => ReactNode;
}

/** The kinds this dashboard edits; a new kind of trigger adds its editor here. */
export const TRIGGER_EDITORS: Record<string, TriggerEditor> = {
  event: {
    label: 'An event is recorded',
    blank: () => ({ type: 'event', event: '' }),
    Fields: ({ trigger, onChange, issues }) => (
      <>
        <Field
          label="Event name"
          error={issues.at('trigger', 'event')}
          hint="Custom (POST /api/v1/events) or built in, e.g. contact.subscribed"
        >
          <input
            value={String(trigger.event ?? '')}
            onChange={(e) => onChange({ ...trigger, event: e.target.value })}
            maxLength={100}
            required
            autoComplete="off"
          />
        </Field>
        {trigger.filter ? (
          <>
            <ConditionGroupEditor
              group={trigger.filter as Loose}
              onChange={(filter) => onChange({ ...trigger, filter })}
              issues={issues}
              path={['trigger', 'filter']}
              legend="Only when"
            />
            <button
              type="button"
              className="btn btn-small"
              onClick={() => {
                const { filter: _dropped, ...rest } = trigger;
                onChange(rest);
              }}
            >
              Remove the filter
            </button>
          </>
        ) : (
          <button
            type="button"
            className="btn btn-small"
            onClick={() =>
              onChange({
                ...trigger,
                filter: { match: 'all', conditions: [{ source: 'event', field: '', operator: 'equals', value: '' }] },
              })
            }
          >
            Add a filter
          </button>
        )}
      </>
    ),
  },
  contactAdded: {
    label: 'A contact is added to a book',
    blank: () => ({ type: 'contactAdded', contactBookId: '' }),
    Fields: ({ trigger, onChange, issues, books }) => (
      <Field label="Contact book" error={issues.at('trigger', 'contactBookId')}>
        <select
          value={String(trigger.contactBookId ?? '')}
          onChange={(e) => onChange({ ...trigger, contactBookId: e.target.value })}
          required
        >
          <option value="">Choose a book…</option>
          {books.map((b) => (
            <option key={b.id} value={b.id}>
              {b.name}
            </option>
          ))}
        </select>
      </Field>
    ),
  },
  segmentEntered: {
    label: 'A contact enters a segment',
    blank: () => ({ type: 'segmentEntered', segmentId: '' }),
    Fields: function SegmentEnteredFields({ trigger, onChange, issues }) {
      const { segments } = useNames();
      return (
        <Field
          label="Segment"
          error={issues.at('trigger', 'segmentId')}
          hint="A contact enrolls when it comes to match the segment; those already in it when the automation starts do not"
        >
          <SegmentSelect
            value={String(trigger.segmentId ?? '')}
            segments={segments}
            onChange={(segmentId) => onChange({ ...trigger, segmentId })}
          />
        </Field>
      );
    },
  },
  date: {
    label: 'A date in the contact comes round',
    blank: () => ({ type: 'date', contactBookId: '', property: 'createdAt', offsetDays: 0, time: '09:00' }),
    Fields: DateTriggerFields,
  },
};

/** The date trigger: a book, a date of its contacts (created, or a property), days before or after, a time in the contact's zone. */
function DateTriggerFields({
  trigger,
  onChange,
  issues,
  books,
}: {
  trigger: Loose;
  onChange: (t: Loose) => void;
  issues: Issues;
  books: ContactBook[];
}) {
  const bookId = String(trigger.contactBookId ?? '');
  const { properties } = useContactProperties(bookId);
  const property = String(trigger.property ?? '');
  const offset = typeof trigger.offsetDays === 'number' ? trigger.offsetDays : 0;
  const direction = offset < 0 ? 'before' : 'after';
  const setOffset = (days: number, dir: string) => onChange({ ...trigger, offsetDays: dir === 'before' ? -days : days });
  // An optional field left empty is left out, so the server's default applies.
  const setOptional = (key: 'time' | 'timezoneProperty', value: string) => {
    const { [key]: _dropped, ...rest } = trigger;
    onChange(value ? { ...rest, [key]: value } : rest);
  };
  return (
    <>
      <Field label="Contact book" error={issues.at('trigger', 'contactBookId')}>
        <select value={bookId} onChange={(e) => onChange({ ...trigger, contactBookId: e.target.value })} required>
          <option value="">Choose a book…</option>
          {books.map((b) => (
            <option key={b.id} value={b.id}>
              {b.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Date" error={issues.at('trigger', 'property')} hint="A property holding a date such as 2027-03-14">
        <select value={property} onChange={(e) => onChange({ ...trigger, property: e.target.value })} required>
          <option value="createdAt">The day the contact was created</option>
          {properties.map((p) => (
            <option key={p.name} value={`properties.${p.name}`}>
              Property {p.name} ({PROPERTY_TYPE_LABELS[p.type].toLowerCase()})
            </option>
          ))}
          {property !== 'createdAt' && !properties.some((p) => `properties.${p.name}` === property) && (
            <option value={property}>{property}</option>
          )}
        </select>
      </Field>
      <div className="two-cols-wrap">
        <Field label="Days from the date" error={issues.at('trigger', 'offsetDays')} hint="0 to 365; 0: on the date">
          <input
            type="number"
            inputMode="numeric"
            min={0}
            max={365}
            step={1}
            value={Math.abs(offset)}
            onChange={(e) => setOffset(Math.abs(Math.trunc(Number(e.target.value) || 0)), direction)}
            required
          />
        </Field>
        <Field label="Before or after">
          <select value={direction} onChange={(e) => setOffset(Math.abs(offset), e.target.value)}>
            <option value="after">after the date</option>
            <option value="before">before the date</option>
          </select>
        </Field>
      </div>
      <div className="two-cols-wrap">
        <Field label="Time of day" error={issues.at('trigger', 'time')} hint="In the contact's time zone; empty: 09:00">
          <input type="time" value={String(trigger.time ?? '')} onChange={(e) => setOptional('time', e.target.value)} />
        </Field>
        <Field
          label="Time zone property"
          error={issues.at('trigger', 'timezoneProperty')}
          hint="A contact property holding a zone such as Europe/Paris; empty: timezone; without one: UTC"
        >
          <input
            value={String(trigger.timezoneProperty ?? '')}
            onChange={(e) => setOptional('timezoneProperty', e.target.value)}
            maxLength={128}
            autoComplete="off"
            placeholder="timezone"
          />
        </Field>
      </div>
    </>
  );
}

export function TriggerEditorFields({
  trigger,
  onChange,
  issues,
  books,
  names,
}: {
  trigger: Loose;
  onChange: (t: Loose) => void;
  issues: Issues;
  books: ContactBook[];
  names: Names;
}) {
  const editor = TRIGGER_EDITORS[String(trigger.type)];
  const problem = issues.at('trigger');
  if (!editor)
    return (
      <div className="stack">
        <p className="trigger-readonly">{triggerWords(trigger, names)}</p>
        <p className="muted small">This kind of trigger is edited through the API; the rest of the automation can be edited here.</p>
      </div>
    );
  return (
    <div className="stack">
      <Field label="Starts when">
        <select value={String(trigger.type)} onChange={(e) => onChange(TRIGGER_EDITORS[e.target.value].blank())}>
          {Object.entries(TRIGGER_EDITORS).map(([type, ed]) => (
            <option key={type} value={type}>
              {ed.label}
            </option>
          ))}
        </select>
      </Field>
      <editor.Fields trigger={trigger} onChange={onChange} issues={issues} books={books} />
      {problem && <p className="field-error">{problem}</p>}
    </div>
  );
}
