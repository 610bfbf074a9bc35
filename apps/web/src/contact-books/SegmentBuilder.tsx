import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, ApiError } from '../api/client';
import type {
  CampaignList,
  ContactBook,
  ContactProperty,
  PropertyType,
  SegmentCondition,
  SegmentFilter,
  SegmentGroup,
  SegmentOperator,
  SegmentPreview,
  SegmentValue,
} from '../api/types';
import { useTeam } from '../session/session';
import { useTeamQuery } from '../api/team-query';
import { ErrorNotice } from '../ui/ErrorNotice';
import { useDebounced } from '../ui/useDebounced';
import { formatNumber } from '../ui/format';
import { PROPERTY_TYPE_LABELS, useContactProperties } from './useContactProperties';

// The builder edits the contract's filter JSON as is; the server validates it (and answers the
// count). Each field offers only the operators the server takes for it (typed properties from the
// book's registry: numbers, dates, yes/no), and a condition the server refuses shows the server's
// message under the control it names.

const FIELDS = [
  { value: 'email', label: 'Email' },
  { value: 'firstName', label: 'First name' },
  { value: 'lastName', label: 'Last name' },
  { value: 'subscribed', label: 'Subscribed' },
  { value: 'createdAt', label: 'Created' },
  { value: 'updatedAt', label: 'Updated' },
  { value: 'emailActivity', label: 'Email activity' },
];

/**
 * What a field holds, which decides its operators and its value control: the contact's own fields,
 * a typed property of the book's registry, or `any` for a property the registry does not type.
 */
type FieldKind = 'text' | 'subscribed' | 'timestamp' | 'activity' | PropertyType | 'any';

