import { z } from 'zod';

export const MAX_BULK_CONTACTS = 10_000;
export const MAX_BULK_DELETE = 1000;
export const MAX_LIST_LIMIT = 5000;

/** Trimmed and lower-cased before the format check: addresses are unique per book case-insensitively. */
const email = z.string().trim().toLowerCase().pipe(z.email('Invalid email address').max(320));
const name = z.string().max(255);
const properties = z.record(z.string().max(255), z.string().max(10_000));

export const contactInput = z.object({
  email,
  firstName: name.optional(),
  lastName: name.optional(),
  properties: properties.optional(),
  subscribed: z.boolean().optional(),
});
export type ContactInput = z.infer<typeof contactInput>;

export const updateContactBody = z.object({
  firstName: name.optional(),
  lastName: name.optional(),
  properties: properties.optional(),
  subscribed: z.boolean().optional(),
});
export type UpdateContactInput = z.infer<typeof updateContactBody>;

export const bulkContactsBody = z
  .array(contactInput)
  .min(1, 'At least one contact is required')
  .max(MAX_BULK_CONTACTS, `Cannot add more than ${MAX_BULK_CONTACTS} contacts in a single bulk request`);

export const bulkDeleteBody = z.object({
  contactIds: z.array(z.string().min(1)).min(1).max(MAX_BULK_DELETE),
});

// Path identifiers: the interface's Limits table asks for 3 characters on these routes.
export const bookPath = z.object({ contactBookId: z.string().min(3) });
export const anyBookPath = z.object({ contactBookId: z.string().min(1) });
export const contactPath = z.object({ contactBookId: z.string().min(1), contactId: z.string().min(1) });
export const upsertPath = z.object({ contactBookId: z.string().min(3), contactId: z.string().min(1) });

const positiveInt = (max?: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a positive integer')
    .transform(Number)
    .pipe(max === undefined ? z.number().int().min(1) : z.number().int().min(1).max(max));

// `?emails=a,b`, also repeated (`?emails=a&emails=b`); an empty list is no filter.
const commaList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(z.string()).max(MAX_LIST_LIMIT))
  .transform((l) => (l.length ? l : undefined));

export const listContactsQuery = z.object({
  page: positiveInt().default(1),
  limit: positiveInt(MAX_LIST_LIMIT).default(MAX_LIST_LIMIT),
  emails: commaList.transform((l) => l?.map((e) => e.toLowerCase())).optional(),
  ids: commaList.optional(),
});
export type ListContactsQuery = z.infer<typeof listContactsQuery>;
