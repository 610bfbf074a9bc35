import type { Logger } from '@mailrail/platform/log/logger';
import type { Redis } from '@mailrail/platform/redis/client';
import { countInWindow } from '@mailrail/platform/redis/fixed-window';
import { redisScript, runScript } from '@mailrail/platform/redis/script';

// Authentication attempts per subject (a client IP, a sign-in address) in a fixed window counted in
// Redis, so every replica (API and SMTP relay) shares it. An attempt is reserved with one atomic
// INCR *before* its credential is checked: concurrent attempts cannot all pass a check that has not
// seen the others yet, so at most `max` credentials are ever checked per subject and window. A
// failed attempt keeps its reservation (that is the failure count); a success may give it back.
// A refused attempt stays counted: the window's end, set by its first attempt, lifts the block.
// Used for API keys and SMTP AUTH (per IP), dashboard sign-ins and password changes (per IP and
// per address), and password-reset requests. Fails open: when Redis errs the attempt goes ahead
// unreserved (with a warning), because a Redis hiccup must not lock every user out.

export interface AuthAttempt {
  /** 0 when the attempt is reserved and may be checked; else the seconds until the subject may try again. */
  refusedFor: number;
  /** Gives the reservation back (the credential was right); a no-op for a refused or unreserved attempt. */
  giveBack(): Promise<void>;
}

export interface AuthFailureLimit {
  /** Reserves one attempt of `subject`: call it before checking the credential, and refuse when `refusedFor` > 0. */
  reserve(subject: string): Promise<AuthAttempt>;
  /** Forgets every attempt of the subject in this window (a successful sign-in of that account). */
  reset(subject: string): Promise<void>;
}

export interface AuthFailureLimitOptions {
  prefix: string;
  /** Attempts allowed per window (failures, plus any still being checked); 0 = no limit. */
  max: number;
  log: Logger;
  /** Key namespace, so several limits can count the same subject apart. */
  name?: string;
  windowMs?: number;
}

// Gives one reservation back, never below 0 and never on a key whose window is over (a DECR there
// would make a key without expiry).
const GIVE_BACK = redisScript(
  `
local n = tonumber(redis.call('GET', KEYS[1]))
if n and n > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`,
  1,
);

const noReservation: AuthAttempt = { refusedFor: 0, giveBack: async () => undefined };

export function createAuthFailureLimit(redis: Redis, opts: AuthFailureLimitOptions): AuthFailureLimit {
  const windowMs = opts.windowMs ?? 60_000;
  const keyOf = (subject: string) => `${opts.prefix}:${opts.name ?? 'authfail'}:${subject}`;
  const unavailable = (err: unknown) => opts.log.warn({ err }, 'auth failure limiter unavailable');
  if (!opts.max) return { reserve: async () => noReservation, reset: async () => undefined };

  return {
    async reserve(subject) {
      const key = keyOf(subject);
      let counted;
      try {
        counted = await countInWindow(redis, key, windowMs);
      } catch (err) {
        unavailable(err);
        return noReservation;
      }
      if (counted.count > opts.max) return { refusedFor: counted.resetSeconds, giveBack: async () => undefined };
      let given = false;
      return {
        refusedFor: 0,
        async giveBack() {
          if (given) return;
          given = true;
          await runScript(redis, GIVE_BACK, [key]).catch(unavailable);
        },
      };
    },
    async reset(subject) {
      await redis.del(keyOf(subject)).catch(unavailable);
    },
  };
}
