import type { Logger, Redis } from '@mailrail/core';
import { countInWindow, secondsUntilReset } from './fixed-window';

// Failed authentications per subject (a client IP, a sign-in address) in a fixed window counted in
// Redis so every API replica shares it. A subject over the limit gets 429 before its credential is
// checked; other subjects are not affected. Fails open: a Redis hiccup must not lock everyone out.
// Used for API keys (per IP, per minute) and dashboard sign-ins (per IP and per address).

export interface AuthFailureLimit {
  /** Seconds until the subject may try again, or 0 when it is under the limit. */
  blockedFor(subject: string): Promise<number>;
  /** Counts one failure; answers the seconds to wait when this failure put the subject over the limit, else 0. */
  recordFailure(subject: string): Promise<number>;
  /** Forgets the subject's failures (a successful sign-in of that account). */
  reset(subject: string): Promise<void>;
}

export interface AuthFailureLimitOptions {
  prefix: string;
  /** Failures allowed per window; 0 = no limit. */
  max: number;
  log: Logger;
  /** Key namespace, so several limits can count the same subject apart. */
  name?: string;
  windowMs?: number;
}

export function createAuthFailureLimit(redis: Redis, opts: AuthFailureLimitOptions): AuthFailureLimit {
  const windowMs = opts.windowMs ?? 60_000;
  const keyOf = (subject: string) => `${opts.prefix}:${opts.name ?? 'authfail'}:${subject}`;
  if (!opts.max) return { blockedFor: async () => 0, recordFailure: async () => 0, reset: async () => undefined };

  return {
    async blockedFor(subject) {
      try {
        const [count, pttl] = (await redis.multi().get(keyOf(subject)).pttl(keyOf(subject)).exec()) ?? [];
        return Number(count?.[1] ?? 0) >= opts.max ? secondsUntilReset(Number(pttl?.[1]), windowMs) : 0;
      } catch (err) {
        opts.log.warn({ err }, 'auth failure limiter unavailable');
        return 0;
      }
    },
    async recordFailure(subject) {
      try {
        const { count, resetSeconds } = await countInWindow(redis, keyOf(subject), windowMs);
        return count > opts.max ? resetSeconds : 0;
      } catch (err) {
        opts.log.warn({ err }, 'auth failure limiter unavailable');
        return 0;
      }
    },
    async reset(subject) {
      await redis.del(keyOf(subject)).catch((err) => opts.log.warn({ err }, 'auth failure limiter unavailable'));
    },
  };
}
