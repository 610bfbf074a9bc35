import IORedis from 'ioredis';
import { createQueueFactory, queueNames } from '@mailrail/platform/queue/queues';

/**
 * The send queue the floors add to. Its connection does not pipeline by itself, like the API's
 * queues (packages/platform/src/process/base-deps.ts): ioredis copies BullMQ's forty-odd scripts
 * into every pipeline of an auto-pipelining connection. Until 2026-11-29 the floors used one; about
 * a sixth of their allocations then outlived the young generation, and at 2,000/s their p99 was
 * 11-14 ms where this connection gives 7 ms (bench/RESULTS.md).
 */
export function floorSendQueue() {
  const redis = new IORedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableAutoPipelining: false });
  return createQueueFactory(redis, process.env.REDIS_PREFIX ?? 'floor').get(queueNames.send('us-east-1', 'transactional'));
}
