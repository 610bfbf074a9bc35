import { z } from 'zod';
import { isSupportedInstant, UNSUPPORTED_DATE_MESSAGE } from '@mailrail/domain/date-range';

// The segment filter language: the one definition the API validates with, the OpenAPI document
// shows, and the compiler (segment-sql.ts) translates. Semantics by field and JSON type are in
// docs/audience.md ("Segments").

/** Email activity (field "emailActivity"): the value is a number of days, or a campaign id. Automations' conditions take the same. */
export const EMAIL_ACTIVITY_OPERATORS = [
  'deliveredWithin',
  'openedWithin',
  'clickedWithin',
  'notDeliveredWithin',
  'notOpenedWithin',
  'notClickedWithin',
  'openedCampaign',
  'clickedCampaign',
  'notOpenedCampaign',
  'notClickedCampaign',
] as const;

export const SEGMENT_OPERATORS = [
  'equals',
  'notEquals',
  'contains',
  'startsWith',
  'endsWith',
  'gt',
  'lt',
  'isSet',
  'isNotSet',
  'in',
  ...EMAIL_ACTIVITY_OPERATORS,
] as const;
export type SegmentOperator = (typeof SEGMENT_OPERATORS)[number];

/** The field of the email activity conditions (docs/audience.md, "Email activity"). */
export const EMAIL_ACTIVITY_FIELD = 'emailActivity';
/** The longest look-back of a "within N days" condition: a year, the email log's longest useful retention. */
export const MAX_ACTIVITY_DAYS = 365;
/** Email activity conditions in one filter: each is a join with the activity or the campaign's recipients. */
export const MAX_SEGMENT_ACTIVITY_CONDITIONS = 10;
const MAX_CAMPAIGN_ID = 64;

type ActivityKind = 'delivered' | 'opened' | 'clicked';
/** An email activity condition as the compiler reads it. */
export type EmailActivityCondition =
  | { on: 'window'; kind: ActivityKind; negated: boolean; days: number }
  | { on: 'campaign'; kind: 'opened' | 'clicked'; negated: boolean; campaignId: string };

const ACTIVITY_OPERATORS: Partial<Record<SegmentOperator, { on: 'window' | 'campaign'; kind: ActivityKind; negated: boolean }>> = {
  deliveredWithin: { on: 'window', kind: 'delivered', negated: false },
  openedWithin: { on: 'window', kind: 'opened', negated: false },
  clickedWithin: { on: 'window', kind: 'clicked', negated: false },
  notDeliveredWithin: { on: 'window', kind: 'delivered', negated: true },
  notOpenedWithin: { on: 'window', kind: 'opened', negated: true },
  notClickedWithin: { on: 'window', kind: 'clicked', negated: true },
  openedCampaign: { on: 'campaign', kind: 'opened', negated: false },
  clickedCampaign: { on: 'campaign', kind: 'clicked', negated: false },
  notOpenedCampaign: { on: 'campaign', kind: 'opened', negated: true },
  notClickedCampaign: { on: 'campaign', kind: 'clicked', negated: true },
};

/** What an emailActivity condition asks, or null when it is not one (the schema refused it already). */
export function parseEmailActivity(c: { field: string; operator: SegmentOperator; value?: unknown }): EmailActivityCondition | null {
  const op = c.field === EMAIL_ACTIVITY_FIELD ? ACTIVITY_OPERATORS[c.operator] : undefined;
  if (!op) return null;
  if (op.on === 'window') return typeof c.value === 'number' ? { on: 'window', kind: op.kind, negated: op.negated, days: c.value } : null;
  if (op.kind === 'delivered' || typeof c.value !== 'string') return null;
  return { on: 'campaign', kind: op.kind, negated: op.negated, campaignId: c.value };
}

/** The campaign ids the filter's "opened / clicked campaign" conditions name (the API checks they are the team's). */
export function activityCampaignIds(filter: SegmentFilter): { campaignId: string; path: (string | number)[] }[] {
  const found: { campaignId: string; path: (string | number)[] }[] = [];
  filter.conditions.forEach((item, i) => {
    const inner = isSegmentGroup(item)
      ? item.conditions.map((c, j) => ({ c, path: ['conditions', i, 'conditions', j] }))
      : [{ c: item, path: ['conditions', i] }];
    for (const { c, path } of inner) {
      const a = parseEmailActivity(c);
      if (a?.on === 'campaign') found.push({ campaignId: a.campaignId, path: [...path, 'value'] });
    }
  });
  return found;
}

export const MAX_SEGMENT_CONDITIONS = 20;
export const MAX_SEGMENT_IN_VALUES = 1000;
export const MAX_SEGMENT_TEXT_VALUE = 1000;
export const MAX_PROPERTY_NAME = 128;
// The cost budget of one filter (docs/audience.md, "Cost budget"). Each condition is evaluated on
// every contact of the book, and a pattern (contains, startsWith, endsWith) costs about its length
// times the text it is matched against: 20 groups of 20 conditions of 1,000 characters made one
// preview read each 10,000-character property 400 times. Each limit is far above what a person
// builds and far below that.
/** Conditions in the whole filter, those inside groups included. */
export const MAX_SEGMENT_TOTAL_CONDITIONS = 100;
/** Characters of every contains, startsWith and endsWith value of the filter together. */
export const MAX_SEGMENT_PATTERN_CHARS = 2_000;
/** Values of every `in` list of the filter together. */
export const MAX_SEGMENT_TOTAL_IN_VALUES = 2_000;

