import IORedis, { type Redis } from 'ioredis';

export type { Redis };

/** BullMQ needs maxRetriesPerRequest: null on connections used by workers. */
export function createRedis(url: string, opts: { forWorker?: boolean } = {}): Redis {
  return new IORedis(url, {
    maxRetriesPerRequest: opts.forWorker ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
  });
}
