import {
  isSegmentGroup,
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
//   string that reads as a decimal number ("42", " -1.5 ", "1e3");
// - notEquals is the exact negation of equals (a missing value is "not equal"); isNotSet of isSet.

/** Escapes LIKE's wildcards (and its escape character, backslash) in user text. */
export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);

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
      return `${num} > ${bind(params, c.value, '::numeric')}`;
    case 'lt':
      return `${num} < ${bind(params, c.value, '::numeric')}`;
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
  }
}

function conditionSql(a: string, c: SegmentCondition, params: unknown[]): string {
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
  }
}

function itemsSql(a: string, match: 'all' | 'any', items: (SegmentCondition | SegmentGroup)[], params: unknown[]): string {
  const parts = items.map(
    (item) => `(${isSegmentGroup(item) ? itemsSql(a, item.match, item.conditions, params) : conditionSql(a, item, params)})`,
  );
  return parts.join(match === 'all' ? ' AND ' : ' OR ');
}

/**
 * The filter as a boolean SQL expression over the contact row `alias`, its values appended to
 * `params` (placeholders continue after the ones already there).
 */
export function segmentFilterSql(filter: SegmentFilter, alias: string, params: unknown[]): string {
  return `(${itemsSql(alias, filter.match, filter.conditions, params)})`;
}
