import type { EmailStatus } from '../db/generated/enums';

// TODO(lead): unify with the send pipeline's emails/status.ts at merge.
//
// Statuses that SES events set, in the order an email's life can only move forward. A status
// replaces the current one only when it ranks higher, so duplicated and out-of-order events
// converge to the same final state (a Delivery after an Open leaves OPENED). The order is a
// strict total order: ties would make the result depend on arrival order.
// Unlike useSend, RENDERING_FAILURE ranks above SENT: SES reports it after accepting the message.
export const EVENT_STATUS_ORDER = [
  'SENT',
  'RENDERING_FAILURE',
  'REJECTED',
  'DELIVERY_DELAYED',
  'DELIVERED',
  'BOUNCED',
  'OPENED',
  'CLICKED',
  'COMPLAINED',
] as const satisfies readonly EmailStatus[];

export type EventStatus = (typeof EVENT_STATUS_ORDER)[number];

// Statuses an SES event may replace: the not-yet-sent ones. FAILED, CANCELLED and SUPPRESSED are
// final decisions of ours and are never overwritten by an event (the event is still recorded).
const REPLACEABLE_BEFORE_SENDING: EmailStatus[] = ['SCHEDULED', 'QUEUED'];

/** The current statuses that `next` may replace (used as `"latestStatus" = ANY(...)` in SQL). */
export function statusesReplaceableBy(next: EventStatus): EmailStatus[] {
  const rank = EVENT_STATUS_ORDER.indexOf(next);
  return [...REPLACEABLE_BEFORE_SENDING, ...EVENT_STATUS_ORDER.slice(0, rank)];
}

export function statusRank(status: EmailStatus): number {
  const i = (EVENT_STATUS_ORDER as readonly EmailStatus[]).indexOf(status);
  if (i >= 0) return i + 1;
  return REPLACEABLE_BEFORE_SENDING.includes(status) ? 0 : Number.POSITIVE_INFINITY;
}