export const TEXT_FIELDS = ['email', 'firstName', 'lastName'] as const;
export const DATE_FIELDS = ['createdAt', 'updatedAt'] as const;
type TextField = (typeof TEXT_FIELDS)[number];
type DateField = (typeof DATE_FIELDS)[number];
const PROPERTY_PREFIX = 'properties.';

/** What a condition's `field` names: a contact column or one property. */
export type SegmentField =
  | { kind: 'text'; column: TextField }
  | { kind: 'subscribed' }
  | { kind: 'date'; column: DateField }
  | { kind: 'property'; name: string }
  | { kind: 'emailActivity' };

export function parseSegmentField(field: string): SegmentField | null {
  if ((TEXT_FIELDS as readonly string[]).includes(field)) return { kind: 'text', column: field as TextField };
  if ((DATE_FIELDS as readonly string[]).includes(field)) return { kind: 'date', column: field as DateField };
  if (field === 'subscribed') return { kind: 'subscribed' };
  if (field === EMAIL_ACTIVITY_FIELD) return { kind: 'emailActivity' };
  if (field.startsWith(PROPERTY_PREFIX)) {
    const name = field.slice(PROPERTY_PREFIX.length);
    if (name.length >= 1 && name.length <= MAX_PROPERTY_NAME) return { kind: 'property', name };
  }
  return null;
}

// Which operators each kind of field takes, and the value each operator needs there.
type ValueKind =
  'none' | 'string' | 'number' | 'boolean' | 'date' | 'numberOrDay' | 'scalar' | 'list' | 'stringList' | 'days' | 'campaignId';
const OPERATOR_VALUES: Record<SegmentField['kind'], Partial<Record<SegmentOperator, ValueKind>>> = {
  text: {
    equals: 'string',
    notEquals: 'string',
    contains: 'string',
    startsWith: 'string',
    endsWith: 'string',
    in: 'stringList',
    isSet: 'none',
    isNotSet: 'none',
  },
  subscribed: { equals: 'boolean', notEquals: 'boolean' },
  date: { gt: 'date', lt: 'date' },
  property: {
    equals: 'scalar',
    notEquals: 'scalar',
    contains: 'string',
    startsWith: 'string',
    endsWith: 'string',
    // A number compares the property's number form; a day (YYYY-MM-DD) its date form.
    gt: 'numberOrDay',
    lt: 'numberOrDay',
    in: 'list',
    isSet: 'none',
    isNotSet: 'none',
  },
  emailActivity: {
    deliveredWithin: 'days',
    openedWithin: 'days',
    clickedWithin: 'days',
    notDeliveredWithin: 'days',
    notOpenedWithin: 'days',
    notClickedWithin: 'days',
    openedCampaign: 'campaignId',
    clickedCampaign: 'campaignId',
    notOpenedCampaign: 'campaignId',
    notClickedCampaign: 'campaignId',
  },
};

const isDateText = (s: string) =>
  (z.iso.datetime({ offset: true }).safeParse(s).success || z.iso.date().safeParse(s).success) && isSupportedInstant(new Date(s));

/** A calendar day as a property date comparison takes it (years 1000..9999, month and day in range). */
const DAY_VALUE = /^[1-9]\d{3}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const isDay = (s: string) => DAY_VALUE.test(s);

function valueProblem(kind: ValueKind, value: unknown): string | null {
  switch (kind) {
    case 'none':
      return value === undefined ? null : 'takes no value';
    case 'string':
      return typeof value === 'string' ? null : 'must be a string';
    case 'number':
      return typeof value === 'number' ? null : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    case 'date':
      return typeof value === 'string' && isDateText(value)
        ? null
        : `must be an ISO 8601 date (YYYY-MM-DD) or date-time with offset; ${UNSUPPORTED_DATE_MESSAGE}`;
    case 'numberOrDay':
      return typeof value === 'number' || (typeof value === 'string' && isDay(value))
        ? null
        : 'must be a number, or a day YYYY-MM-DD to compare a date property';
    case 'scalar':
      return ['string', 'number', 'boolean'].includes(typeof value) ? null : 'must be a string, a number or a boolean';
    case 'list':
      return Array.isArray(value) && value.length > 0 ? null : 'must be a non-empty array of strings or numbers';
    case 'stringList':
      return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')
        ? null
        : 'must be a non-empty array of strings';
    case 'days':
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_ACTIVITY_DAYS
        ? null
        : `must be a whole number of days from 1 to ${MAX_ACTIVITY_DAYS}`;
    case 'campaignId':
      return typeof value === 'string' && value.length >= 1 && value.length <= MAX_CAMPAIGN_ID ? null : 'must be a campaign id';
  }
}

const scalarValue = z.union([z.string().max(MAX_SEGMENT_TEXT_VALUE), z.number().finite(), z.boolean()]);

