import { systemClock, type Clock } from '../clock';
import type { Config } from '../config/schema';
import { createDb, type Db } from '../db/client';
import { createLogger, type Logger } from '../log/logger';
import { createQueueFactory, type QueueFactory } from '../queue/queues';
import { createRedis, type Redis } from '../redis/client';

/** What every process (API, worker) builds the same way; each adds its own on top. */
export interface BaseDeps {
  config: Config;
  db: Db;
  /** Shared by the queues (and, in the worker, BullMQ duplicates it for its blocking reads). */
  redis: Redis;
  queues: QueueFactory;
  log: Logger;
  clock: Clock;
}

/**
 * Builds the base from `config`, taking any part given in `overrides` (tests pass their own).
 * `forWorker`: BullMQ workers need a Redis client that retries forever; the API fails fast.
 */
export function createBaseDeps(config: Config, overrides: Partial<BaseDeps>, opts: { service: string; forWorker?: boolean }): BaseDeps {
  const redis = overrides.redis ?? createRedis(config.redis, { forWorker: opts.forWorker });
  return {
    config,
    db: overrides.db ?? createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
    redis,
    queues: overrides.queues ?? createQueueFactory(redis, config),
    log: overrides.log ?? createLogger(config.LOG_LEVEL, opts.service),
    clock: overrides.clock ?? systemClock,
  };
}

/** Closes the queues, then the database and Redis connections of a base. */
export async function closeBaseDeps(deps: BaseDeps): Promise<void> {
  await deps.queues.closeAll();
  await deps.db.$disconnect();
  deps.redis.disconnect();
}
