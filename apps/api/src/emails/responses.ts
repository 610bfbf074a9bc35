import { EmailSource, EmailStatus } from '@mailrail/platform/db/generated/enums';
import { z } from 'zod';
import { explanation } from '../addresses/routes';

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

export const emailResponse = emailListItem
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
