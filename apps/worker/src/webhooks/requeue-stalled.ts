import type { Queue } from 'bullmq';
import { clearDeadJob, type Db } from '@mailrail/core';
import { enqueueWebhookDeliveries } from './delivery-jobs';

const PENDING_GRACE_MS = 60_000;
const IN_PROGRESS_GRACE_MS = 10 * 60_000;

/**
 * PostgreSQL is the truth and Redis only carries work: a delivery still due a minute after its
 * time (its job was never added, or Redis lost it) gets a job again. A live job with the same id
 * makes the add a no-op; a dead one is removed first so the add takes (clearDeadJob).
 */
export async function requeueStalledDeliveries(db: Db, queue: Queue, maxAttempts: number, now = new Date()): Promise<number> {
  const stalled = await db.webhookDelivery.findMany({
    where: {
      OR: [
        { status: 'PENDING', nextAttemptAt: { lt: new Date(now.getTime() - PENDING_GRACE_MS) } },
        { status: 'IN_PROGRESS', updatedAt: { lt: new Date(now.getTime() - IN_PROGRESS_GRACE_MS) } },
      ],
    },
    select: { id: true },
    take: 1000,
  });
  const ids: string[] = [];
  for (const { id } of stalled) {
    if (await clearDeadJob(queue, id)) ids.push(id);
  }
  await enqueueWebhookDeliveries(queue, ids, maxAttempts);
  return ids.length;
}
