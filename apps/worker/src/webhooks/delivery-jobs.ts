import type { Queue } from 'bullmq';

/** One job per delivery on `queueNames.webhooks`; jobId is the delivery id. */
export interface WebhookDeliveryJob {
  deliveryId: string;
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
