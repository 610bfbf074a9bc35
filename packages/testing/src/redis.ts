import { randomBytes } from 'node:crypto';
import { scanTargets, type Redis } from '@mailrail/platform/redis/client';

export function testRedisPrefix(): string {
  return `mrt_${randomBytes(5).toString('hex')}`;
}

/** Deletes every key under the prefix (BullMQ queues included), on every master of a cluster. */
export async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<void> {
  // A cluster node that is down (a failover test killed it) would hold a worker connection forever.
  for (const node of scanTargets(redis).filter((n) => n.status === 'ready')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      // One DEL per key (in one pipeline): on a cluster the keys of one batch sit in many slots.
      if (keys.length) await node.pipeline(keys.map((k) => ['del', k])).exec();
    } while (cursor !== '0');
  }
}