const ALL_OPERATORS: { value: SegmentOperator; label: string }[] = [
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
const TEXT_OPERATORS: { value: SegmentOperator; label: string }[] = [
  { value: 'equals', label: 'is' },
  { value: 'notEquals', label: 'is not' },
  { value: 'contains', label: 'contains' },
  { value: 'startsWith', label: 'starts with' },
  { value: 'endsWith', label: 'ends with' },
  { value: 'in', label: 'is one of' },
  { value: 'isSet', label: 'is set' },
  { value: 'isNotSet', label: 'is not set' },
];
const SET: { value: SegmentOperator; label: string }[] = [
  { value: 'isSet', label: 'is set' },
  { value: 'isNotSet', label: 'is not set' },
];
/** The operators each kind of field takes (the server's rule, segment-filter.ts), the first one its default. */
const OPERATORS: Record<FieldKind, { value: SegmentOperator; label: string }[]> = {
  text: TEXT_OPERATORS,
  string: TEXT_OPERATORS,
  subscribed: [
    { value: 'equals', label: 'is' },
    { value: 'notEquals', label: 'is not' },
  ],
  timestamp: [
    { value: 'gt', label: 'after' },
    { value: 'lt', label: 'before' },
  ],
  number: [
    { value: 'gt', label: 'greater than' },
    { value: 'lt', label: 'less than' },
    { value: 'equals', label: 'equals' },
    { value: 'notEquals', label: 'does not equal' },
    ...SET,
  ],
  date: [{ value: 'gt', label: 'after' }, { value: 'lt', label: 'before' }, ...SET],
  boolean: [{ value: 'equals', label: 'is' }, { value: 'notEquals', label: 'is not' }, ...SET],
  // Email activity: "within" operators take a number of days, "campaign" ones a campaign (docs/audience.md).
  activity: [
    { value: 'openedWithin', label: 'opened within' },
    { value: 'clickedWithin', label: 'clicked within' },
    { value: 'deliveredWithin', label: 'received mail within' },
    { value: 'notOpenedWithin', label: 'no open within' },
    { value: 'notClickedWithin', label: 'no click within' },
    { value: 'notDeliveredWithin', label: 'no mail within' },
    { value: 'openedCampaign', label: 'opened campaign' },
    { value: 'clickedCampaign', label: 'clicked campaign' },
    { value: 'notOpenedCampaign', label: 'did not open campaign' },
    { value: 'notClickedCampaign', label: 'did not click campaign' },
  ],
  any: ALL_OPERATORS,
};
const isCampaignOperator = (o: SegmentOperator) => o.endsWith('Campaign');
/** The look-back a new "within" condition starts with, in days. */
const DEFAULT_DAYS = '30';
const NO_VALUE: SegmentOperator[] = ['isSet', 'isNotSet'];
const MAX_CONDITIONS = 20;
const OTHER_PROPERTY = 'properties.';

const newCondition = (): SegmentCondition => ({ field: 'email', operator: 'contains', value: '' });
export const emptyFilter = (): SegmentFilter => ({ match: 'all', conditions: [newCondition()] });
const isGroup = (c: SegmentCondition | SegmentGroup): c is SegmentGroup => 'conditions' in c;

function fieldKind(field: string, properties: ContactProperty[]): FieldKind {
  if (field === 'subscribed') return 'subscribed';
  if (field === 'createdAt' || field === 'updatedAt') return 'timestamp';
  if (field === 'emailActivity') return 'activity';
  if (!field.startsWith(OTHER_PROPERTY)) return 'text';
  return properties.find((p) => `properties.${p.name}` === field)?.type ?? 'any';
}

/** A typed value from the control: numbers stay numbers, yes/no are booleans, lists split on commas. */
function parseValue(kind: FieldKind, operator: SegmentOperator, text: string): SegmentValue | undefined {
  if (NO_VALUE.includes(operator)) return undefined;
  // Days are a whole number; anything else goes as typed and the server says why at the box.
  if (kind === 'activity') return isCampaignOperator(operator) ? text : /^\d{1,4}$/.test(text.trim()) ? Number(text) : text;
  const asNumber = (s: string) => (s.trim() !== '' && Number.isFinite(Number(s)) ? Number(s) : s);
  const scalar = (s: string): string | number => (kind === 'number' || kind === 'any' ? asNumber(s) : s);
  if (operator === 'in')
    return text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map(scalar);
  if (kind === 'subscribed' || kind === 'boolean') return text !== 'false';
  // An empty number box is no value: the server says at the box that one is needed.
  if (kind === 'number' && text.trim() === '') return undefined;
  return scalar(text);
}
const valueText = (v: SegmentValue | undefined) => (v === undefined ? '' : Array.isArray(v) ? v.join(', ') : String(v));

/** The value a field starts with: yes for yes/no fields (a "Subscribed" condition reaches the subscribed), else empty. */
const defaultText = (kind: FieldKind) => (kind === 'subscribed' || kind === 'boolean' ? 'true' : kind === 'activity' ? DEFAULT_DAYS : '');

type Problems = Partial<Record<'field' | 'operator' | 'value' | 'row', string>>;

/**
 * The server's validation issues of a filter, by condition ("2" or "2.0" for the first condition
 * of group 3) and by part, so each shows at the control it concerns; the rest (the cost budget)
 * stays for the builder as a whole.
 */
export function filterProblems(error: unknown): { byCondition: Map<string, Problems>; rest: string[] } {
  const byCondition = new Map<string, Problems>();
  const rest: string[] = [];
  if (!(error instanceof ApiError) || error.status !== 400) return { byCondition, rest };
  for (const issue of error.issues) {
    const [root, list, i, ...tail] = issue.path;
    if (root !== 'filter') continue;
    if (list !== 'conditions' || typeof i !== 'number') {
      rest.push(issue.message);
      continue;
    }
    const inGroup = tail[0] === 'conditions' && typeof tail[1] === 'number';
    const key = inGroup ? `${i}.${tail[1]}` : String(i);
    const part = (inGroup ? tail[2] : tail[0]) as keyof Problems | undefined;
    const slot: keyof Problems = part === 'field' || part === 'operator' || part === 'value' ? part : 'row';
    byCondition.set(key, { ...byCondition.get(key), [slot]: issue.message });
  }
  return { byCondition, rest };
}

function ConditionRow({
  book,
  properties,
  condition,
  problems = {},
  onChange,
  onRemove,
  label,
}: {
  book: ContactBook;
  properties: ContactProperty[];
  condition: SegmentCondition;
  problems?: Problems;
  onChange: (c: SegmentCondition) => void;
  onRemove: () => void;
  label: string;
}) {
  const [text, setText] = useState(valueText(condition.value));
  const typed = properties.map((p) => p.name);
  const untyped = book.variables.filter((v) => !properties.some((p) => p.name.toLowerCase() === v.toLowerCase()));
  const known =
    FIELDS.some((f) => f.value === condition.field) || [...typed, ...untyped].some((v) => `properties.${v}` === condition.field);
  const kind = fieldKind(condition.field, properties);
  const operators = OPERATORS[kind];
  const set = (patch: Partial<SegmentCondition>, nextText = text) => {
    const next = { ...condition, ...patch };
    onChange({ field: next.field, operator: next.operator, value: parseValue(fieldKind(next.field, properties), next.operator, nextText) });
  };
  // A field of another kind starts from that kind's default operator and value ("Subscribed" is yes).
  const setField = (field: SegmentCondition['field']) => {
    const nextKind = fieldKind(field, properties);
    if (nextKind === kind) return set({ field });
    const nextText = defaultText(nextKind);
    setText(nextText);
    set({ field, operator: OPERATORS[nextKind][0].value }, nextText);
  };
  // Between days and a campaign the value changes kind: it starts again from that kind's default.
  const setOperator = (operator: SegmentOperator) => {
    if (kind !== 'activity' || isCampaignOperator(operator) === isCampaignOperator(condition.operator)) return set({ operator });
    const nextText = isCampaignOperator(operator) ? '' : DEFAULT_DAYS;
    setText(nextText);
    set({ operator }, nextText);
  };
  const id = useId();
  const describedBy = (part: keyof Problems) => (problems[part] ? `${id}-${part}` : undefined);
  const invalid = (part: keyof Problems) => (problems[part] ? true : undefined);
  const yesNo = (kind === 'subscribed' || kind === 'boolean') && condition.operator !== 'in';
  const inputType = (kind === 'timestamp' || kind === 'date') && condition.operator !== 'in' ? 'date' : 'text';
  return (
    <>
      <div className="condition" role="group" aria-label={label}>
        <select
          aria-label={`${label}: field`}
          aria-invalid={invalid('field')}
          aria-describedby={describedBy('field')}
          value={known ? condition.field : OTHER_PROPERTY}
          onChange={(e) => setField(e.target.value as SegmentCondition['field'])}
        >
          {FIELDS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
          {properties.map((p) => (
            <option key={p.name} value={`properties.${p.name}`}>
              {p.name} ({PROPERTY_TYPE_LABELS[p.type].toLowerCase()})
            </option>
          ))}
          {untyped.map((v) => (
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
          aria-invalid={invalid('operator')}
          aria-describedby={describedBy('operator')}
          value={condition.operator}
          onChange={(e) => setOperator(e.target.value as SegmentOperator)}
        >
          {operators.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
          {!operators.some((o) => o.value === condition.operator) && <option value={condition.operator}>{condition.operator}</option>}
        </select>
        {NO_VALUE.includes(condition.operator) ? null : kind === 'activity' && isCampaignOperator(condition.operator) ? (
          <CampaignSelect
            label={`${label}: value`}
            value={text}
            problem={describedBy('value')}
            onChange={(v) => {
              setText(v);
              set({}, v);
            }}
          />
        ) : kind === 'activity' ? (
          <span className="inline-form">
            <input
              aria-label={`${label}: value`}
              aria-invalid={invalid('value')}
              aria-describedby={describedBy('value')}
              type="number"
              inputMode="numeric"
              min={1}
              max={365}
              className="days-input"
              value={text}
              onChange={(e) => {
                setText(e.target.value);
                set({}, e.target.value);
              }}
            />
            <span className="muted">days</span>
          </span>
        ) : yesNo ? (
          <select
            aria-label={`${label}: value`}
            aria-invalid={invalid('value')}
            aria-describedby={describedBy('value')}
            value={String(condition.value !== false)}
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
            aria-invalid={invalid('value')}
            aria-describedby={describedBy('value')}
            type={inputType}
            inputMode={kind === 'number' ? 'decimal' : undefined}
            placeholder={condition.operator === 'in' ? 'a, b, c' : kind === 'number' ? '0' : ''}
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
      {(['field', 'operator', 'value', 'row'] as const).map(
        (part) =>
          problems[part] && (
            <p key={part} id={`${id}-${part}`} className="field-error condition-error">
              {problems[part]}
            </p>
          ),
      )}
    </>
  );
}

/** The team's campaigns, newest first (the first page of GET /v1/campaigns), to pick the one a condition names. */
function CampaignSelect({
  label,
  value,
  problem,
  onChange,
}: {
  label: string;
  value: string;
  problem?: string;
  onChange: (campaignId: string) => void;
}) {
  const campaigns = useTeamQuery<CampaignList>(['campaigns'], '/v1/campaigns', { page: 1 });
  const list = campaigns.data?.campaigns ?? [];
  return (
    <select
      aria-label={label}
      aria-invalid={problem ? true : undefined}
      aria-describedby={problem}
      value={value}
      onChange={(e) => onChange(e.target.value)}
    >
      <option value="">{campaigns.isLoading ? 'Loading campaigns…' : 'Choose a campaign'}</option>
      {list.map((c) => (
        <option key={c.id} value={c.id}>
          {c.name}
        </option>
      ))}
      {value && !list.some((c) => c.id === value) && <option value={value}>{value}</option>}
    </select>
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
  error,
}: {
  book: ContactBook;
  filter: SegmentFilter;
  onChange: (f: SegmentFilter) => void;
  /** The server's answer to the last save or preview: its filter issues show at their conditions. */
  error?: unknown;
}) {
  const { properties } = useContactProperties(book.id);
  const { byCondition, rest } = filterProblems(error);
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
                properties={properties}
                problems={byCondition.get(`${i}.${k}`)}
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
              onClick={() => replace(i, { ...c, conditions: [...c.conditions, newCondition()] })}
            >
              Add condition to group {i + 1}
            </button>
          </fieldset>
        ) : (
          <ConditionRow
            key={`${generation}-${i}`}
            book={book}
            properties={properties}
            problems={byCondition.get(String(i))}
            label={`Condition ${i + 1}`}
            condition={c}
            onChange={(n) => replace(i, n)}
            onRemove={() => remove(i)}
          />
        ),
      )}
      {rest.map((message) => (
        <p key={message} className="field-error" role="alert">
          {message}
        </p>
      ))}
      <div className="filter-actions">
        <button
          type="button"
          className="btn btn-small"
          disabled={full}
          onClick={() => onChange({ ...filter, conditions: [...filter.conditions, newCondition()] })}
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
              conditions: [...filter.conditions, { match: filter.match === 'all' ? 'any' : 'all', conditions: [newCondition()] }],
            })
          }
        >
          Add group
        </button>
      </div>
    </fieldset>
  );
}

/** The live count of an unsaved filter (POST .../segments/preview, 400 ms after the last edit). */
export function useSegmentPreview(book: ContactBook, filter: SegmentFilter) {
  const { team, base } = useTeam();
  const debounced = useDebounced(JSON.stringify(filter), 400);
  return useQuery({
    queryKey: ['team', team.id, 'contact-books', book.id, 'segment-preview', debounced],
    queryFn: () => api.post<SegmentPreview>(`${base}/v1/contactBooks/${book.id}/segments/preview`, { filter: JSON.parse(debounced) }),
    enabled: filter.conditions.length > 0,
    placeholderData: (prev) => prev,
    retry: (count, err) => !(err instanceof ApiError && err.status === 400) && count < 2,
  });
}

/** The count and the first matches; a filter the server refused is shown at its conditions (SegmentBuilder), not here. */
export function SegmentLivePreview({ preview }: { preview: ReturnType<typeof useSegmentPreview> }) {
  const refused = preview.error instanceof ApiError && filterProblems(preview.error).byCondition.size > 0;
  return (
    <section className="segment-preview" aria-labelledby="segment-preview-h">
      <h3 id="segment-preview-h">Matches</h3>
      {refused ? <p className="muted">Complete the highlighted condition to count the matches.</p> : <ErrorNotice error={preview.error} />}
      <p role="status" data-testid="segment-count">
        {preview.data && !preview.error ? (
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
      {!!preview.data?.contacts.length && !preview.error && (
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
