import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client';
import type {
  ContactBook,
  SegmentCondition,
  SegmentFilter,
  SegmentGroup,
  SegmentOperator,
  SegmentPreview,
  SegmentValue,
} from '../api/types';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { useDebounced } from '../ui/useDebounced';
import { formatNumber } from '../ui/format';

// The builder edits the contract's filter JSON as is; the server validates it (and answers the
// count), so a condition the server refuses shows the server's message under the builder.

const FIELDS = [
  { value: 'email', label: 'Email' },
  { value: 'firstName', label: 'First name' },
  { value: 'lastName', label: 'Last name' },
  { value: 'subscribed', label: 'Subscribed' },
  { value: 'createdAt', label: 'Created' },
  { value: 'updatedAt', label: 'Updated' },
];
const OPERATORS: { value: SegmentOperator; label: string }[] = [
  { value: 'equals', label: 'equals' },
  { value: 'notEquals', label: 'does not equal' },
  { value: 'contains', label: 'contains' },
  { value: 'startsWith', label: 'starts with' },
  { value: 'endsWith', label: 'ends with' },
  { value: 'gt', label: 'greater / later than' },
  { value: 'lt', label: 'less / earlier than' },
  { value: 'isSet', label: 'is set' },
  { value: 'isNotSet', label: 'is not set' },
  { value: 'in', label: 'is one of' },
];
const NO_VALUE: SegmentOperator[] = ['isSet', 'isNotSet'];
const MAX_CONDITIONS = 20;
const OTHER_PROPERTY = 'properties.';

export const emptyFilter = (): SegmentFilter => ({ match: 'all', conditions: [{ field: 'email', operator: 'contains', value: '' }] });
const isGroup = (c: SegmentCondition | SegmentGroup): c is SegmentGroup => 'conditions' in c;

/** A typed value from the text box: numbers stay numbers for properties (gt/lt compare them as such), lists split on commas. */
function parseValue(field: string, operator: SegmentOperator, text: string): SegmentValue | undefined {
  if (NO_VALUE.includes(operator)) return undefined;
  const scalar = (s: string): string | number =>
    field.startsWith('properties.') && s.trim() !== '' && !Number.isNaN(Number(s)) ? Number(s) : s;
  if (operator === 'in')
    return text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map(scalar);
  if (field === 'subscribed') return text === 'true';
  return scalar(text);
}
const valueText = (v: SegmentValue | undefined) => (v === undefined ? '' : Array.isArray(v) ? v.join(', ') : String(v));

function ConditionRow({
  book,
  condition,
  onChange,
  onRemove,
  label,
}: {
  book: ContactBook;
  condition: SegmentCondition;
  onChange: (c: SegmentCondition) => void;
  onRemove: () => void;
  label: string;
}) {
  const [text, setText] = useState(valueText(condition.value));
  const known = FIELDS.some((f) => f.value === condition.field) || book.variables.some((v) => `properties.${v}` === condition.field);
  const set = (patch: Partial<SegmentCondition>, nextText = text) => {
    const next = { ...condition, ...patch };
    onChange({ field: next.field, operator: next.operator, value: parseValue(next.field, next.operator, nextText) });
  };
  const dateField = condition.field === 'createdAt' || condition.field === 'updatedAt';
  return (
    <div className="condition" role="group" aria-label={label}>
      <select
        aria-label={`${label}: field`}
        value={known ? condition.field : OTHER_PROPERTY}
        onChange={(e) => set({ field: e.target.value as SegmentCondition['field'] })}
      >
        {FIELDS.map((f) => (
          <option key={f.value} value={f.value}>
            {f.label}
          </option>
        ))}
        {book.variables.map((v) => (
          <option key={v} value={`properties.${v}`}>
            Property: {v}
          </option>
        ))}
        <option value={OTHER_PROPERTY}>Property…</option>
      </select>
      {!known && (
        <input
          aria-label={`${label}: property name`}
          placeholder="property name"
          value={condition.field.slice(OTHER_PROPERTY.length)}
          onChange={(e) => set({ field: `properties.${e.target.value}` })}
        />
      )}
      <select
        aria-label={`${label}: operator`}
        value={condition.operator}
        onChange={(e) => set({ operator: e.target.value as SegmentOperator })}
      >
        {OPERATORS.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {NO_VALUE.includes(condition.operator) ? null : condition.field === 'subscribed' && condition.operator !== 'in' ? (
        <select
          aria-label={`${label}: value`}
          value={String(condition.value === true)}
          onChange={(e) => {
            setText(e.target.value);
            set({}, e.target.value);
          }}
        >
          <option value="true">yes</option>
          <option value="false">no</option>
        </select>
      ) : (
        <input
          aria-label={`${label}: value`}
          type={dateField && condition.operator !== 'in' ? 'date' : 'text'}
          placeholder={condition.operator === 'in' ? 'a, b, c' : ''}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            set({}, e.target.value);
          }}
        />
      )}
      <button type="button" className="btn btn-small" onClick={onRemove} aria-label={`Remove ${label}`}>
        Remove
      </button>
    </div>
  );
}

