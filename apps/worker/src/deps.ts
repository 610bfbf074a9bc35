import {
  createDb,
  createLogger,
  createQueueFactory,
  createRedis,
  systemClock,
  type Clock,
  type Config,
  type Db,
  type Logger,
  type QueueFactory,
  type Redis,
} from '@mailrail/core';
import { Pool } from 'pg';
import type { SendSettings } from './send/send-email';
import { createSesV2Sender, type SesSender } from './send/ses-sender';

/** Everything the worker's jobs may touch; built once per process (or per test). */
export interface WorkerDeps {
  config: Config;
  db: Db;
  /** node-postgres pool for the send hot path (claim and record), beside Prisma's own pool. */
  sql: Pool;
  /** Shared by queues and workers (BullMQ duplicates it for its blocking reads). */
  redis: Redis;
  queues: QueueFactory;
  ses: SesSender;
  log: Logger;
  clock: Clock;
  send: SendSettings;
}

export class WorkerConfigError extends Error {}

export function sendSettings(config: Config): SendSettings {
  // A send that outlives its lease may be taken over and sent twice: keep the call well inside it.
  if (config.SES_TIMEOUT_MS * 3 > config.SEND_LEASE_SECONDS * 1000) {
    throw new WorkerConfigError(
      `SES_TIMEOUT_MS (${config.SES_TIMEOUT_MS}) must be at most a third of SEND_LEASE_SECONDS (${config.SEND_LEASE_SECONDS} s)`,
    );
  }
  return {
    leaseSeconds: config.SEND_LEASE_SECONDS,
    maxAttempts: config.SEND_MAX_ATTEMPTS,
    retryBaseMs: config.SEND_RETRY_BASE_MS,
    retryMaxMs: Math.max(config.SEND_RETRY_BASE_MS, config.SEND_RETRY_MAX_MS),
    defaultRegion: config.AWS_REGION,
    configurationSetPrefix: config.SES_CONFIGURATION_SET_PREFIX,
  };
}

export function createWorkerDeps(config: Config, overrides: Partial<WorkerDeps> = {}): WorkerDeps {
  const redis = overrides.redis ?? createRedis(config.REDIS_URL, { forWorker: true });
  return {
    config,
    db: overrides.db ?? createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
    sql: overrides.sql ?? new Pool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE }),
    redis,
    queues: overrides.queues ?? createQueueFactory(redis, config.REDIS_PREFIX),
    ses: overrides.ses ?? createSesV2Sender(config),
    log: overrides.log ?? createLogger(config.LOG_LEVEL, 'mailrail-worker'),
    clock: overrides.clock ?? systemClock,
    send: overrides.send ?? sendSettings(config),
  };
}

export async function closeWorkerDeps(deps: WorkerDeps): Promise<void> {
  await deps.queues.closeAll();
  deps.ses.close();
  await deps.db.$disconnect();
  await deps.sql.end();
  deps.redis.disconnect();
}
