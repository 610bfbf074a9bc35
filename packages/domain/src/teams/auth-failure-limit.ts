import type { Logger } from '@mailrail/platform/log/logger';
import type { Redis } from '@mailrail/platform/redis/client';
import { countInWindow, secondsUntilReset } from '@mailrail/platform/redis/fixed-window';

// Failed API key authentications per client IP, in a fixed one-minute window counted in Redis so
// every replica (API and SMTP relay) shares it. An IP over the limit is refused (HTTP 429, SMTP
// 421) before its key is looked up in the database; other IPs are not affected. Fails open: a Redis hiccup must not lock everyone out.
const WINDOW_MS = 60_000;

export interface AuthFailureLimit {
  /** Seconds until the IP may try again, or 0 when it is under the limit. */
  blockedFor(ip: string): Promise<number>;
  /** Counts one failure; answers the seconds to wait when this failure put the IP over the limit, else 0. */
  recordFailure(ip: string): Promise<number>;
}

export function createAuthFailureLimit(redis: Redis, opts: { prefix: string; maxPerMinute: number; log: Logger }): AuthFailureLimit {
  const keyOf = (ip: string) => `${opts.prefix}:authfail:${ip}`;
  if (!opts.maxPerMinute) return { blockedFor: async () => 0, recordFailure: async () => 0 };

  return {
    async blockedFor(ip) {
      try {
        const [count, pttl] = (await redis.multi().get(keyOf(ip)).pttl(keyOf(ip)).exec()) ?? [];
        return Number(count?.[1] ?? 0) >= opts.maxPerMinute ? secondsUntilReset(Number(pttl?.[1]), WINDOW_MS) : 0;
      } catch (err) {
        opts.log.warn({ err }, 'auth failure limiter unavailable');
        return 0;
      }
    },
    async recordFailure(ip) {
      try {
        const { count, resetSeconds } = await countInWindow(redis, keyOf(ip), WINDOW_MS);
        return count > opts.maxPerMinute ? resetSeconds : 0;
      } catch (err) {
        opts.log.warn({ err }, 'auth failure limiter unavailable');
        return 0;
      }
    },
  };
}
