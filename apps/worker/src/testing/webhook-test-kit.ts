import { createDb, type Db } from '@mailrail/platform/db/client';
import { createSqlPool, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { createLogger } from '@mailrail/platform/log/logger';
import { createQueueFactory } from '@mailrail/platform/queue/queues';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { encryptSecret } from '@mailrail/platform/crypto/secrets';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { newId } from '@mailrail/platform/ids';
import { newWebhookSecret } from '@mailrail/domain/webhooks/signing';
import { systemClock } from '@mailrail/platform/clock';
import { type Config } from '@mailrail/platform/config/schema';
import { type ResolveHost } from '@mailrail/domain/webhooks/ssrf';
import { type WebhookStatus } from '@mailrail/platform/db/generated/enums';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { waitFor as waitUntil } from '@mailrail/testing/wait-for';
import { startPeriodicJobs, webhookPeriodicJobs } from '../periodic/periodic-jobs';
import { dispatchWebhookOutbox, registerWebhookWorkers } from '../webhooks/register';

// Test helpers for the webhook worker: a database, worker instances on their own Redis prefix,
// and webhooks written the way the API writes them. The receiving endpoint is in
// @mailrail/testing/webhook-receiver (the end-to-end test uses it too).

/** Test knobs, each one a WEBHOOK_* setting of the config (see startWorkers). */
export interface WebhookWorkerOptions {
  retrySchedule?: string;
  timeoutMs?: number;
  autoDisableAfter?: number;
  concurrency?: number;
  dispatchEveryMs?: number;
  dispatchBatchSize?: number;
  resolveHost?: ResolveHost;
}

export interface WebhookWorkers {
  /** Runs one dispatch pass now, beside the periodic one. */
  dispatchNow(): Promise<number>;
  close(): Promise<void>;
}

export interface WorkerKit {
  db: Db;
  /** The node-postgres pool the periodic webhook jobs use, as in the worker. */
  sql: SqlPool;
  config: Config;
  newTeam(): Promise<number>;
  addDomain(teamId: number, name: string): Promise<number>;
  /** Inserts a webhook as the API does; returns its id and plain secret. */
  addWebhook(
    teamId: number,
    url: string,
    opts?: { events?: string[]; domainIds?: number[]; status?: WebhookStatus },
  ): Promise<{ id: string; secret: string }>;
  /** Starts a webhook worker (delivery and the webhook periodic jobs) on a fresh Redis prefix (so tests never share queued jobs). */
  startWorkers(options?: WebhookWorkerOptions, env?: Partial<Config>): Promise<WebhookWorkers>;
  /** Stops every worker started so far and drops its queues. */
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

export async function startWorkerKit(): Promise<WorkerKit> {
  const databaseUrl = await createTestDatabase();
  const config = testConfig(databaseUrl, testRedisPrefix(), { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const db = createDb(databaseUrl, 10);
  const sql = createSqlPool(databaseUrl, 4, () => undefined);
  const started: { workers: WebhookWorkers; redis: Redis; prefix: string; queues: ReturnType<typeof createQueueFactory> }[] = [];

  async function stopWorkers() {
    for (const s of started.splice(0)) {
      await s.workers.close();
      await s.queues.closeAll();
      await deleteRedisPrefix(s.redis, s.prefix).catch(() => undefined);
      s.redis.disconnect();
    }
  }

  return {
    db,
    sql,
    config,
    newTeam: async () => (await createTeam(db, 'Webhook team')).id,
    addDomain: async (teamId, name) =>
      (await insertDomain(db, config.SECRET, { teamId, name, region: config.AWS_REGION, dkimSelector: 'usesend', verified: true })).id,
    addWebhook: async (teamId, url, opts = {}) => {
      const secret = newWebhookSecret();
      const id = newId();
      await db.webhook.create({
        data: {
          id,
          teamId,
          url,
          events: opts.events ?? [],
          domainIds: opts.domainIds ?? [],
          status: opts.status ?? 'ACTIVE',
          secretEnc: encryptSecret(config.SECRET, secret),
        },
      });
      return { id, secret };
    },
    startWorkers: async (options = {}, env = {}) => {
      const prefix = testRedisPrefix();
      const redis = createRedis(config.redis, { forWorker: true });
      const queues = createQueueFactory(redis, { REDIS_PREFIX: prefix, redisHashTags: config.redisHashTags });
      const o = { dispatchEveryMs: 50, ...options };
      const workerConfig: Config = {
        ...config,
        REDIS_PREFIX: prefix,
        WEBHOOK_DISPATCH_EVERY_MS: o.dispatchEveryMs,
        ...(o.retrySchedule !== undefined && { WEBHOOK_RETRY_SCHEDULE: o.retrySchedule }),
        ...(o.timeoutMs !== undefined && { WEBHOOK_TIMEOUT_MS: o.timeoutMs }),
        ...(o.autoDisableAfter !== undefined && { WEBHOOK_AUTO_DISABLE_AFTER: o.autoDisableAfter }),
        ...(o.concurrency !== undefined && { WEBHOOK_CONCURRENCY: o.concurrency }),
        ...(o.dispatchBatchSize !== undefined && { WEBHOOK_DISPATCH_BATCH_SIZE: o.dispatchBatchSize }),
        ...env,
      };
      const deps = { config: workerConfig, db, sql, redis, queues, log: createLogger('silent', 'webhook-test'), clock: systemClock };
      const delivery = registerWebhookWorkers(deps, { resolveHost: o.resolveHost });
      const periodic = await startPeriodicJobs(deps, webhookPeriodicJobs(workerConfig));
      const workers: WebhookWorkers = {
        dispatchNow: () => dispatchWebhookOutbox(deps),
        close: async () => {
          await periodic.close();
          await delivery.close();
        },
      };
      started.push({ workers, redis, prefix, queues });
      return workers;
    },
    stopWorkers,
    close: async () => {
      await stopWorkers();
      await db.$disconnect();
      await sql.end();
      await dropDatabase(databaseUrl);
    },
  };
}

export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  await waitUntil(check, { timeoutMs, what, intervalMs: 25 });
}

export { setTimeout as sleep } from 'node:timers/promises';
