import { z } from 'zod';

// The send payload (interface.md, decisions.md). Unknown fields are stripped; a wrong type is a 400.

const emailFormat = z.email({ message: 'must be a valid email address' });
const emailAddress = z.string().trim().pipe(emailFormat);

/** One address or a list of them; always a list after parsing. */
const addressList = z
  .union([emailAddress, z.array(emailAddress).min(1, 'must contain at least one address')])
  .transform((v) => (Array.isArray(v) ? v : [v]));

const NAMED_ADDRESS = /^\s*(?:"?([^"<>]*?)"?\s*)?<([^<>\s]+)>\s*$/;

/** `a@b.com` or `Name <a@b.com>`; the address and its lower-cased domain are split out. */
export function parseFromAddress(from: string): { address: string; domain: string } | null {
  const m = NAMED_ADDRESS.exec(from);
  const address = (m ? m[2] : from).trim();
  if (!emailFormat.safeParse(address).success) return null;
  return { address, domain: address.slice(address.lastIndexOf('@') + 1).toLowerCase() };
}

const fromField = z
  .string()
  .min(1)
  .refine((v) => parseFromAddress(v) !== null, 'must be an email address or "Name <address>"');

// Header names we set ourselves (or SES does): a custom value would break the message or threading.
export const RESERVED_HEADERS = new Set([
  'from', 'to', 'cc', 'bcc', 'subject', 'reply-to', 'sender', 'return-path', 'date', 'message-id',
  'mime-version', 'content-type', 'content-transfer-encoding', 'content-disposition', 'dkim-signature',
  'x-usesend-email-id', 'x-unsend-email-id',
]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const headersField = z.record(z.string(), z.string().min(1)).superRefine((headers, ctx) => {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'header name has characters that are not allowed' });
    else if (RESERVED_HEADERS.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', path: [name], message: `header ${name} is set by mailrail and cannot be overridden` });
    if (/[\r\n]/.test(value)) ctx.addIssue({ code: 'custom', path: [name], message: 'header value must not contain CR or LF' });
  }
});

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const base64Content = z
  .string()
  .min(1)
  .refine((s) => {
    const compact = s.includes('\n') || s.includes('\r') ? s.replace(/\r?\n/g, '') : s;
    return compact.length % 4 === 0 && BASE64.test(compact);
  }, 'must be base64');

const attachment = z.object({
  filename: z.string().min(1).max(255).refine((f) => !/[\r\n"\\/]/.test(f), 'must not contain CR, LF, quotes or slashes'),
  content: base64Content,
});

const isoDateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).transform((s) => new Date(s));

export const MAX_RECIPIENTS = 50;

export const sendEmailPayload = z
  .object({
    to: addressList,
    from: fromField,
    subject: z.string().min(1).optional(),
    templateId: z.string().min(1).optional(),
    variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
    replyTo: addressList.optional(),
    cc: addressList.optional(),
    bcc: addressList.optional(),
    text: z.string().min(1).nullable().optional(),
    html: z.string().min(1).nullable().optional(),
    headers: headersField.optional(),
    attachments: z.array(attachment).max(10, 'at most 10 attachments').optional(),
    scheduledAt: isoDateTime.optional(),
    inReplyToId: z.string().min(1).nullable().optional(),
  })
  .superRefine((p, ctx) => {
    const recipients = p.to.length + (p.cc?.length ?? 0) + (p.bcc?.length ?? 0);
    if (recipients > MAX_RECIPIENTS) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: `at most ${MAX_RECIPIENTS} recipients (to, cc and bcc together), got ${recipients}` });
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

export const emailIdParam = z.object({ emailId: z.string().min(3, 'must be at least 3 characters') });

export const rescheduleBody = z.object({ scheduledAt: isoDateTime });
