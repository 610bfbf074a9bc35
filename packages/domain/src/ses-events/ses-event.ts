import { z } from 'zod';
import { normaliseAddress } from '../emails/address';
import { EMAIL_ID_HEADERS } from '../emails/headers';
import type { EventStatus } from './status-rank';

// SES publishes the same events in two formats: configuration-set event publishing
// (`eventType`, all event kinds) and identity notifications (`notificationType`: Bounce,
// Complaint, Delivery only). Both carry `mail` and one detail sub-object.

interface EventKind {
  /** The status it sets; null for Subscription, which is recorded without a status change. */
  status: EventStatus | null;
  /** Key of the detail sub-object stored as the EmailEvent's data. */
  detailKey: string;
}

const EVENT_KINDS: Record<string, EventKind> = {
  Send: { status: 'SENT', detailKey: 'send' },
  Delivery: { status: 'DELIVERED', detailKey: 'delivery' },
  Bounce: { status: 'BOUNCED', detailKey: 'bounce' },
  Complaint: { status: 'COMPLAINED', detailKey: 'complaint' },
  Reject: { status: 'REJECTED', detailKey: 'reject' },
  DeliveryDelay: { status: 'DELIVERY_DELAYED', detailKey: 'deliveryDelay' },
  Open: { status: 'OPENED', detailKey: 'open' },
  Click: { status: 'CLICKED', detailKey: 'click' },
  'Rendering Failure': { status: 'RENDERING_FAILURE', detailKey: 'failure' },
  RenderingFailure: { status: 'RENDERING_FAILURE', detailKey: 'failure' },
  Subscription: { status: null, detailKey: 'subscription' },
};

const recipientList = z.array(z.object({ emailAddress: z.string() }).loose()).optional();

const sesEventSchema = z
  .object({
    eventType: z.string().optional(),
    notificationType: z.string().optional(),
    mail: z
      .object({
        messageId: z.string().min(1),
        timestamp: z.string().optional(),
        headers: z.array(z.object({ name: z.string(), value: z.string() }).loose()).optional(),
      })
      .loose(),
    bounce: z.object({ bounceType: z.string().optional(), bouncedRecipients: recipientList }).loose().optional(),
    complaint: z.object({ complainedRecipients: recipientList }).loose().optional(),
  })
  .loose();

export interface SesEvent {
  /** The SES name of the event (`Bounce`, `Rendering Failure`...). */
  type: string;
  status: EventStatus | null;
  sesMessageId: string;
  /** Our email id from the X-Usesend-Email-ID (or legacy X-Unsend-Email-ID) header, if SES sent headers. */
  headerEmailId: string | null;
  /** When the event happened according to SES. */
  occurredAt: Date | null;
  detail: Record<string, unknown>;
  hardBounce: boolean;
  /** Addresses to suppress: permanent-bounce or complaint recipients, lower-cased. */
  suppress: { emails: string[]; reason: 'HARD_BOUNCE' | 'COMPLAINT' } | null;
}

export type SesEventParse =
  { ok: true; event: SesEvent } | { ok: false; reason: 'not-json' | 'not-ses-event' | 'unknown-type'; type?: string };

function parseDate(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Reads the SNS `Message` text; anything that is not an SES event is reported, never thrown. */
export function parseSesEvent(message: string): SesEventParse {
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  const parsed = sesEventSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: 'not-ses-event' };
  const e = parsed.data;
  const type = e.eventType ?? e.notificationType;
  if (!type) return { ok: false, reason: 'not-ses-event' };
  const kind = EVENT_KINDS[type];
  if (!kind) return { ok: false, reason: 'unknown-type', type };

  const detailValue = (e as Record<string, unknown>)[kind.detailKey];
  const detail = detailValue && typeof detailValue === 'object' ? (detailValue as Record<string, unknown>) : {};
  const header = e.mail.headers?.find((h) => EMAIL_ID_HEADERS.has(h.name.toLowerCase()));
  const hardBounce = type === 'Bounce' && e.bounce?.bounceType === 'Permanent';

  let suppress: SesEvent['suppress'] = null;
  const recipients = hardBounce ? e.bounce?.bouncedRecipients : type === 'Complaint' ? e.complaint?.complainedRecipients : undefined;
  if (recipients?.length) {
    const emails = [...new Set(recipients.map((r) => normaliseAddress(r.emailAddress)).filter((a) => a.includes('@')))];
    if (emails.length) suppress = { emails, reason: hardBounce ? 'HARD_BOUNCE' : 'COMPLAINT' };
  }

  return {
    ok: true,
    event: {
      type,
      status: kind.status,
      sesMessageId: e.mail.messageId,
      headerEmailId: header?.value.trim() || null,
      occurredAt: parseDate(detail.timestamp) ?? parseDate(e.mail.timestamp),
      detail,
      hardBounce,
      suppress,
    },
  };
}
