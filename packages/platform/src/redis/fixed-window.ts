import type { Redis } from './client';
import { redisScript, runScript } from './script';

// A fixed window counted in Redis, so every replica (API, SMTP relay) shares it: the first hit of a window sets
// its expiry. Used by the per-team request rate and the per-IP failed-authentication limit.
const INCR_WITH_TTL = redisScript(
  `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`,
  1,
);

/** Whole seconds (at least 1) until a window with this PTTL ends; a missing TTL counts as a whole window. */
export function secondsUntilReset(pttl: number, windowMs: number): number {
  return Math.max(1, Math.ceil((pttl > 0 ? pttl : windowMs) / 1000));
}

/** Counts one hit on `key`; answers the count so far in this window and the seconds until it resets. */
export async function countInWindow(redis: Redis, key: string, windowMs: number): Promise<{ count: number; resetSeconds: number }> {
  const [count, pttl] = (await runScript(redis, INCR_WITH_TTL, [key, String(windowMs)])) as [number, number];
  return { count, resetSeconds: secondsUntilReset(pttl, windowMs) };
}
