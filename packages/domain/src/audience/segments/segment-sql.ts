import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import {
  isSegmentGroup,
  parseEmailActivity,
  parseSegmentField,
  type SegmentCondition,
  type SegmentFilter,
  type SegmentGroup,
} from '@mailrail/domain/audience/segments/segment-filter';

// The segment filter compiled to one SQL boolean expression over a "Contact" row. Every value
// (texts, numbers, dates, even property names) goes into the parameter list as $n; the text
// built here holds only fixed column names, operators and casts. The API (counts, pages,
// preview, export) and the worker (the recipients fixed at campaign start) use this one function.
//
// Semantics (also in docs/audience.md):
// - text comparisons are case-insensitive; LIKE patterns escape \, % and _;
// - a property's "text form" is its value when it is a JSON string, number or boolean (`->>`), and
//   nothing for a missing key, null, an object or an array; its "number form" is a JSON number, or a
//   string that reads as a decimal number ("42", " -1.5 ", "1e3"); its "date form" is the calendar
//   day a JSON string starts with ("2026-03-15", "2026-03-15T10:00:00Z" → 2026-03-15);
// - values that do not read as a number or a day have no such form and never match gt/lt: every
//   cast runs only after its pattern matched, so no stored value can make a segment fail;
// - notEquals is the exact negation of equals (a missing value is "not equal"); isNotSet of isSet;
// - email activity (field emailActivity) joins the team's activity by address ("EmailActivity",
//   one row per address the team mailed) or the campaign's recipients ("CampaignEmail"), always
//   limited to the evaluating team; "within N days" counts from the scope's `now`. Each is one
//   primary-key probe per contact, or one hash join for a whole book (email-activity.ts).

/** Whose activity a filter reads, and the instant "within N days" counts back from. */
export interface SegmentScope {
  teamId: number;
  now: Date;
}

const DAY_MS = 86_400_000;
const LAST_AT = { delivered: '"lastDeliveredAt"', opened: '"lastOpenedAt"', clicked: '"lastClickedAt"' } as const;

/** Escapes LIKE's wildcards (and its escape character, backslash) in user text. */
export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);

// A day YYYY-MM-DD at the start of the text, optionally followed by a time. Its first ten characters
// compare as text in calendar order (under the C collation), so no cast is needed and an impossible
// day ("2026-02-30") is simply ordered among its neighbours instead of failing the statement.
const DAY_TEXT = `'^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([T ]|$)'`;

const NUMERIC_TEXT = `'^[[:space:]]*[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]{1,3})?[[:space:]]*$'`;

function textColumnSql(a: string, column: string): string {
  return `${a}."${column}"`;
}

/** Appends a parameter and answers its placeholder. */
const bind = (params: unknown[], value: unknown, cast = '') => `$${params.push(value)}${cast}`;

function likePattern(operator: 'contains' | 'startsWith' | 'endsWith', value: string): string {
  const v = escapeLike(value);
  return operator === 'startsWith' ? `${v}%` : operator === 'endsWith' ? `%${v}` : `%${v}%`;
}

function textColumnCondition(col: string, isEmail: boolean, c: SegmentCondition, params: unknown[]): string {
  // Email is stored lower-cased: comparing it to lower-cased input keeps its indexes usable.
  const lhs = isEmail ? col : `lower(${col})`;
  switch (c.operator) {
    case 'equals':
      return `${lhs} = ${bind(params, String(c.value).toLowerCase())}`;
    case 'notEquals':
      return `${lhs} IS DISTINCT FROM ${bind(params, String(c.value).toLowerCase())}`;
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      return `${col} ILIKE ${bind(params, likePattern(c.operator, String(c.value)))}`;
    case 'in':
      return `${lhs} = ANY(${bind(
        params,
        (c.value as string[]).map((v) => v.toLowerCase()),
        '::text[]',
      )})`;
    case 'isSet':
      return `coalesce(${col}, '') <> ''`;
    case 'isNotSet':
      return `coalesce(${col}, '') = ''`;
    default:
      throw new Error(`unreachable: ${c.operator} on a text field`);
  }
}