function MatchSelect({ value, onChange, label }: { value: 'all' | 'any'; onChange: (m: 'all' | 'any') => void; label: string }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value as 'all' | 'any')}>
      <option value="all">all (AND)</option>
      <option value="any">any (OR)</option>
    </select>
  );
}

/** Conditions and one level of groups, AND / OR at each level. */
export function SegmentBuilder({
  book,
  filter,
  onChange,
}: {
  book: ContactBook;
  filter: SegmentFilter;
  onChange: (f: SegmentFilter) => void;
}) {
  const replace = (i: number, c: SegmentCondition | SegmentGroup) =>
    onChange({ ...filter, conditions: filter.conditions.map((x, k) => (k === i ? c : x)) });
  // Rows keep the text being typed ("1." or "a, " before the next character); after a removal the
  // rows below move up, so every row starts again from its condition's value (a new generation).
  const [generation, setGeneration] = useState(0);
  const remove = (i: number) => {
    setGeneration((g) => g + 1);
    onChange({ ...filter, conditions: filter.conditions.filter((_, k) => k !== i) });
  };
  const full = filter.conditions.length >= MAX_CONDITIONS;
  return (
    <fieldset className="segment-builder">
      <legend>Contacts matching</legend>
      <p className="inline-form">
        <MatchSelect label="Match at the top level" value={filter.match} onChange={(match) => onChange({ ...filter, match })} />
        <span className="muted">of these conditions:</span>
      </p>
      {filter.conditions.map((c, i) =>
        isGroup(c) ? (
          <fieldset key={`${generation}-${i}`} className="segment-group">
            <legend>Group {i + 1}</legend>
            <p className="inline-form">
              <MatchSelect label={`Match in group ${i + 1}`} value={c.match} onChange={(match) => replace(i, { ...c, match })} />
              <span className="muted">of:</span>
            </p>
            {c.conditions.map((gc, k) => (
              <ConditionRow
                key={`${generation}-${k}`}
                book={book}
                label={`Group ${i + 1} condition ${k + 1}`}
                condition={gc}
                onChange={(n) => replace(i, { ...c, conditions: c.conditions.map((x, j) => (j === k ? n : x)) })}
                onRemove={() => {
                  if (c.conditions.length === 1) return remove(i);
                  setGeneration((g) => g + 1);
                  replace(i, { ...c, conditions: c.conditions.filter((_, j) => j !== k) });
                }}
              />
            ))}
            <button
              type="button"
              className="btn btn-small"
              disabled={c.conditions.length >= MAX_CONDITIONS}
              onClick={() => replace(i, { ...c, conditions: [...c.conditions, { field: 'email', operator: 'contains', value: '' }] })}
            >
              Add condition to group {i + 1}
            </button>
          </fieldset>
        ) : (
          <ConditionRow
            key={`${generation}-${i}`}
            book={book}
            label={`Condition ${i + 1}`}
            condition={c}
            onChange={(n) => replace(i, n)}
            onRemove={() => remove(i)}
          />
        ),
      )}
      <div className="filter-actions">
        <button
          type="button"
          className="btn btn-small"
          disabled={full}
          onClick={() => onChange({ ...filter, conditions: [...filter.conditions, { field: 'email', operator: 'contains', value: '' }] })}
        >
          Add condition
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={full}
          onClick={() =>
            onChange({
              ...filter,
              conditions: [
                ...filter.conditions,
                { match: filter.match === 'all' ? 'any' : 'all', conditions: [{ field: 'email', operator: 'contains', value: '' }] },
              ],
            })
          }
        >
          Add group
        </button>
      </div>
    </fieldset>
  );
}

/** The live count and the first matches of an unsaved filter (POST .../segments/preview, 400 ms after the last edit). */
export function SegmentLivePreview({ book, filter }: { book: ContactBook; filter: SegmentFilter }) {
  const { team, base } = useTeam();
  const debounced = useDebounced(JSON.stringify(filter), 400);
  const preview = useQuery({
    queryKey: ['team', team.id, 'contact-books', book.id, 'segment-preview', debounced],
    queryFn: () => api.post<SegmentPreview>(`${base}/v1/contactBooks/${book.id}/segments/preview`, { filter: JSON.parse(debounced) }),
    enabled: filter.conditions.length > 0,
    placeholderData: (prev) => prev,
  });
  return (
    <section className="segment-preview" aria-labelledby="segment-preview-h">
      <h3 id="segment-preview-h">Matches</h3>
      <ErrorNotice error={preview.error} />
      <p role="status" data-testid="segment-count">
        {preview.data ? (
          <>
            <strong>{formatNumber(preview.data.count)}</strong> contacts match,{' '}
            <strong>{formatNumber(preview.data.subscribedCount)}</strong> subscribed
            {preview.isFetching && <span className="muted"> (updating…)</span>}
          </>
        ) : preview.isFetching ? (
          'Counting…'
        ) : (
          'Add a condition to count the matches.'
        )}
      </p>
      {!!preview.data?.contacts.length && (
        <ul className="plain-list small">
          {preview.data.contacts.map((c) => (
            <li key={c.id}>
              {c.email} {!c.subscribed && <span className="muted">(unsubscribed)</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
