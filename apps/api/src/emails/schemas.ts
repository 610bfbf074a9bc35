import { z } from 'zod';
import { addressField } from '@mailrail/domain/emails/address';
import { HEADER_NAME, isReservedHeader, isSafeHeaderValue } from '@mailrail/domain/emails/headers';
import { MAX_RECIPIENTS } from '@mailrail/domain/emails/email-intake';
import {
  MAX_ATTACHMENT_BASE64_LENGTH,
  MAX_BODY_LENGTH,
  MAX_HEADER_VALUE_LENGTH,
  MAX_ID_LENGTH,
  MAX_KEY_LENGTH,
  MAX_SUBJECT_LENGTH,
  MAX_VALUE_LENGTH,
} from '../http/limits';
import { isoDateTime } from '../http/query';

// The send payload of useSend's v1 API (docs/emails.md). Unknown fields are stripped; a wrong type is a 400.
// Every address field takes `addr` or `Name <addr>` (packages/domain/src/emails/address.ts).

/** One address or a list of them; always a list after parsing. */
const addressList = z
  .union([addressField(), z.array(addressField()).min(1, 'must contain at least one address')])
  .transform((v) => (Array.isArray(v) ? v : [v]));

const headersField = z
  .record(z.string().max(MAX_KEY_LENGTH), z.string().min(1).max(MAX_HEADER_VALUE_LENGTH))
  .superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      if (!HEADER_NAME.test(name))
        ctx.addIssue({ code: 'custom', path: [name], message: 'header name has characters that are not allowed' });
      else if (isReservedHeader(name))
        ctx.addIssue({ code: 'custom', path: [name], message: `header ${name} is set by mailrail and cannot be overridden` });
      if (!isSafeHeaderValue(value)) ctx.addIssue({ code: 'custom', path: [name], message: 'header value must not contain CR or LF' });
    }
  });

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const base64Content = z
  .string()
  .min(1)
  .max(MAX_ATTACHMENT_BASE64_LENGTH, { abort: true })
  .refine((s) => {
    const compact = s.includes('\n') || s.includes('\r') ? s.replace(/\r?\n/g, '') : s;
    return compact.length % 4 === 0 && BASE64.test(compact);
  }, 'must be base64');

const attachment = z.object({
  filename: z
    .string()
    .min(1)
    .max(255)
    .refine((f) => !/[\r\n"\\/]/.test(f), 'must not contain CR, LF, quotes or slashes'),
  content: base64Content,
});

const scheduledAtField = isoDateTime();

export const sendEmailPayload = z
  .object({
    to: addressList,
    from: addressField(),
    subject: z.string().min(1).max(MAX_SUBJECT_LENGTH).optional(),
    templateId: z.string().min(1).max(MAX_ID_LENGTH).optional(),
    variables: z
      .record(z.string().max(MAX_KEY_LENGTH), z.union([z.string().max(MAX_VALUE_LENGTH), z.number(), z.boolean(), z.null()]))
      .optional(),
    replyTo: addressList.optional(),
    cc: addressList.optional(),
    bcc: addressList.optional(),
    text: z.string().min(1).max(MAX_BODY_LENGTH).nullable().optional(),
    html: z.string().min(1).max(MAX_BODY_LENGTH).nullable().optional(),
    headers: headersField.optional(),
    attachments: z.array(attachment).max(10, 'at most 10 attachments').optional(),
    scheduledAt: scheduledAtField.optional(),
    inReplyToId: z.string().min(1).max(MAX_ID_LENGTH).nullable().optional(),
  })
  .superRefine((p, ctx) => {
    const recipients = p.to.length + (p.cc?.length ?? 0) + (p.bcc?.length ?? 0);
    if (recipients > MAX_RECIPIENTS) {
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `at most ${MAX_RECIPIENTS} recipients (to, cc and bcc together), got ${recipients}`,
      });
    }
    // With a template, the template supplies subject and body.
    if (!p.templateId) {
      if (!p.subject) ctx.addIssue({ code: 'custom', path: ['subject'], message: 'Either subject or templateId must be provided.' });
      if (!p.text && !p.html) ctx.addIssue({ code: 'custom', path: ['html'], message: 'Either text or html content must be provided.' });
    }
  });

export type SendEmailPayload = z.infer<typeof sendEmailPayload>;

export const MAX_BATCH = 100;

export const batchPayload = z
  .array(sendEmailPayload, { message: 'must be an array of emails' })
  .min(1, 'No emails provided for batch send')
  .max(MAX_BATCH, `Cannot send more than ${MAX_BATCH} emails in a single batch request`);

export const emailIdParam = z.object({ emailId: z.string().min(3, 'must be at least 3 characters').max(MAX_ID_LENGTH) });

export const rescheduleBody = z.object({ scheduledAt: scheduledAtField });
