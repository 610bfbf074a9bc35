import { z } from 'zod';
import { fromSpreadsheetSafe } from '@mailrail/domain/audience/csv-cells';
import { contactInput, MAX_PROPERTY_NAME_LENGTH, type ContactInput } from '@mailrail/domain/audience/contact-input';
import { normalisePropertyValue, type PropertyType } from '@mailrail/domain/audience/properties/contact-properties';

// How the columns of a CSV file become contact fields, shared by the API (preview, upload checks)
// and the worker (the import itself): one guess, one validation, one row rule.

export const FIELD_TARGETS = ['email', 'firstName', 'lastName', 'subscribed', 'ignore'] as const;
const PROPERTY_PREFIX = 'properties.';

export type ImportTarget = (typeof FIELD_TARGETS)[number] | `properties.${string}`;

export const importTarget = z
  .string()
  .max(PROPERTY_PREFIX.length + MAX_PROPERTY_NAME_LENGTH)
  .refine(
    (t) => (FIELD_TARGETS as readonly string[]).includes(t) || (t.startsWith(PROPERTY_PREFIX) && t.length > PROPERTY_PREFIX.length),
    'must be email, firstName, lastName, subscribed, ignore or properties.<name>',
  )
  .transform((t) => t as ImportTarget)
  .describe('`email`, `firstName`, `lastName`, `subscribed`, `properties.<name>` or `ignore`');

/** Header → target, as the client sends it (a CSV header is at most this long). */
export const MAX_HEADER_LENGTH = 256;
export const MAX_COLUMNS = 200;
export const importMapping = z.record(z.string().max(MAX_HEADER_LENGTH), importTarget);
export type ImportMapping = z.infer<typeof importMapping>;

// Headers are compared without case, spaces, dashes and underscores: "E-mail Address" = "emailaddress".
const GUESSES: [ImportTarget, string[]][] = [
  ['email', ['email', 'emailaddress', 'mail', 'emailid', 'contactemail']],
  ['firstName', ['firstname', 'first', 'givenname', 'fname', 'forename']],
  ['lastName', ['lastname', 'last', 'surname', 'familyname', 'lname']],
  ['subscribed', ['subscribed', 'issubscribed', 'subscription', 'optin', 'optedin']],
  // The export's own date columns: the database sets them, so re-importing an export adds no property.
  ['ignore', ['createdat', 'updatedat']],
];

const squash = (header: string) => header.toLowerCase().replace(/[\s_.-]+/g, '');

/** The target a header suggests on its own: a known field name, else a property of the same name. */
export function guessTarget(header: string): ImportTarget {
  const key = squash(header);
  for (const [target, names] of GUESSES) if (names.includes(key)) return target;
  const name = header.trim();
  if (!name || name.length > MAX_PROPERTY_NAME_LENGTH) return 'ignore';
  return `properties.${name}`;
}

/** Each header's guess; only the first column guessed as a field keeps it, later ones become properties. */
export function guessMapping(headers: readonly string[]): ImportMapping {
  return Object.fromEntries(resolveTargets(headers, {}).map((t, i) => [headers[i], t]));
}

function resolveTargets(headers: readonly string[], explicit: ImportMapping): ImportTarget[] {
  const taken = new Set<string>(Object.values(explicit).filter((t) => t !== 'ignore'));
  return headers.map((h) => {
    if (Object.hasOwn(explicit, h)) return explicit[h];
    let t = guessTarget(h);
    if (t !== 'ignore' && taken.has(t)) t = t.startsWith(PROPERTY_PREFIX) || !h.trim() ? 'ignore' : `properties.${h.trim()}`;
    if (t !== 'ignore' && taken.has(t)) t = 'ignore';
    taken.add(t);
    return t;
  });
}

export type ResolvedColumns = { ok: true; columns: ImportTarget[] } | { ok: false; message: string };

/**
 * The target of each column by position: the explicit mapping where it names the header, the
 * guess elsewhere. Fails when the mapping names a header the file does not have, maps two columns
 * to one target, or leaves no column for `email`.
 */
export function resolveColumns(headers: readonly string[], explicit: ImportMapping = {}): ResolvedColumns {
  if (headers.length > MAX_COLUMNS)
    return { ok: false, message: `The file has ${headers.length} columns; at most ${MAX_COLUMNS} are supported` };
  const unknown = Object.keys(explicit).filter((h) => !headers.includes(h));
  if (unknown.length) return { ok: false, message: `mapping names columns the file does not have: ${unknown.slice(0, 5).join(', ')}` };
  const columns = resolveTargets(headers, explicit);
  const used = columns.filter((t) => t !== 'ignore');
  const twice = used.find((t, i) => used.indexOf(t) !== i);
  if (twice) return { ok: false, message: `Two columns are mapped to ${twice}` };
  if (!columns.includes('email')) {
    return { ok: false, message: 'The file has no email column: name a header "email" or map a column to email' };
  }
  return { ok: true, columns };
}

const TRUE = new Set(['true', 'yes', 'y', '1', 'subscribed', 'on']);
const FALSE = new Set(['false', 'no', 'n', '0', 'unsubscribed', 'off']);

export type RowResult = { ok: true; contact: ContactInput } | { ok: false; reason: string };

/**
 * One data row as a contact, validated by the contacts API's own rule. Empty cells are absent
 * (they never blank a stored name or property); cells beyond the header are an error. A property
 * the book's registry types is stored in its type's form (a boolean "yes" as "true").
 */
export function rowToContact(
  columns: readonly ImportTarget[],
  cells: readonly string[],
  propertyTypes: Readonly<Record<string, PropertyType>> = {},
): RowResult {
  if (cells.length > columns.length) return { ok: false, reason: `The row has ${cells.length} fields, the header ${columns.length}` };
  const input: Record<string, unknown> = {};
  let properties: Record<string, string> | undefined;
  for (let i = 0; i < cells.length; i++) {
    const target = columns[i];
    // A cell the export wrote formula-safe ("'=x") is read back as it was ("=x"): csv-cells.ts.
    const value = fromSpreadsheetSafe(cells[i].trim());
    if (target === 'ignore' || value === '') continue;
    if (target === 'subscribed') {
      const v = value.toLowerCase();
      if (TRUE.has(v)) input.subscribed = true;
      else if (FALSE.has(v)) input.subscribed = false;
      else return { ok: false, reason: 'subscribed must be true or false (yes/no, 1/0)' };
    } else if (target.startsWith(PROPERTY_PREFIX)) {
      const name = target.slice(PROPERTY_PREFIX.length);
      const type = Object.hasOwn(propertyTypes, name) ? propertyTypes[name] : 'string';
      (properties ??= {})[name] = normalisePropertyValue(type, value);
    } else {
      input[target] = value;
    }
  }
  if (input.email === undefined) return { ok: false, reason: 'email is empty' };
  if (properties) input.properties = properties;
  const parsed = contactInput.safeParse(input);
  if (parsed.success) return { ok: true, contact: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue.path.length ? issue.path.join('.') : 'row';
  return { ok: false, reason: `${field}: ${issue.message}` };
}
