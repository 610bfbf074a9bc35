import { createRedis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix } from './redis';

// The benches call it on a client they have just made: it must not skip a node still connecting.
it('deletes every key under the prefix through a client that is still connecting', async () => {
  const prefix = testRedisPrefix();
  const writer = createRedis('redis://127.0.0.1:6379');
  await writer.mset(...Array.from({ length: 50 }, (_, i) => [`${prefix}:k${i}`, 'v']).flat());
  await writer.set(`${prefix}x:other`, 'kept');
  const fresh = createRedis('redis://127.0.0.1:6379');
  try {
    expect(fresh.status).not.toBe('ready');
    expect(await deleteRedisPrefix(fresh, prefix)).toBe(50);
    expect(await writer.exists(`${prefix}:k0`, `${prefix}x:other`)).toBe(1);
  } finally {
    await writer.del(`${prefix}x:other`);
    writer.disconnect();
    fresh.disconnect();
  }
});
