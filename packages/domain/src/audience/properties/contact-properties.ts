import { z } from 'zod';
import { MAX_PROPERTY_NAME_LENGTH } from '@mailrail/domain/audience/contact-input';

// A contact book's typed property registry: which properties its contacts have, how to read them
// (string, number, boolean, date) and what to write when a contact has none (the fallback). The
// API validates with these schemas, the import fills the registry from its column mapping with the
// types detected here, and the dashboard shows columns, edit fields and typed segment fields from it.
// Values themselves stay strings in Contact.properties (the useSend contact shape is unchanged).

export const PROPERTY_TYPES = ['string', 'number', 'boolean', 'date'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

/** At most this many properties per book (an import has at most 200 columns). */
export const MAX_BOOK_PROPERTIES = 200;
export const MAX_PROPERTY_FALLBACK_LENGTH = 1000;

/** Names the contact itself has: a property of that name would shadow them in the picker and the builder. */
const BUILT_IN_NAMES = ['email', 'firstname', 'lastname', 'subscribed'];

export const propertyName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_PROPERTY_NAME_LENGTH)
  .refine((n) => !BUILT_IN_NAMES.includes(n.toLowerCase()), 'email, firstName, lastName and subscribed are contact fields, not properties');

export const contactPropertyDefinition = z
  .object({
    name: propertyName,
    type: z.enum(PROPERTY_TYPES).default('string').describe('How values are read and compared; default `string`'),
    fallback: z
      .string()
      .max(MAX_PROPERTY_FALLBACK_LENGTH)
      .nullable()
      .optional()
      .describe('Written in place of the variable for a contact without the property'),
  })
  .meta({ id: 'ContactPropertyInput' });
export type ContactPropertyDefinition = z.infer<typeof contactPropertyDefinition>;

/** The whole registry, as PUT replaces it: names unique case-insensitively, in display order. */
export const contactPropertyList = z
  .array(contactPropertyDefinition)
  .max(MAX_BOOK_PROPERTIES)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((p, i) => {
      const key = p.name.toLowerCase();
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${p.name.slice(0, 40)}" is listed twice` });
      seen.add(key);
    });
  });

// Detection reads the rows the import preview reads. A column is suggested as a type when at least
// nine in ten of its non-empty values read as that type (a stray "n/a" in a column of amounts keeps
// it a number: such a value is stored as written and never matches a number comparison); otherwise
// it is a string. The user confirms the suggestion either way.
// All patterns are anchored and linear (npm run lint:recheck).
const NUMBER_TEXT = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d{1,3})?$/;
const BOOLEAN_TRUE = new Set(['true', 'yes', 'y', 'on']);
const BOOLEAN_FALSE = new Set(['false', 'no', 'n', 'off']);
/** A calendar day `YYYY-MM-DD`, optionally followed by a time (`T` or space, then anything). */
const DAY_TEXT = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])([T ].{0,40})?$/;

const readsAsNumber = (v: string) => NUMBER_TEXT.test(v.trim());
const readsAsBoolean = (v: string) => BOOLEAN_TRUE.has(v.trim().toLowerCase()) || BOOLEAN_FALSE.has(v.trim().toLowerCase());
const readsAsDate = (v: string) => DAY_TEXT.test(v.trim());

/** Share of a column's non-empty values that must read as a type for it to be suggested. */
const DETECTION_SHARE = 0.9;

/** The type a column's values suggest: number, boolean or date when nine in ten of them read so, else string. */
export function detectPropertyType(values: readonly string[]): PropertyType {
  const present = values.map((v) => v.trim()).filter((v) => v !== '');
  if (present.length === 0) return 'string';
  const enough = (reads: (v: string) => boolean) => present.filter(reads).length >= present.length * DETECTION_SHARE;
  if (enough(readsAsNumber)) return 'number';
  if (enough(readsAsBoolean)) return 'boolean';
  if (enough(readsAsDate)) return 'date';
  return 'string';
}

/**
 * A value as the import stores it for a property of this type: booleans written as yes/no/on/off
 * become "true"/"false" (what the segment compiler compares); every other value is kept as written,
 * including one that does not read as its type (it is never compared as that type, and never lost).
 */
export function normalisePropertyValue(type: PropertyType, value: string): string {
  if (type !== 'boolean') return value;
  const v = value.trim().toLowerCase();
  if (BOOLEAN_TRUE.has(v) || v === '1') return 'true';
  if (BOOLEAN_FALSE.has(v) || v === '0') return 'false';
  return value;
}

/** The type as PostgreSQL's "ContactPropertyType" enum spells it, and back. */
export const toStoredPropertyType = (t: PropertyType) => t.toUpperCase() as 'STRING' | 'NUMBER' | 'BOOLEAN' | 'DATE';
export const fromStoredPropertyType = (t: string) => t.toLowerCase() as PropertyType;

/** A property as the API answers it. */
export const contactPropertyView = z
  .object({
    name: z.string(),
    type: z.enum(PROPERTY_TYPES),
    fallback: z.string().nullable(),
  })
  .meta({ id: 'ContactProperty' });
export type ContactPropertyView = z.infer<typeof contactPropertyView>;

/**
 * The registry's fallbacks by property name, for the renderer (renderTemplate's `defaultFallbacks`):
 * a variable without its own fallback falls back to these. An empty or unset fallback is no fallback.
 */
export function registryFallbacks(rows: readonly { name: string; fallback: string | null }[] | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of rows ?? []) if (r.fallback) out[r.name] = r.fallback;
  return out;
}
