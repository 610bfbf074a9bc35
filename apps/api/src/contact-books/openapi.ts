import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';
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

export function documentContactBookRoutes(r: DocRegistry) {
  const tag = 'Contact books';
  const params = contactBookIdParams;
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/contactBooks',
    tag,
    summary: 'Create a contact book',
    body: createContactBookBody,
    response: contactBook,
    example: { name: 'Newsletter', emoji: '📰', variables: ['company'], properties: { source: 'website' } },
  });
  documentRoute(r, { method: 'get', path: '/api/v1/contactBooks', tag, summary: 'List contact books', response: z.array(contactBook) });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/contactBooks/:contactBookId',
    tag,
    summary: 'Get a contact book',
    params,
    response: contactBook,
  });
  documentRoute(r, {
    method: 'patch',
    path: '/api/v1/contactBooks/:contactBookId',
    tag,
    summary: 'Update a contact book',
    params,
    body: updateContactBookBody,
    response: contactBook,
    example: { name: 'Weekly newsletter' },
  });
  documentRoute(r, {
    method: 'delete',
    path: '/api/v1/contactBooks/:contactBookId',
    tag,
    summary: 'Delete a contact book and its contacts',
    params,
    response: z.object({ id: z.string(), success: z.literal(true), message: z.string() }),
  });
}