export const segmentCondition = z
  .object({
    // A condition has no `match`: that is how an item is told from a group, and why a group inside
    // a group (a second level of nesting) is refused.
    match: z
      .literal(undefined, { error: 'groups nest one level only: a group holds conditions, not groups' })
      .optional()
      .meta({ description: 'absent: a condition has no match (only groups do)' }),
    field: z
      .string()
      .max(PROPERTY_PREFIX.length + MAX_PROPERTY_NAME)
      .describe('email, firstName, lastName, subscribed, createdAt, updatedAt, emailActivity or properties.<name>'),
    operator: z.enum(SEGMENT_OPERATORS),
    value: z
      .union([scalarValue, z.array(z.union([z.string().max(MAX_SEGMENT_TEXT_VALUE), z.number().finite()])).max(MAX_SEGMENT_IN_VALUES)])
      .optional(),
  })
  .superRefine((c, ctx) => {
    if (typeof c.field !== 'string' || typeof c.operator !== 'string') return; // already reported
    const field = parseSegmentField(c.field);
    if (!field) {
      ctx.addIssue({ code: 'custom', path: ['field'], message: `Unknown field "${c.field.slice(0, 40)}"` });
      return;
    }
    const kind = OPERATOR_VALUES[field.kind][c.operator];
    if (!kind) {
      const allowed = Object.keys(OPERATOR_VALUES[field.kind]).join(', ');
      ctx.addIssue({ code: 'custom', path: ['operator'], message: `${c.operator} does not apply to ${c.field}; use one of ${allowed}` });
      return;
    }
    const problem = valueProblem(kind, c.value);
    if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: `${c.operator} on ${c.field}: value ${problem}` });
  });
export type SegmentCondition = z.infer<typeof segmentCondition>;

const match = z.enum(['all', 'any']).describe('all = AND, any = OR');

export const segmentGroup = z.object({
  match,
  conditions: z.array(segmentCondition).min(1).max(MAX_SEGMENT_CONDITIONS),
});
export type SegmentGroup = z.infer<typeof segmentGroup>;

/** The filter's structure alone, without its cost budget (filters saved before the budget existed parse). */
const segmentFilterShape = z.object({
  match,
  conditions: z
    .array(z.discriminatedUnion('match', [segmentCondition, segmentGroup]))
    .min(1)
    .max(MAX_SEGMENT_CONDITIONS),
});
export type SegmentFilter = z.infer<typeof segmentFilterShape>;

export const isSegmentGroup = (item: SegmentCondition | SegmentGroup): item is SegmentGroup => 'conditions' in item;

const PATTERN_OPERATORS: readonly SegmentOperator[] = ['contains', 'startsWith', 'endsWith'];

/** Why the filter is over its cost budget, or null when it is within it. */
export function segmentFilterCostProblem(filter: SegmentFilter): string | null {
  const conditions = filter.conditions.flatMap((item) => (isSegmentGroup(item) ? item.conditions : [item]));
  const patternChars = conditions
    .filter((c) => PATTERN_OPERATORS.includes(c.operator) && typeof c.value === 'string')
    .reduce((sum, c) => sum + (c.value as string).length, 0);
  const inValues = conditions.reduce((sum, c) => sum + (c.operator === 'in' && Array.isArray(c.value) ? c.value.length : 0), 0);
  const over = (what: string, found: number, limit: number) =>
    `The filter is too costly to evaluate: it has ${found} ${what}, at most ${limit} are allowed. Use fewer or shorter conditions`;
  if (conditions.length > MAX_SEGMENT_TOTAL_CONDITIONS)
    return over('conditions (groups included)', conditions.length, MAX_SEGMENT_TOTAL_CONDITIONS);
  if (patternChars > MAX_SEGMENT_PATTERN_CHARS)
    return over('characters of contains, startsWith and endsWith values', patternChars, MAX_SEGMENT_PATTERN_CHARS);
  if (inValues > MAX_SEGMENT_TOTAL_IN_VALUES) return over('values in its "in" lists', inValues, MAX_SEGMENT_TOTAL_IN_VALUES);
  const activity = conditions.filter((c) => c.field === EMAIL_ACTIVITY_FIELD).length;
  if (activity > MAX_SEGMENT_ACTIVITY_CONDITIONS) return over('email activity conditions', activity, MAX_SEGMENT_ACTIVITY_CONDITIONS);
  return null;
}

/** A filter as the API, the dashboard and the campaign path accept it: its structure and its cost budget. */
export const segmentFilter = segmentFilterShape
  .superRefine((filter, ctx) => {
    const problem = segmentFilterCostProblem(filter);
    if (problem) ctx.addIssue({ code: 'custom', path: ['conditions'], message: problem });
  })
  .meta({ id: 'SegmentFilter' });

/**
 * Parses a stored filter (validated when it was saved; parsed again so the compiler sees typed
 * input). Its structure only: a filter saved before the cost budget still reads, and whoever
 * evaluates it checks segmentFilterCostProblem.
 */
export function storedSegmentFilter(json: unknown): SegmentFilter {
  return segmentFilterShape.parse(json);
}
