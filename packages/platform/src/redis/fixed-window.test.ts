import IORedis from 'ioredis';
import { testRedisPrefix, testRedisTarget } from '@mailrail/testing/redis';
import { createRedis } from './client';
import { countInWindow, createWindowCounter } from './fixed-window';

describe('createWindowCounter', () => {
  const redis = createRedis(testRedisTarget());
  const prefix = testRedisPrefix();
  afterAll(() => redis.disconnect());

  it('answers hits made together their own counts, 1..n in order, with one Redis call per key', async () => {
    const count = createWindowCounter(redis, 10_000);
    const calls = jest.spyOn(redis, 'evalsha');
    try {
      const [a, b] = [`${prefix}:fw:a`, `${prefix}:fw:b`];
      const firstHit = Date.now();
      const answers = await Promise.all([count(a), count(a), count(b), count(a)]);
      expect(answers.map((x) => x.count)).toEqual([1, 2, 1, 3]);
      expect(calls).toHaveBeenCalledTimes(2);
      // The next turn continues the same window, and the first hit set its expiry.
      expect((await count(a)).count).toBe(4);
      // The window's 10 s from the first hit, less the time since (± 2: whole milliseconds on two clocks).
      const ttl = await redis.pttl(a);
      const since = Date.now() - firstHit;
      expect(ttl).toBeLessThanOrEqual(10_000);
      expect(ttl).toBeGreaterThanOrEqual(10_000 - since - 2);
      expect((await countInWindow(redis, a, 10_000)).count).toBe(5);
    } finally {
      calls.mockRestore();
    }
  });

  it('starts a new window once the last one expired', async () => {
    const count = createWindowCounter(redis, 200);
    const key = `${prefix}:fw:short`;
    expect((await Promise.all([count(key), count(key)])).map((x) => x.count)).toEqual([1, 2]);
    await new Promise((r) => setTimeout(r, 300));
    expect((await count(key)).count).toBe(1);
  });

  it('rejects every hit of a batch whose Redis call fails', async () => {
    // Nothing listens on port 1; no retries, so the calls fail at once.
    const down = new IORedis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => null });
    down.on('error', () => undefined);
    const count = createWindowCounter(down, 1_000);
    const results = await Promise.allSettled([count('k'), count('k')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    down.disconnect();
  });
});
