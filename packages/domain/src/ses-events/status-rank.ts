import type { EmailStatus } from '@mailrail/platform/db/generated/enums';
import { EMAIL_STATUS_ORDER, statusesBelow } from '../emails/status';

// The statuses SES events can set, lowest rank first. The rank itself lives in one place,
// emails/status.ts: an event replaces the current status only when it ranks higher, so duplicated
// and out-of-order events converge, and our own final decisions (FAILED, CANCELLED, SUPPRESSED)
// are never overwritten by an event (the event row is still recorded).
const EVENT_STATUSES = [
  'SENT',
  'DELIVERY_DELAYED',
  'DELIVERED',
  'OPENED',
  'CLICKED',
  'RENDERING_FAILURE',
  'REJECTED',
  'BOUNCED',
  'COMPLAINED',
] as const satisfies readonly EmailStatus[];

export type EventStatus = (typeof EVENT_STATUSES)[number];

export const EVENT_STATUS_ORDER: readonly EventStatus[] = EMAIL_STATUS_ORDER.filter((s): s is EventStatus =>
  (EVENT_STATUSES as readonly string[]).includes(s),
);

/** The current statuses that `next` may replace (used as `"latestStatus" = ANY(...)` in SQL). */
export const statusesReplaceableBy = (next: EventStatus): EmailStatus[] => statusesBelow(next);
