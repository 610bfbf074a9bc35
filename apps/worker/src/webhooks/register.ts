import { Worker } from 'bullmq';
import { parseRetrySchedule } from '@mailrail/platform/config/webhook-retry-schedule';
import { queueNames, queuePrefix, type QueueFactory } from '@mailrail/platform/queue/queues';
import { type Clock } from '@mailrail/platform/clock';
import { type Config } from '@mailrail/platform/config/schema';
import { type Db } from '@mailrail/platform/db/client';
import { type SqlPool } from '@mailrail/platform/db/sql/executor';
import { type Logger } from '@mailrail/platform/log/logger';
import { type Redis } from '@mailrail/platform/redis/client';
import { type ResolveHost } from '@mailrail/domain/webhooks/ssrf';
import { deliverWebhook, type DeliverySettings } from './deliver-webhook';
import { enqueueWebhookDeliveries, RetryWebhookLater, type WebhookDeliveryJob } from './delivery-jobs';
import { dispatchWebhookEvents } from './dispatch-events';

export interface WebhookWorkerDeps {
  config: Config;
  db: Db;
  /** The node-postgres pool: the periodic webhook jobs go through it, not through Prisma. */
  sql: SqlPool;
  /** A connection made with createRedis(url, { forWorker: true }). */
  redis: Redis;
  queues: QueueFactory;
  log: Logger;
  clock: Clock;
}

export interface WebhookWorkerOptions {
  /** Tests only: how webhook host names resolve (default: the system resolver). */
  resolveHost?: ResolveHost;
}

export interface WebhookWorkers {
  close(): Promise<void>;
}

/** BullMQ attempts of a delivery job: one more than the waits of WEBHOOK_RETRY_SCHEDULE. */
export const webhookMaxAttempts = (config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE'>) =>
  parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE).length + 1;

/**
 * Turns the outbox into deliveries, a batch (WEBHOOK_DISPATCH_BATCH_SIZE) per transaction until
 * it is empty or `maxBatches` were turned (the next run goes on: one team's flood of events cannot
 * hold the maintenance worker), and queues their jobs. The periodic job `webhook-dispatch` runs it.
 */
export async function dispatchWebhookOutbox(
  deps: Pick<WebhookWorkerDeps, 'config' | 'sql' | 'queues' | 'log'>,
  maxBatches = Infinity,
): Promise<number> {
  const { config, sql, log } = deps;
  const queue = deps.queues.get(queueNames.webhooks);
  const batchSize = config.WEBHOOK_DISPATCH_BATCH_SIZE;
  let total = 0;
  for (let done = 0; done < maxBatches; done++) {
    const { events, deliveryIds } = await dispatchWebhookEvents(sql, batchSize);
    total += events;
    await enqueueWebhookDeliveries(queue, deliveryIds, webhookMaxAttempts(config)).catch((err) =>
      log.warn({ err }, 'webhook deliveries not enqueued; the sweeper will retry'),
    );
    if (events < batchSize) break;
  }
  return total;
}

/**
 * Starts the delivery processor of a worker process. Dispatch, the re-queueing of stalled
 * deliveries and pruning are periodic jobs (periodic/periodic-jobs.ts), so each runs once per
 * tick across all replicas.
 */
export function registerWebhookWorkers(deps: WebhookWorkerDeps, options: WebhookWorkerOptions = {}): WebhookWorkers {
  const { config, db, log } = deps;
  const settings: DeliverySettings = {
    retryDelaysMs: parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE),
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    autoDisableAfter: config.WEBHOOK_AUTO_DISABLE_AFTER,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    secret: config.SECRET,
    resolveHost: options.resolveHost,
  };

  const worker = new Worker<WebhookDeliveryJob>(
    queueNames.webhooks,
    async (job) => {
      const outcome = await deliverWebhook(db, settings, job.data.deliveryId);
      if (outcome.result === 'retry') throw new RetryWebhookLater(outcome.error, outcome.delayMs);
      if (outcome.result === 'failed')
        log.warn({ deliveryId: job.data.deliveryId, error: outcome.error }, 'webhook delivery failed for good');
      return outcome.result;
    },
    {
      connection: deps.redis,
      prefix: queuePrefix(config, queueNames.webhooks),
      concurrency: config.WEBHOOK_CONCURRENCY,
      settings: {
        // The processor computed the wait from the delivery row; other errors retry in 5 s.
        backoffStrategy: (_attemptsMade, _type, err) => (err instanceof RetryWebhookLater ? err.delayMs : 5000),
      },
    },
  );
  worker.on('error', (err) => log.error({ err }, 'webhook worker error'));
  return { close: () => worker.close() };
}
