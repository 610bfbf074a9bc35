import { contactInput, updateContactInput } from '@mailrail/domain/audience/contact-input';
import { z } from 'zod';
import { MAX_ID_LENGTH, MAX_QUERY_LIST_LENGTH } from '../http/limits';
import { intString } from '../http/query';

export const MAX_BULK_CONTACTS = 10_000;
export const MAX_BULK_DELETE = 1000;
export const MAX_LIST_LIMIT = 5000;

// The contact rules are the domain's (shared with the CSV import in the worker).
export { contactInput, type ContactInput } from '@mailrail/domain/audience/contact-input';
export const updateContactBody = updateContactInput;
export type UpdateContactInput = z.infer<typeof updateContactBody>;

export const bulkContactsBody = z
  .array(contactInput)
  .min(1, 'At least one contact is required')
  .max(MAX_BULK_CONTACTS, `Cannot add more than ${MAX_BULK_CONTACTS} contacts in a single bulk request`);

export const bulkDeleteBody = z.object({
  contactIds: z.array(z.string().min(1).max(MAX_ID_LENGTH)).min(1).max(MAX_BULK_DELETE),
});

// Path identifiers: the interface's Limits table asks for 3 characters on these routes.
const pathId = (min: number) => z.string().min(min).max(MAX_ID_LENGTH);
export const bookPath = z.object({ contactBookId: pathId(3) });
export const anyBookPath = z.object({ contactBookId: pathId(1) });
export const contactPath = z.object({ contactBookId: pathId(1), contactId: pathId(1) });
export const upsertPath = z.object({ contactBookId: pathId(3), contactId: pathId(1) });

const positiveInt = (max?: number) => intString(1, max);

// `?emails=a,b`, also repeated (`?emails=a&emails=b`); an empty list is no filter.
const commaList = z
  .union([z.string().max(MAX_QUERY_LIST_LENGTH), z.array(z.string().max(MAX_QUERY_LIST_LENGTH)).max(MAX_LIST_LIMIT)])
  .transform((v) =>
    (Array.isArray(v) ? v : [v])
      .flatMap((s) => s.split(','))
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string()).max(MAX_LIST_LIMIT))
  .transform((l) => (l.length ? l : undefined));

export const MAX_SEARCH_LENGTH = 200;

export const listContactsQuery = z.object({
  page: positiveInt().default(1),
  limit: positiveInt(MAX_LIST_LIMIT).default(MAX_LIST_LIMIT),
  emails: commaList.transform((l) => l?.map((e) => e.toLowerCase())).optional(),
  ids: commaList.optional(),
  search: z.string().max(MAX_SEARCH_LENGTH).optional().describe('Contains, case-insensitive, in email, firstName or lastName'),
  subscribed: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  after: z
    .string()
    .min(1)
    .max(MAX_ID_LENGTH)
    .optional()
    .describe('Keyset paging: only contacts whose id is greater (pass the last id you have)'),
});
export type ListContactsQuery = z.infer<typeof listContactsQuery>;

export const exportContactsQuery = z.object({
  segmentId: z.string().min(1).max(MAX_ID_LENGTH).optional().describe('Export only the contacts this segment of the book matches'),
});
