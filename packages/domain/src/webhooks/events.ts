import type { EmailStatus } from '@mailrail/platform/db/client';

/** Every event type a webhook can subscribe to (useSend's vocabulary). */
export const webhookEventTypes = [
  'email.queued',
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.rejected',
  'email.rendering_failure',
  'email.complained',
  'email.failed',
  'email.cancelled',
  'email.suppressed',
  'email.opened',
  'email.clicked',
  'campaign.recipient_skipped',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'domain.created',
  'domain.verified',
  'domain.updated',
  'domain.deleted',
  'reputation.threshold_crossed',
  // A webhook step of an automation (docs/automations.md).
  'automation.webhook',
  'webhook.test',
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

/** The event an email status change emits; SCHEDULED is not an event. */
export const emailStatusWebhookEvent: Record<EmailStatus, WebhookEventType | null> = {
  SCHEDULED: null,
  QUEUED: 'email.queued',
  SENT: 'email.sent',
  DELIVERED: 'email.delivered',
  DELIVERY_DELAYED: 'email.delivery_delayed',
  BOUNCED: 'email.bounced',
  REJECTED: 'email.rejected',
  RENDERING_FAILURE: 'email.rendering_failure',
  COMPLAINED: 'email.complained',
  FAILED: 'email.failed',
  CANCELLED: 'email.cancelled',
  SUPPRESSED: 'email.suppressed',
  OPENED: 'email.opened',
  CLICKED: 'email.clicked',
};

/** The `version` field of every payload, as useSend sends it, for receivers that read it. */
export const webhookPayloadVersion = '2026-01-18';
