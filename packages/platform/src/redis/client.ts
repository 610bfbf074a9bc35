import IORedis, { type Redis } from 'ioredis';

export type { Redis };

/**
 * BullMQ needs maxRetriesPerRequest: null on connections used by workers. The API's and the SMTP
 * relay's connection pipelines automatically: commands issued in the same tick (the idempotency
 * results of every email one group commit answered, say) leave in one write, not one each.
 * Workers keep plain connections: BullMQ duplicates them for its blocking reads; the API's and the
 * relay's queues get a plain duplicate (createBaseDeps).
 */
export function createRedis(url: string, opts: { forWorker?: boolean } = {}): Redis {
  return new IORedis(url, {
    maxRetriesPerRequest: opts.forWorker ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
    enableAutoPipelining: !opts.forWorker,
  });
}
