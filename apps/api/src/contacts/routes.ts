import { UnsubscribeReason } from '@mailrail/platform/db/generated/enums';
import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { exportContactsCsv } from './export';
import {
  bulkDeleteContacts,
  bulkUpsertContacts,
  createContact,
  deleteContact,
  getContactJson,
  listContactsJson,
  updateContact,
} from './service';
import {
  anyBookPath,
  bookPath,
  bulkContactsBody,
  bulkDeleteBody,
  contactInput,
  contactPath,
  exportContactsQuery,
  listContactsQuery,
  updateContactBody,
  upsertPath,
} from './schemas';

export const contactSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    properties: z.record(z.string(), z.unknown()),
    contactBookId: z.string(),
    subscribed: z.boolean(),
    unsubscribeReason: z.enum(UnsubscribeReason).nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Contact' });

const contactId = z.object({ contactId: z.string() });

const route = declareRoute<ApiDeps>();
const tag = 'Contacts';
const base = '/api/v1/contactBooks/:contactBookId/contacts';
const example = { email: 'ada@example.org', firstName: 'Ada', lastName: 'Lovelace', properties: { company: 'Analytical' } };
const doubleOptIn =
  "In a book with double opt-in, new contacts stay pending and get a confirmation from `doubleOptInFrom`, else `hello@<the team's oldest verified domain>`. " +
  "With a key bound to a domain it always leaves from that domain: `doubleOptInFrom` only when it is on the key's domain, else `hello@<the key's domain>` (nothing is sent if that domain is not verified).";

export const contactRoutes = [
  route({
    method: 'post',
    path: base,
    tag,
    summary: 'Create a contact (an upsert by email)',
    description: doubleOptIn,
    params: bookPath,
    body: contactInput,
    response: contactId,
    example,
    handle: (deps, { auth, params, body }) => createContact(deps, auth, params.contactBookId, body),
  }),
  route({
    method: 'get',
    path: base,
    tag,
    summary: 'List contacts of a book, ordered by id',
    description:
      '`search` matches email, firstName or lastName (contains, case-insensitive); `subscribed` filters on the state; ' +
      '`after` pages by keyset (contacts with a greater id; pass the last id of the previous page, with page 1), which stays fast deep into a large book.',
    params: anyBookPath,
    query: listContactsQuery,
    response: z.array(
      contactSchema
        .extend({
          suppressed: z
            .boolean()
            .describe("The address is on the team's suppression list: no email reaches it, subscribed or not (mailrail; not in useSend)"),
        })
        .meta({ id: 'ContactListItem' }),
    ),
    // Up to 5000 contacts: sent as built by PostgreSQL, without hashing megabytes for an ETag.
    serve: async (deps, { auth, params, query }, _req, res) => {
      res.type('json').end(await listContactsJson(deps, auth, params.contactBookId, query));
    },
  }),
  route({
    method: 'get',
    path: `${base}/export`,
    tag,
    summary: 'Export the book (or one of its segments) as CSV, streamed',
    description:
      'Columns: email, firstName, lastName, subscribed, createdAt, then one per property name found (sorted, at most 500). ' +
      'Sent as `Content-Disposition: attachment`; read in batches by id, so any size streams in bounded memory: no contact twice, each as it was when its batch was read, one added or deleted meanwhile may or may not appear. ' +
      'A team runs at most EXPORT_CONCURRENCY_PER_TEAM exports at once (one more: 429 with Retry-After; the server full: 503), and a client that takes nothing for EXPORT_IDLE_TIMEOUT_MS is cut off. ' +
      "A cell that would start a spreadsheet formula (`=`, `+`, `-`, `@`, tab, CR) is written with a leading `'` (CSV injection); imports read it back as it was." +
      ' With `segmentId`, a filter over the cost budget answers 400, and each statement is bounded by SEGMENT_QUERY_TIMEOUT_MS: a filter too slow for it answers 503 SERVICE_UNAVAILABLE before the first byte, or breaks the connection after.',
    params: anyBookPath,
    query: exportContactsQuery,
    response: z.string().describe('text/csv'),
    contentType: 'text/csv',
    serve: (deps, { auth, params, query }, _req, res) => exportContactsCsv(deps, auth, params.contactBookId, query.segmentId, res),
  }),
  route({
    method: 'post',
    path: `${base}/bulk`,
    tag,
    summary: 'Create or update up to 10,000 contacts in one request',
    description: doubleOptIn,
    params: bookPath,
    body: bulkContactsBody,
    response: z.object({ message: z.string(), count: z.number().int() }),
    example: [example, { email: 'grace@example.org', subscribed: true }],
    handle: (deps, { auth, params, body }) => bulkUpsertContacts(deps, auth, params.contactBookId, body),
  }),
  route({
    method: 'delete',
    path: `${base}/bulk`,
    tag,
    summary: 'Delete up to 1,000 contacts',
    params: bookPath,
    body: bulkDeleteBody,
    response: z.object({ success: z.boolean(), count: z.number().int() }),
    example: { contactIds: ['c1a2b3', 'c4d5e6'] },
    handle: (deps, { auth, params, body }) => bulkDeleteContacts(deps, auth, params.contactBookId, body.contactIds),
  }),
  route({
    method: 'get',
    path: `${base}/:contactId`,
    tag,
    summary: 'Get a contact',
    params: contactPath,
    response: contactSchema,
    serve: async (deps, { auth, params }, _req, res) => {
      res.type('json').send(await getContactJson(deps, auth, params.contactBookId, params.contactId));
    },
  }),
  route({
    method: 'put',
    path: `${base}/:contactId`,
    tag,
    summary: 'Upsert a contact by email (the path id is not used)',
    description: doubleOptIn,
    params: upsertPath,
    body: contactInput,
    response: contactId,
    example,
    handle: (deps, { auth, params, body }) => createContact(deps, auth, params.contactBookId, body),
  }),
  route({
    method: 'patch',
    path: `${base}/:contactId`,
    tag,
    summary: 'Update a contact (may re-subscribe)',
    params: contactPath,
    body: updateContactBody,
    response: contactId,
    example: { subscribed: true },
    handle: (deps, { auth, params, body }) => updateContact(deps, auth, params.contactBookId, params.contactId, body),
  }),
  route({
    method: 'delete',
    path: `${base}/:contactId`,
    tag,
    summary: 'Delete a contact',
    params: contactPath,
    response: z.object({ success: z.boolean() }),
    handle: (deps, { auth, params }) => deleteContact(deps, auth, params.contactBookId, params.contactId),
  }),
];
