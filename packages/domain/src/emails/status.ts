import type { EmailStatus } from '@mailrail/platform/db/generated/enums';

// The one place that says in which direction an email's `latestStatus` may move. Every writer
// (the send worker, SES event intake, cancel and reschedule) only replaces a status with one of
// a higher rank, so events that arrive late, twice or out of order never move an email back.
//
// The order, lowest first:
//   SCHEDULED < QUEUED                 created, waiting (a due scheduled email is "queued")
//   < SENT                             SES accepted the message
//   < DELIVERY_DELAYED < DELIVERED     delivery progress reported by SES
//   < OPENED < CLICKED                 engagement, which implies delivery
//   < RENDERING_FAILURE < REJECTED     SES outcomes that replace delivery (SES gave up on it)
//   < BOUNCED                          can arrive after DELIVERED (asynchronous bounce)
//   < COMPLAINED                       arrives after delivery and opens; the strongest signal
//                                      about a recipient, so nothing after it may hide it
//   < FAILED < CANCELLED < SUPPRESSED  our own final decisions, taken while SES never accepted
//                                      the message: no SES event can legitimately follow them,
//                                      so a stray one (e.g. after a send timeout that SES did
//                                      accept) is recorded as an event but leaves them in place.
// Outcomes outrank progress: a bounce or complaint is the end of the story even when an open or
// a click is reported after it.
export const EMAIL_STATUS_ORDER = [
  'SCHEDULED',
  'QUEUED',
  'SENT',
  'DELIVERY_DELAYED',
  'DELIVERED',
  'OPENED',
  'CLICKED',
  'RENDERING_FAILURE',
  'REJECTED',
  'BOUNCED',
  'COMPLAINED',
  'FAILED',
  'CANCELLED',
  'SUPPRESSED',
] as const satisfies readonly EmailStatus[];

export const emailStatusRank: Readonly<Record<EmailStatus, number>> = Object.fromEntries(
  EMAIL_STATUS_ORDER.map((s, i) => [s, i]),
) as Record<EmailStatus, number>;

/** True when `next` may replace `current` as an email's latestStatus. */
export function isStatusForward(current: EmailStatus | null | undefined, next: EmailStatus): boolean {
  return current == null || emailStatusRank[next] > emailStatusRank[current];
}

/** The status to store after `next` is observed: the higher-ranked of the two. */
export function forwardStatus(current: EmailStatus | null | undefined, next: EmailStatus): EmailStatus {
  return isStatusForward(current, next) ? next : (current as EmailStatus);
}

/**
 * Every status `next` may replace, for conditional SQL updates:
 * `UPDATE "Email" SET "latestStatus" = 'SENT' WHERE "latestStatus" = ANY(${statusesBelow('SENT')}::"EmailStatus"[])`.
 */
export function statusesBelow(next: EmailStatus): EmailStatus[] {
  return EMAIL_STATUS_ORDER.slice(0, emailStatusRank[next]);
}
