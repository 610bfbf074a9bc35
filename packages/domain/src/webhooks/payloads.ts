import type { Email, EmailStatus, Prisma } from '@mailrail/platform/db/client';
import { emailStatusWebhookEvent } from './events';
import { recordWebhookEvent } from './outbox';

// The `data` of each event, shaped as useSend's receivers (and usesend-js types) expect.
// Emitting places build it with these helpers so every capability sends the same fields.

export interface EmailEventExtras {
  bounce?: { type: string; subType: string; message?: string };
  failed?: { reason: string };
  suppression?: { type: 'Bounce' | 'Complaint' | 'Manual'; reason: string; source?: string };
  open?: { timestamp: string; userAgent?: string; ip?: string; platform?: string };
  click?: { timestamp: string; url: string; userAgent?: string; ip?: string; platform?: string };
  metadata?: Record<string, unknown>;
}

export type EmailForWebhook = Pick<
  Email,
  'id' | 'from' | 'to' | 'subject' | 'campaignId' | 'contactId' | 'domainId' | 'templateId' | 'skippedRecipients'
>;

/** The columns to read of an email whose status event is recorded (recordEmailStatusEvent). */
export const EMAIL_FOR_WEBHOOK_COLUMNS = {
  id: true,
  teamId: true,
  from: true,
  to: true,
  subject: true,
  campaignId: true,
  contactId: true,
  domainId: true,
  templateId: true,
  skippedRecipients: true,
} as const satisfies Record<keyof EmailForWebhook | 'teamId', true>;

/** The fields every email event carries; db/sql/email-outbox.ts builds the same object in SQL from this type. */
export type EmailWebhookFields = Omit<ReturnType<typeof emailWebhookData>, keyof EmailEventExtras>;

export function emailWebhookData(email: EmailForWebhook, status: EmailStatus, occurredAt: Date, extras: EmailEventExtras = {}) {
  return {
    id: email.id,
    status,
    from: email.from,
    to: email.to,
    occurredAt: occurredAt.toISOString(),
    campaignId: email.campaignId,
    contactId: email.contactId,
    domainId: email.domainId,
    subject: email.subject,
    ...(email.templateId ? { templateId: email.templateId } : {}),
    // Recipients given but not sent to, with why (recipient-outcomes.ts); only when there are any.
    ...(email.skippedRecipients != null ? { skippedRecipients: email.skippedRecipients } : {}),
    ...extras,
  };
}

/**
 * Records the `email.<status>` event of an email status change (nothing for SCHEDULED), in the
 * caller's transaction, filed under the email's domain for domain-filtered webhooks.
 */
export async function recordEmailStatusEvent(
  tx: Pick<Prisma.TransactionClient, 'webhookEvent'>,
  email: EmailForWebhook & { teamId: number },
  status: EmailStatus,
  occurredAt: Date,
  extras: EmailEventExtras = {},
): Promise<string | null> {
  const type = emailStatusWebhookEvent[status];
  if (!type) return null;
  return recordWebhookEvent(tx, {
    teamId: email.teamId,
    type,
    domainId: email.domainId,
    data: emailWebhookData(email, status, occurredAt, extras) as Prisma.InputJsonValue,
  });
}
