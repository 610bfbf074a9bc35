import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { getEvent, listEvents } from './list-events';
import { recordEvents } from './record-events';
import { eventBatch, eventInput, isBatchBody, eventPath, listEventsQuery, MAX_EVENTS_PER_BATCH, recordEventsBody } from './schemas';

const recorded = z.object({
  id: z.string().describe("mailrail's id of the stored event (time-ordered)"),
  duplicate: z
    .boolean()
    .describe('true when this eventId was stored before with the same event: nothing new was stored, `id` is the first one'),
});

const event = z.object({
  id: z.string(),
  eventId: z
    .string()
    .nullable()
    .describe("The caller's eventId; for a built-in event the key of what caused it (`ses:<SNS message id>`), or null"),
  name: z.string(),
  contactId: z.string(),
  contactBookId: z.string(),
  contactEmail: z.string().nullable().describe("The contact's address now; null once the contact is deleted (its events stay)"),
  properties: z.record(z.string(), z.unknown()),
  source: z.enum(['api', 'mailrail']).describe('`api`: sent with POST /api/v1/events; `mailrail`: emitted by mailrail itself'),
  occurredAt: z.string().describe('When it happened'),
  createdAt: z.string().describe('When mailrail stored it'),
});

const ACCESS =
  "Events have no domain: a key bound to a domain records and reads the whole team's, as it does contact books. FULL keys and dashboard sessions (both roles) only; a SENDING key gets 403.";

const route = declareRoute<ApiDeps>();

export const eventRoutes = [
  route({
    method: 'post',
    path: '/api/v1/events',
    tag: 'Events',
    summary: 'Record custom events about contacts',
    description:
      "mailrail's addition to the useSend API (useSend has no events API), the ground of automations (issue 45). Fields follow Resend's events API " +
      '(its `event` is `name`, its `payload` is `properties`, and `contactId` or `email` names the contact; a contact book is needed with `email` since mailrail keeps contacts per book). ' +
      `One event, or \`{ "events": [...] }\` of 1 to ${MAX_EVENTS_PER_BATCH}: a batch is all or nothing, a 400 names each bad item in \`issues\` (\`events.3.name\`). ` +
      "An unknown contact, or another team's, is a 400 on `contactId`; with `email` and `contactBookId`, a missing contact is created when `createContact` is true (as POST /contactBooks/{id}/contacts does, webhooks and double opt-in included), else a 400. " +
      'With `eventId`, the same event sent again stores nothing and answers the first id (`duplicate: true`); another event under a stored eventId is a 409 NOT_UNIQUE and nothing of the request is stored. ' +
      `Events are kept EVENT_RETENTION_DAYS days (default 90). ${ACCESS}`,
    body: recordEventsBody,
    example: {
      name: 'user.signed_up',
      eventId: 'signup-42',
      email: 'ann@example.org',
      contactBookId: 'book_id',
      createContact: true,
      properties: { plan: 'pro' },
    },
    response: z.union([recorded, z.object({ data: z.array(recorded).describe('One per event, in the order sent') })]),
    errors: [409],
    // The shape is decided by the `events` key, so each shape's own errors are reported.
    parseBody: (body) => (isBatchBody(body) ? parseOrThrow(eventBatch, body) : parseOrThrow(eventInput, body)),
    handle: async (deps, { auth, body }) => {
      if ('events' in body) return { data: await recordEvents(deps, auth, body.events, (i, field) => ['events', i, field]) };
      const [recorded] = await recordEvents(deps, auth, [body], (_i, field) => [field]);
      return recorded;
    },
  }),
  route({
    method: 'get',
    path: '/api/v1/events',
    tag: 'Events',
    summary: "The team's custom events",
    description: `Newest first by \`occurredAt\`, paged by \`cursor\`. ${ACCESS}`,
    query: listEventsQuery,
    response: z.object({
      data: z.array(event),
      nextCursor: z.string().nullable().describe('Pass as `cursor` for older events; null on the last page'),
    }),
    errors: [],
    handle: (deps, { auth, query }) => listEvents(deps, auth, query),
  }),
  route({
    method: 'get',
    path: '/api/v1/events/:eventId',
    tag: 'Events',
    summary: 'One custom event',
    description: `By mailrail's id; another team's event is a 404. ${ACCESS}`,
    params: eventPath,
    response: event,
    handle: (deps, { auth, params }) => getEvent(deps, auth, params.eventId),
  }),
];
