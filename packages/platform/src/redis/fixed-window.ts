import { createBatcher } from '../batching/batcher';
import type { Redis } from './client';
import { redisScript, runScript } from './script';

// A fixed window counted in Redis, so every replica (API, SMTP relay) shares it: the first hit of a window sets
// its expiry. Used by the per-team request rate and the per-IP failed-authentication limit.
const INCRBY_WITH_TTL = redisScript(
  `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`,
  1,
);

export interface WindowCount {
  /** Hits in this window so far, this one included. */
  count: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
}

/** Whole seconds (at least 1) until a window with this PTTL ends; a missing TTL counts as a whole window. */
export function secondsUntilReset(pttl: number, windowMs: number): number {
  return Math.max(1, Math.ceil((pttl > 0 ? pttl : windowMs) / 1000));
}

async function addHits(redis: Redis, key: string, windowMs: number, hits: number): Promise<{ total: number; resetSeconds: number }> {
  const [total, pttl] = (await runScript(redis, INCRBY_WITH_TTL, [key, String(windowMs), String(hits)])) as [number, number];
  return { total, resetSeconds: secondsUntilReset(pttl, windowMs) };
}

/** Counts one hit on `key`; answers the count so far in this window and the seconds until it resets. */
export async function countInWindow(redis: Redis, key: string, windowMs: number): Promise<WindowCount> {
  const { total, resetSeconds } = await addHits(redis, key, windowMs, 1);
  return { count: total, resetSeconds };
}

/**
 * countInWindow for a hot path: the hits on one key made in the same turn of the event loop (the
 * requests node read from its sockets in one poll) go to Redis as one INCRBY, and each hit is
 * answered the count it would have had alone (in the order they came), so limits hold exactly as
 * with one INCR each. The batch leaves at setImmediate: after the poll phase, not per callback.
 */
export function createWindowCounter(redis: Redis, windowMs: number): (key: string) => Promise<WindowCount> {
  // However many hits a turn brings, each key is one INCRBY: no bound on the batch.
  const hits = createBatcher<string, WindowCount>(
    async (sameKey, key) => {
      const { total, resetSeconds } = await addHits(redis, key, windowMs, sameKey.length);
      const first = total - sameKey.length + 1;
      return sameKey.map((_, i) => ({ count: first + i, resetSeconds }));
    },
    { schedule: 'turn', maxBatch: Infinity, groupBy: (key) => key },
  );
  return (key) => hits.submit(key);
}
