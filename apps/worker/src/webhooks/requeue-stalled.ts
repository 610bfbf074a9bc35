import type { Queue } from 'bullmq';
import { clearDeadJob } from '@mailrail/platform/queue/dead-jobs';
import { type Config } from '@mailrail/platform/config/schema';
import { type Db } from '@mailrail/platform/db/client';
import { enqueueWebhookDeliveries } from './delivery-jobs';

export type RequeueSettings = Pick<
  Config,
  'WEBHOOK_REQUEUE_PENDING_AFTER_MS' | 'WEBHOOK_REQUEUE_IN_PROGRESS_AFTER_MS' | 'WEBHOOK_REQUEUE_BATCH'
>;

/**
 * PostgreSQL is the truth and Redis only carries work: a delivery still due a while after its
 * time (WEBHOOK_REQUEUE_PENDING_AFTER_MS, a minute; its job was never added, or Redis lost it)
 * gets a job again. A live job with the same id makes the add a no-op; a dead one is removed
 * first so the add takes (clearDeadJob).
 */
export async function requeueStalledDeliveries(
  db: Db,
  queue: Queue,
  maxAttempts: number,
  now: Date,
  settings: RequeueSettings,
): Promise<number> {
  const stalled = await db.webhookDelivery.findMany({
    where: {
      OR: [
        { status: 'PENDING', nextAttemptAt: { lt: new Date(now.getTime() - settings.WEBHOOK_REQUEUE_PENDING_AFTER_MS) } },
        { status: 'IN_PROGRESS', updatedAt: { lt: new Date(now.getTime() - settings.WEBHOOK_REQUEUE_IN_PROGRESS_AFTER_MS) } },
      ],
    },
    select: { id: true },
    take: settings.WEBHOOK_REQUEUE_BATCH,
  });
  const ids: string[] = [];
  for (const { id } of stalled) {
    if (await clearDeadJob(queue, id)) ids.push(id);
  }
  await enqueueWebhookDeliveries(queue, ids, maxAttempts);
  return ids.length;
}
