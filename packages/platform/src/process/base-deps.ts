import { systemClock, type Clock } from '../clock';
import type { Config } from '../config/schema';
import { createDb, type Db } from '../db/client';
import { createLogger, type Logger } from '../log/logger';
import { createQueueFactory, type QueueFactory } from '../queue/queues';
import { createRedis, duplicateRedis, type Redis } from '../redis/client';

/** What every process (API, worker) builds the same way; each adds its own on top. */
export interface BaseDeps {
  config: Config;
  db: Db;
  /** Shared by the queues in the worker (BullMQ duplicates it for its blocking reads); the API and the relay give their queues a connection of their own (createBaseDeps). */
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
  // BullMQ defines its Lua scripts (about forty) on the connection it is given, and ioredis copies
  // them into every pipeline, which on an auto-pipelining connection is one per tick: the queues of
  // a process that made such a connection get a plain one of their own, closed with them.
  const ownQueueConnection = !overrides.queues && !overrides.redis && !opts.forWorker;
  return {
    config,
    db: overrides.db ?? createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
    redis,
    queues:
      overrides.queues ??
      (ownQueueConnection
        ? createQueueFactory(duplicateRedis(redis, { enableAutoPipelining: false }), config, { closeConnection: true })
        : createQueueFactory(redis, config)),
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