function propertyCondition(a: string, name: string, c: SegmentCondition, params: unknown[]): string {
  const key = bind(params, name, '::text');
  const json = `${a}.properties -> ${key}`;
  const type = `jsonb_typeof(${json})`;
  const text = `(CASE WHEN ${type} IN ('string', 'number', 'boolean') THEN ${a}.properties ->> ${key} END)`;
  // CASE evaluates the cast only for values that passed the pattern, so no row can make it fail.
  const num = `(CASE WHEN ${type} = 'number' THEN (${a}.properties ->> ${key})::numeric
    WHEN ${type} = 'string' AND ${a}.properties ->> ${key} ~ ${NUMERIC_TEXT} THEN (${a}.properties ->> ${key})::numeric END)`;
  const day = `(CASE WHEN ${type} = 'string' AND ${a}.properties ->> ${key} ~ ${DAY_TEXT} THEN left(${a}.properties ->> ${key}, 10) END)`;
  const compare = (op: '>' | '<', value: unknown) =>
    typeof value === 'string'
      ? `${day} COLLATE "C" ${op} ${bind(params, value, '::text')}`
      : `${num} ${op} ${bind(params, value, '::numeric')}`;
  const equals = (value: unknown): string => {
    if (typeof value === 'number') return `${num} = ${bind(params, value, '::numeric')}`;
    // A boolean matches JSON true/false and the strings "true"/"false" (any case).
    return `lower(${text}) = ${bind(params, String(value).toLowerCase())}`;
  };
  switch (c.operator) {
    case 'equals':
      return equals(c.value);
    case 'notEquals':
      return `NOT coalesce(${equals(c.value)}, false)`;
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      return `${text} ILIKE ${bind(params, likePattern(c.operator, String(c.value)))}`;
    case 'gt':
      return compare('>', c.value);
    case 'lt':
      return compare('<', c.value);
    case 'in': {
      const values = c.value as (string | number)[];
      const texts = values.filter((v): v is string => typeof v === 'string').map((v) => v.toLowerCase());
      const numbers = values.filter((v): v is number => typeof v === 'number');
      const parts: string[] = [];
      if (texts.length) parts.push(`lower(${text}) = ANY(${bind(params, texts, '::text[]')})`);
      if (numbers.length) parts.push(`${num} = ANY(${bind(params, numbers, '::numeric[]')})`);
      return `(${parts.join(' OR ')})`;
    }
    case 'isSet':
      return `coalesce(${text}, '') <> ''`;
    case 'isNotSet':
      return `coalesce(${text}, '') = ''`;
    default:
      throw new Error(`unreachable: ${c.operator} on a property`);
  }
}

function emailActivitySql(a: string, c: SegmentCondition, scope: SegmentScope, params: unknown[]): string {
  const activity = parseEmailActivity(c);
  if (!activity) throw new Error(`unreachable: ${c.operator} on emailActivity`); // the schema refused it already
  const team = bind(params, scope.teamId, '::int');
  let exists: string;
  if (activity.on === 'window') {
    const since = bind(params, new Date(scope.now.getTime() - activity.days * DAY_MS), '::timestamptz');
    exists = `EXISTS (SELECT 1 FROM "EmailActivity" ea WHERE ea."teamId" = ${team} AND ea.address = ${a}.email
      AND ea.${LAST_AT[activity.kind]} >= ${since})`;
  } else {
    // The campaign must be the team's: another team's campaign id matches nobody.
    const campaign = bind(params, activity.campaignId, '::text');
    const when = activity.kind === 'clicked' ? `ce."clickedAt" IS NOT NULL` : `ce."openedAt" IS NOT NULL`;
    exists = `EXISTS (SELECT 1 FROM "CampaignEmail" ce WHERE ce."campaignId" = ${campaign} AND ce.email = ${a}.email AND ${when}
      AND EXISTS (SELECT 1 FROM "Campaign" k WHERE k.id = ${campaign} AND k."teamId" = ${team}))`;
  }
  return activity.negated ? `NOT ${exists}` : exists;
}

function conditionSql(a: string, c: SegmentCondition, scope: SegmentScope, params: unknown[]): string {
  const field = parseSegmentField(c.field);
  if (!field) throw new Error(`unknown segment field ${c.field}`); // the schema refused it already
  switch (field.kind) {
    case 'text':
      return textColumnCondition(textColumnSql(a, field.column), field.column === 'email', c, params);
    case 'subscribed':
      return `${a}.subscribed ${c.operator === 'equals' ? '=' : '<>'} ${bind(params, c.value === true, '::boolean')}`;
    case 'date':
      return `${a}."${field.column}" ${c.operator === 'gt' ? '>' : '<'} ${bind(params, new Date(String(c.value)), '::timestamptz')}`;
    case 'property':
      return propertyCondition(a, field.name, c, params);
    case 'emailActivity':
      return emailActivitySql(a, c, scope, params);
  }
}

function itemsSql(
  a: string,
  match: 'all' | 'any',
  items: (SegmentCondition | SegmentGroup)[],
  scope: SegmentScope,
  params: unknown[],
): string {
  const parts = items.map(
    (item) => `(${isSegmentGroup(item) ? itemsSql(a, item.match, item.conditions, scope, params) : conditionSql(a, item, scope, params)})`,
  );
  return parts.join(match === 'all' ? ' AND ' : ' OR ');
}

/**
 * The filter as a boolean SQL expression over the contact row `alias` of `scope`'s team, its values
 * appended to `params` (placeholders continue after the ones already there).
 */
export function segmentFilterSql(filter: SegmentFilter, alias: string, scope: SegmentScope, params: unknown[]): string {
  return `(${itemsSql(alias, filter.match, filter.conditions, scope, params)})`;
}

/**
 * Whether one contact of `scope`'s team matches `filter` now: the same compiled SQL as counts,
 * pages and campaign preparation, over that one row (automation branches ask it per contact). A
 * contact of another team, or one that no longer exists, matches nothing. It reads one contact by
 * its primary key and probes its activity by key, so it runs on the caller's connection, outside
 * the segment budget, which bounds scans of a whole book.
 */
export async function contactMatchesFilter(
  sql: SqlExecutor,
  scope: SegmentScope,
  contactId: string,
  filter: SegmentFilter,
): Promise<boolean> {
  const params: unknown[] = [contactId, scope.teamId];
  const where = segmentFilterSql(filter, 'c', scope, params);
  const [row] = await sql.query<{ matches: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId" AND b."teamId" = $2::int
        WHERE c.id = $1 AND ${where}
     ) AS matches`,
    params,
  );
  return row.matches;
}
