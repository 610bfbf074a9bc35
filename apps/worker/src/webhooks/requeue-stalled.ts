import type { Queue } from 'bullmq';
import { clearDeadJob } from '@mailrail/platform/queue/dead-jobs';
import { type Config } from '@mailrail/platform/config/schema';
import { type SqlExecutor } from '@mailrail/platform/db/sql/executor';
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
  sql: SqlExecutor,
  queue: Queue,
  maxAttempts: number,
  now: Date,
  settings: RequeueSettings,
): Promise<number> {
  const stalled = await sql.query<{ id: string }>(
    `SELECT id FROM "WebhookDelivery"
      WHERE (status = 'PENDING' AND "nextAttemptAt" < $1) OR (status = 'IN_PROGRESS' AND "updatedAt" < $2)
      LIMIT $3::int`,
    [
      new Date(now.getTime() - settings.WEBHOOK_REQUEUE_PENDING_AFTER_MS),
      new Date(now.getTime() - settings.WEBHOOK_REQUEUE_IN_PROGRESS_AFTER_MS),
      settings.WEBHOOK_REQUEUE_BATCH,
    ],
  );
  const ids: string[] = [];
  for (const { id } of stalled) {
    if (await clearDeadJob(queue, id)) ids.push(id);
  }
  await enqueueWebhookDeliveries(queue, ids, maxAttempts);
  return ids.length;
}
