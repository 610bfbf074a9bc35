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

/** Everything a request handler may touch; built once per process (or per test file). */
export interface ApiDeps {
  config: Config;
  db: Db;
  redis: Redis;
  queues: QueueFactory;
  log: Logger;
  clock: Clock;
}

export function createApiDeps(config: Config, overrides: Partial<ApiDeps> = {}): ApiDeps {
  const redis = overrides.redis ?? createRedis(config.REDIS_URL);
  return {
    config,
    db: overrides.db ?? createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
    redis,
    queues: overrides.queues ?? createQueueFactory(redis, config.REDIS_PREFIX),
    log: overrides.log ?? createLogger(config.LOG_LEVEL, 'mailrail-api'),
    clock: overrides.clock ?? systemClock,
  };
}

export async function closeApiDeps(deps: ApiDeps): Promise<void> {
  await deps.queues.closeAll();
  await deps.db.$disconnect();
  deps.redis.disconnect();
}
