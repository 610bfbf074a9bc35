import type { Queue } from 'bullmq';

/** One job per delivery on `queueNames.webhooks`; jobId is the delivery id. */
export interface WebhookDeliveryJob {
  deliveryId: string;
}

/** Waits before the 2nd, 3rd, ... attempt: 9 attempts over about 16 hours. */
export const defaultWebhookRetrySchedule = '5s,1m,5m,30m,1h,2h,4h,8h';

const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** "5s,1m,2h" → [5000, 60000, 7200000]. */
export function parseRetrySchedule(text: string): number[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)(ms|s|m|h)\s*$/.exec(part);
    if (!m) throw new Error(`invalid retry delay "${part}" (use e.g. 500ms, 5s, 10m, 2h)`);
    return Number(m[1]) * unitMs[m[2] as keyof typeof unitMs];
  });
}

/** Thrown by the processor to make BullMQ try again after exactly `delayMs`. */
export class RetryWebhookLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

// The delivery row decides when an attempt is the last; BullMQ's own count is a safety net with
// room for a few processor errors (database hiccups) on top.
const SPARE_ATTEMPTS = 3;

export async function enqueueWebhookDeliveries(queue: Queue, deliveryIds: string[], maxAttempts: number): Promise<void> {
  if (deliveryIds.length === 0) return;
  await queue.addBulk(
    deliveryIds.map((deliveryId) => ({
      name: 'deliver',
      data: { deliveryId } satisfies WebhookDeliveryJob,
      opts: {
        jobId: deliveryId,
        attempts: maxAttempts + SPARE_ATTEMPTS,
        backoff: { type: 'webhook-schedule' },
        removeOnComplete: { age: 3600, count: 10000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    })),
  );
}
