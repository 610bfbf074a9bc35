import { normalisedEmailField } from '@mailrail/domain/emails/address';
import { z } from 'zod';

// The one definition of a contact as clients give it: the contacts API (create, upsert, bulk)
// and the CSV import in the worker validate with these, so a row the import takes is a contact the
// API would take, and the other way round.

/** First and last names (the API's MAX_NAME_LENGTH). */
export const MAX_CONTACT_NAME_LENGTH = 255;
/** A property name (the API's MAX_KEY_LENGTH). */
export const MAX_PROPERTY_NAME_LENGTH = 128;
/** A property value (the API's MAX_VALUE_LENGTH). */
export const MAX_PROPERTY_VALUE_LENGTH = 10_000;

const name = z.string().max(MAX_CONTACT_NAME_LENGTH);
const properties = z.record(z.string().max(MAX_PROPERTY_NAME_LENGTH), z.string().max(MAX_PROPERTY_VALUE_LENGTH));

export const contactInput = z.object({
  email: normalisedEmailField(),
  firstName: name.optional(),
  lastName: name.optional(),
  properties: properties.optional(),
  subscribed: z.boolean().optional(),
});
export type ContactInput = z.infer<typeof contactInput>;

export const updateContactInput = z.object({
  firstName: name.optional(),
  lastName: name.optional(),
  properties: properties.optional(),
  subscribed: z.boolean().optional(),
});

/** Keys that match a declared book variable case-insensitively take the variable's spelling. */
export function canonicalProperties<V>(variables: readonly string[], props: Record<string, V> | undefined): Record<string, V> {
  if (!props) return {};
  const byLower = new Map(variables.map((v) => [v.toLowerCase(), v]));
  const out: Record<string, V> = {};
  for (const [k, v] of Object.entries(props)) out[byLower.get(k.toLowerCase()) ?? k] = v;
  return out;
}

/**
 * One entry per address, in first-seen order: later values win, properties merge, as sequential
 * upserts would. Properties come out canonical (see canonicalProperties).
 */
export function mergeDuplicateContacts(variables: readonly string[], inputs: readonly ContactInput[]): ContactInput[] {
  const byEmail = new Map<string, ContactInput>();
  for (const c of inputs) {
    const props = canonicalProperties(variables, c.properties);
    const prev = byEmail.get(c.email);
    if (!prev) {
      byEmail.set(c.email, { ...c, properties: props });
      continue;
    }
    byEmail.set(c.email, {
      email: c.email,
      firstName: c.firstName ?? prev.firstName,
      lastName: c.lastName ?? prev.lastName,
      properties: { ...prev.properties, ...props },
      subscribed: c.subscribed ?? prev.subscribed,
    });
  }
  return [...byEmail.values()];
}
