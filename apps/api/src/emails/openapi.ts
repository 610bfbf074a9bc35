import { EmailSource, EmailStatus } from '@mailrail/platform/db/generated/enums';
import { z } from 'zod';
import { explanation } from '../addresses/openapi';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import { listEmailsQuery } from './list-emails';
import { batchPayload, emailIdParam, rescheduleBody, sendEmailPayload } from './schemas';

// Every enum of the document is the database's own (the Prisma enum), never typed again here.
export const emailStatus = z.enum(EmailStatus);

// Address fields are answered as the client sent them (trimmed): `addr` or `Name <addr>`.
const sentAddresses = z.array(z.string()).describe('As sent: `addr@domain` or `Name <addr@domain>` (a named recipient keeps its name)');

export const emailListItem = z
  .object({
    id: z.string(),
    to: sentAddresses,
    from: z.string(),
    subject: z.string(),
    html: z.string().nullable(),
    text: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    latestStatus: emailStatus,
    scheduledAt: z.string().nullable(),
    domainId: z.number().int().nullable(),
    replyTo: sentAddresses,
    cc: sentAddresses,
    bcc: sentAddresses,
  })
  .meta({ id: 'EmailListItem' });

const email = emailListItem
  .extend({
    teamId: z.number().int(),
    emailEvents: z.array(z.object({ emailId: z.string(), status: emailStatus, createdAt: z.string(), data: z.unknown() })),
    recipients: z
      .array(
        z.object({
          email: z.string().describe('As given, `Name <addr>` or `addr`'),
          type: z.enum(['to', 'cc', 'bcc']),
          status: emailStatus.describe(
            "This recipient's outcome: SUPPRESSED when it was on the team's suppression list and not sent to; DELIVERED, BOUNCED, COMPLAINED or DELIVERY_DELAYED when SES named it in that event; otherwise the email's own status",
          ),
          reason: z
            .string()
            .nullable()
            .describe("Why: the suppression reason (HARD_BOUNCE, COMPLAINT, MANUAL), SES's diagnostic code, or the email's error"),
          statusAt: z
            .string()
            .nullable()
            .describe('When the event that decided the outcome happened; null when none did (queued, or not sent)'),
          explanation: explanation
            .nullable()
            .describe('The outcome in plain words, with what mailrail did about it (the same as GET /api/v1/addresses/{address})'),
        }),
      )
      .describe(
        "mailrail's addition to useSend's email: every recipient given, those not sent to included (useSend drops a suppressed cc, bcc or to from `to`/`cc`/`bcc` without a trace; they stay dropped there, for wire compatibility, and are listed here)",
      ),
    source: z
      .enum(EmailSource)
      .describe(
        "mailrail's addition: where the email came from (the send API, the SMTP relay, a campaign, or mail the service sent itself)",
      ),
    attachmentList: z
      .array(
        z.object({
          filename: z.string(),
          contentType: z.string().describe('The MIME type it was sent with'),
          size: z.number().int().describe('Bytes of the file (decoded)'),
        }),
      )
      .describe(
        "mailrail's addition: each attachment's name, type and size, kept after the contents are cleared (the contents are never answered)",
      ),
  })
  .meta({ id: 'Email' });

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

export function documentEmailRoutes(r: DocRegistry) {
  const tag = 'Emails';
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/emails',
    tag,
    summary: 'Send one email (now or at scheduledAt)',
    headers: idempotencyHeader,
    body: sendEmailPayload,
    response: emailId,
    example,
    errors: [400, 401, 403, 409, 413, 429, 503],
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/emails/batch',
    tag,
    summary: 'Send up to 100 emails, validated as a whole',
    headers: idempotencyHeader,
    body: batchPayload,
    response: z.object({ data: z.array(emailId) }),
    example: [example, { ...example, to: 'grace@example.org' }],
    errors: [400, 401, 403, 409, 413, 429, 503],
  });
  documentRoute(r, {
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
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/emails/:emailId',
    tag,
    summary: 'Get an email with its events in time order',
    params: emailIdParam,
    response: email,
  });
  documentRoute(r, {
    method: 'patch',
    path: '/api/v1/emails/:emailId',
    tag,
    summary: 'Reschedule a SCHEDULED email',
    params: emailIdParam,
    body: rescheduleBody,
    response: emailId,
    example: { scheduledAt: '2026-12-01T09:00:00+01:00' },
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/emails/:emailId/cancel',
    tag,
    summary: 'Cancel a SCHEDULED email',
    params: emailIdParam,
    response: emailId,
  });
}
