import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import { getEmail } from './get-email';
import { listEmailsQuery, streamEmailList } from './list-emails';
import { emailListItem, emailResponse } from './responses';
import { cancelEmail, rescheduleEmail } from './schedule-email';
import { batchPayload, emailIdParam, rescheduleBody, sendEmailPayload } from './schemas';
import { acceptBatch, acceptEmail, type SendContext } from './send-emails';

// The email routes' handlers take the process's email intake (its `deps` are the API's).
const route = declareRoute<SendContext>();
const tag = 'Emails';

const idempotencyHeader = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe('Same key and body within 24 h returns the first answer; another body is 409 NOT_UNIQUE'),
});

const emailId = z.object({ emailId: z.string() });
const example = {
  from: 'Acme <hello@example.com>',
  to: ['ada@example.org'],
  subject: 'Welcome',
  html: '<p>Hello {{name}}</p>',
  text: 'Hello',
};

// POST / and /batch are answered ahead of the router by accept-lane.ts, with these declarations'
// path, schema and handler; the router serves what the lane hands on (the dashboard's team
// routes, unusual bodies).
export const sendEmailRoute = route({
  method: 'post',
  path: '/api/v1/emails',
  tag,
  summary: 'Send one email (now or at scheduledAt)',
  headers: idempotencyHeader,
  body: sendEmailPayload,
  response: emailId,
  example,
  errors: [400, 401, 403, 409, 413, 429, 503],
  handle: (send, { auth, body, headers }) => acceptEmail(send, auth, body, headers['idempotency-key']),
});

export const sendBatchRoute = route({
  method: 'post',
  path: '/api/v1/emails/batch',
  tag,
  summary: 'Send up to 100 emails, validated as a whole',
  headers: idempotencyHeader,
  body: batchPayload,
  response: z.object({ data: z.array(emailId) }),
  example: [example, { ...example, to: 'grace@example.org' }],
  errors: [400, 401, 403, 409, 413, 429, 503],
  handle: (send, { auth, body, headers }) => acceptBatch(send, auth, body, headers['idempotency-key']),
});

export const emailRoutes = [
  sendEmailRoute,
  sendBatchRoute,
  route({
    method: 'get',
    path: '/api/v1/emails',
    tag,
    summary: 'List emails, newest first',
    description:
      'Streamed (chunked, no Content-Length or ETag): bodies are read and written piece by piece. An error after the answer started closes the connection. ' +
      '`count` is exact up to EMAIL_LIST_COUNT_CAP (default 10,000) matching emails; when more match it is the cap and `countCapped` is true (absent otherwise). Pages past the cap are still served.',
    query: listEmailsQuery,
    response: z.object({
      data: z.array(emailListItem),
      count: z.number().int().describe('Emails matching the filter, counted up to EMAIL_LIST_COUNT_CAP'),
      countCapped: z.literal(true).optional().describe('Present (true) only when more emails match than the cap: `count` is then the cap'),
    }),
    // Streamed: a page may hold 100 bodies of up to 40 MB each.
    serve: (send, { auth, query }, _req, res) => streamEmailList(send.deps, auth, query, res),
  }),
  route({
    method: 'get',
    path: '/api/v1/emails/:emailId',
    tag,
    summary: 'Get an email with its events in time order',
    params: emailIdParam,
    response: emailResponse,
    // One email is answered whole (its bodies are bounded by the send limit). While res.json runs,
    // the row, its JSON text and express's Buffer of it (for Content-Length and ETag) are alive
    // together, about three times the body; afterwards only the Buffer being sent remains.
    handle: (send, { auth, params }) => getEmail(send.deps, auth, params.emailId),
  }),
  route({
    method: 'patch',
    path: '/api/v1/emails/:emailId',
    tag,
    summary: 'Reschedule a SCHEDULED email',
    params: emailIdParam,
    body: rescheduleBody,
    response: emailId,
    example: { scheduledAt: '2026-12-01T09:00:00+01:00' },
    handle: (send, { auth, params, body }) => rescheduleEmail(send.deps, auth, params.emailId, body.scheduledAt),
  }),
  route({
    method: 'post',
    path: '/api/v1/emails/:emailId/cancel',
    tag,
    summary: 'Cancel a SCHEDULED email',
    params: emailIdParam,
    response: emailId,
    handle: (send, { auth, params }) => cancelEmail(send.deps, auth, params.emailId),
  }),
];
