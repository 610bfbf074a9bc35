import type { EmailStatus, SuppressionReason } from '@mailrail/platform/db/generated/enums';
import { normaliseAddress } from './address';

// Every recipient of an email has an outcome (issue 42): those given but not sent to are stored
// with the email (`skippedRecipients`, written by withSuppressions); the others follow the
// email's status, refined by SES's per-recipient events (a delivery, bounce, complaint or delay
// names the recipients it is about). GET /api/v1/emails/{id}, the dashboard's email page and the
// email webhooks read them from here.

/** A recipient given but not sent to. */
export interface SkippedRecipient {
  /** As given (`Name <addr>` or `addr`). */
  email: string;
  type: RecipientType;
  status: 'SUPPRESSED';
  /** Why the address is on the team's suppression list. */
  reason: SuppressionReason;
}

export type RecipientType = 'to' | 'cc' | 'bcc';

export interface RecipientOutcome {
  email: string;
  type: RecipientType;
  /** The email's status vocabulary, per recipient. */
  status: EmailStatus;
  /** Why, when there is more to say: the suppression reason, SES's diagnostic, the email's error. */
  reason: string | null;
}

interface EmailForOutcomes {
  to: string[];
  cc: string[];
  bcc: string[];
  latestStatus: EmailStatus;
  skippedRecipients: unknown;
}

interface EventForOutcomes {
  status: EmailStatus;
  data: unknown;
}

// SES's events about some recipients: the field of the event's data that lists them. An event
// without the list is about every recipient.
const PER_RECIPIENT: Partial<Record<EmailStatus, string>> = {
  DELIVERY_DELAYED: 'delayedRecipients',
  DELIVERED: 'recipients',
  BOUNCED: 'bouncedRecipients',
  COMPLAINED: 'complainedRecipients',
};
// A later per-recipient event replaces an earlier one unless it says less: a delay after the
// delivery, or a delivery after the bounce, leaves the recipient where it was.
const RECIPIENT_RANK: Partial<Record<EmailStatus, number>> = { DELIVERY_DELAYED: 1, DELIVERED: 2, BOUNCED: 3, COMPLAINED: 4 };
// Opens and clicks are the message's (SES cannot say whose): they change no recipient's outcome.
const MESSAGE_ONLY = new Set<EmailStatus>(['OPENED', 'CLICKED']);

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The skipped recipients stored with an email; anything malformed is left out, never thrown. */
export function storedSkippedRecipients(value: unknown): SkippedRecipient[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    const r = record(item);
    const type = r.type;
    return typeof r.email === 'string' && (type === 'to' || type === 'cc' || type === 'bcc') && typeof r.reason === 'string'
      ? [{ email: r.email, type, status: 'SUPPRESSED' as const, reason: r.reason as SuppressionReason }]
      : [];
  });
}

/** The addresses (bare, lower-cased) a per-recipient event is about, and what it says of each. */
function eventRecipients(event: EventForOutcomes): Map<string, string | null> | null {
  const field = PER_RECIPIENT[event.status];
  if (!field) return null;
  const list = record(event.data)[field];
  if (!Array.isArray(list)) return null;
  const out = new Map<string, string | null>();
  for (const item of list) {
    // Deliveries list plain addresses; bounces, complaints and delays list objects.
    const r = record(item);
    const address = typeof item === 'string' ? item : typeof r.emailAddress === 'string' ? r.emailAddress : null;
    if (address) out.set(normaliseAddress(address), typeof r.diagnosticCode === 'string' ? r.diagnosticCode : null);
  }
  return out;
}

/** Why the whole email is where it is, from its event's data (an error, a reason), if it says. */
function messageReason(event: EventForOutcomes): string | null {
  const data = record(event.data);
  for (const field of ['error', 'reason', 'message']) if (typeof data[field] === 'string') return data[field];
  return null;
}

/** Each recipient of `email`, given and skipped, with its outcome after `events` (oldest first). */
export function recipientOutcomes(email: EmailForOutcomes, events: EventForOutcomes[]): RecipientOutcome[] {
  const skipped = storedSkippedRecipients(email.skippedRecipients);
  const skippedKeys = new Set(skipped.map((s) => `${s.type}:${normaliseAddress(s.email)}`));
  let base: { status: EmailStatus; reason: string | null } = { status: email.latestStatus, reason: null };
  const byRecipient = new Map<string, { status: EmailStatus; reason: string | null }>();
  for (const event of events) {
    if (MESSAGE_ONLY.has(event.status)) continue;
    const rank = RECIPIENT_RANK[event.status];
    if (rank === undefined) {
      base = { status: event.status, reason: messageReason(event) };
      continue;
    }
    const about = eventRecipients(event);
    const apply = (address: string, reason: string | null) => {
      const now = byRecipient.get(address);
      if (!now || (RECIPIENT_RANK[now.status] ?? 0) <= rank) byRecipient.set(address, { status: event.status, reason });
    };
    if (about) for (const [address, reason] of about) apply(address, reason);
    else for (const address of [...email.to, ...email.cc, ...email.bcc]) apply(normaliseAddress(address), null);
  }

  const out: RecipientOutcome[] = [];
  for (const type of ['to', 'cc', 'bcc'] as const) {
    for (const address of email[type]) {
      // An email whose every `to` is suppressed keeps its recipients as given: those are in both.
      if (skippedKeys.has(`${type}:${normaliseAddress(address)}`)) continue;
      const own = byRecipient.get(normaliseAddress(address));
      out.push({ email: address, type, ...(own ?? base) });
    }
    for (const s of skipped) if (s.type === type) out.push({ email: s.email, type, status: 'SUPPRESSED', reason: s.reason });
  }
  return out;
}

/**
 * The last of `events` (oldest first) that gave `address` (bare, lower-cased) the outcome `status`:
 * an event naming it, or one about every recipient. Null when none did (still queued, or not sent).
 */
export function decidingEvent<E extends EventForOutcomes>(events: E[], status: EmailStatus, address: string): E | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event.status !== status) continue;
    const about = eventRecipients(event);
    if (!about || about.has(address)) return event;
  }
  return null;
}
