import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

export function testRedisPrefix(): string {
  return `mrt_${randomBytes(5).toString('hex')}`;
}

/** Deletes every key under the prefix (BullMQ queues included). */
export async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}
