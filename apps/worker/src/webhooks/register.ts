import { Worker } from 'bullmq';
import { queueNames, type Config, type Db, type Logger, type QueueFactory, type Redis, type ResolveHost } from '@mailrail/core';
import { deliverWebhook, type DeliverySettings } from './deliver-webhook';
import { defaultWebhookRetrySchedule, enqueueWebhookDeliveries, parseRetrySchedule, RetryWebhookLater, type WebhookDeliveryJob } from './delivery-jobs';
import { dispatchWebhookEvents } from './dispatch-events';
import { pruneWebhookEvents } from './prune-events';
import { requeueStalledDeliveries } from './requeue-stalled';

export interface WebhookWorkerDeps {
  config: Config;
  db: Db;
  /** A connection made with createRedis(url, { forWorker: true }). */
  redis: Redis;
  queues: QueueFactory;
  log: Logger;
}

export interface WebhookWorkerOptions {
  /** Waits between attempts, e.g. "5s,1m,2h" (default: 5s,1m,5m,30m,1h,2h,4h,8h). */
  retrySchedule?: string;
  timeoutMs?: number;
  autoDisableAfter?: number;
  concurrency?: number;
  dispatchEveryMs?: number;
  dispatchBatchSize?: number;
  sweepEveryMs?: number;
  /** Days dispatched events and their delivery log are kept (default 30). */
  retentionDays?: number;
  resolveHost?: ResolveHost;
}

export interface WebhookWorkers {
  /** Runs one dispatch pass now (tests, and a fast path after a write if ever wanted). */
  dispatchNow(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Starts the webhook side of a worker process: the outbox dispatcher (every second), the
 * sweeper that re-enqueues deliveries whose job was lost, hourly pruning of old events, and the
 * delivery processor.
 */
export function registerWebhookWorkers(deps: WebhookWorkerDeps, options: WebhookWorkerOptions = {}): WebhookWorkers {
  const { config, db, log } = deps;
  const retryDelaysMs = parseRetrySchedule(options.retrySchedule ?? defaultWebhookRetrySchedule);
  const maxAttempts = retryDelaysMs.length + 1;
  const settings: DeliverySettings = {
    retryDelaysMs,
    timeoutMs: options.timeoutMs ?? 10_000,
    autoDisableAfter: options.autoDisableAfter ?? 30,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    secret: config.SECRET,
    resolveHost: options.resolveHost,
  };
  const queue = deps.queues.get(queueNames.webhooks);

  const worker = new Worker<WebhookDeliveryJob>(
    queueNames.webhooks,
    async (job) => {
      const outcome = await deliverWebhook(db, settings, job.data.deliveryId);
      if (outcome.result === 'retry') throw new RetryWebhookLater(outcome.error, outcome.delayMs);
      if (outcome.result === 'failed') log.warn({ deliveryId: job.data.deliveryId, error: outcome.error }, 'webhook delivery failed for good');
      return outcome.result;
    },
    {
      connection: deps.redis,
      prefix: config.REDIS_PREFIX,
      concurrency: options.concurrency ?? 25,
      settings: {
        // The processor computed the wait from the delivery row; other errors retry in 5 s.
        backoffStrategy: (_attemptsMade, _type, err) => (err instanceof RetryWebhookLater ? err.delayMs : 5000),
      },
    },
  );
  worker.on('error', (err) => log.error({ err }, 'webhook worker error'));

  const batchSize = options.dispatchBatchSize ?? 500;
  async function dispatchNow(): Promise<number> {
    let total = 0;
    for (;;) {
      const { events, deliveryIds } = await dispatchWebhookEvents(db, batchSize);
      total += events;
      await enqueueWebhookDeliveries(queue, deliveryIds, maxAttempts).catch((err) =>
        log.warn({ err }, 'webhook deliveries not enqueued; the sweeper will retry'),
      );
      if (events < batchSize) return total;
    }
  }

  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  function every(ms: number, task: () => Promise<unknown>, what: string) {
    const run = () => {
      const p = task()
        .then(() => undefined)
        .catch((err) => {
          if (!closed) log.error({ err }, `${what} failed`);
        })
        .finally(() => {
          running.delete(p);
          if (!closed) timers.add(setTimeout(run, ms));
        });
      running.add(p);
    };
    timers.add(setTimeout(run, ms));
  }
  every(options.dispatchEveryMs ?? 1000, dispatchNow, 'webhook dispatch');
  every(options.sweepEveryMs ?? 60_000, () => requeueStalledDeliveries(db, queue, maxAttempts), 'webhook sweep');
  every(3_600_000, () => pruneWebhookEvents(db, options.retentionDays ?? 30), 'webhook event pruning');

  return {
    dispatchNow,
    close: async () => {
      closed = true;
      for (const t of timers) clearTimeout(t);
      // Let a pass that is under way finish before the caller closes the database.
      await Promise.all(running);
      await worker.close();
    },
  };
}
