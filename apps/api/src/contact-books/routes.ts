import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { createContactBook, deleteContactBook, getContactBook, listContactBooks, updateContactBook } from './service';
import { contactBookIdParams, createContactBookBody, updateContactBookBody } from './schemas';

const contactBook = z
  .object({
    id: z.string(),
    name: z.string(),
    teamId: z.number().int(),
    properties: z.record(z.string(), z.string()),
    variables: z.array(z.string()),
    emoji: z.string(),
    doubleOptInEnabled: z.boolean(),
    doubleOptInFrom: z.string().nullable(),
    doubleOptInSubject: z.string().nullable(),
    doubleOptInContent: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('Editor document ({type: "doc", content: [...]}); sent as a string'),
    createdAt: z.string(),
    updatedAt: z.string(),
    _count: z.object({ contacts: z.number().int() }),
    subscribedCount: z.number().int().describe('Subscribed contacts of the book (the audience of a campaign to the whole book)'),
  })
  .meta({ id: 'ContactBook' });

const route = declareRoute<ApiDeps>();
const tag = 'Contact books';
const params = contactBookIdParams;

export const contactBookRoutes = [
  route({
    method: 'post',
    path: '/api/v1/contactBooks',
    tag,
    summary: 'Create a contact book',
    body: createContactBookBody,
    response: contactBook,
    example: { name: 'Newsletter', emoji: '📰', variables: ['company'], properties: { source: 'website' } },
    handle: (deps, { auth, body }) => createContactBook(deps, auth, body),
  }),
  route({
    method: 'get',
    path: '/api/v1/contactBooks',
    tag,
    summary: 'List contact books',
    response: z.array(contactBook),
    handle: (deps, { auth }) => listContactBooks(deps, auth),
  }),
  route({
    method: 'get',
    path: '/api/v1/contactBooks/:contactBookId',
    tag,
    summary: 'Get a contact book',
    params,
    response: contactBook,
    handle: (deps, { auth, params }) => getContactBook(deps, auth, params.contactBookId),
  }),
  route({
    method: 'patch',
    path: '/api/v1/contactBooks/:contactBookId',
    tag,
    summary: 'Update a contact book',
    params,
    body: updateContactBookBody,
    response: contactBook,
    example: { name: 'Weekly newsletter' },
    handle: (deps, { auth, params, body }) => updateContactBook(deps, auth, params.contactBookId, body),
  }),
  route({
    method: 'delete',
    path: '/api/v1/contactBooks/:contactBookId',
    tag,
    summary: 'Delete a contact book and its contacts',
    params,
    response: z.object({ id: z.string(), success: z.literal(true), message: z.string() }),
    handle: (deps, { auth, params }) => deleteContactBook(deps, auth, params.contactBookId),
  }),
];
