import { createHash } from 'node:crypto';
import { ApiError } from '@mailrail/core/errors/api-error';
import type { ApiDeps } from '../../deps';
import { createAuthFailureLimit, type AuthFailureLimit } from '../../http/auth-failure-limit';

// Failed sign-ins are counted per client IP and per address, over 15 minutes, in Redis (shared by
// every replica). The address is counted whether or not an account has it, so a 429 tells nothing
// about existence. A success forgets the address's failures; the IP's stay.

const WINDOW_MS = 15 * 60_000;

export class TooManyAttempts extends ApiError {
  constructor(readonly retryAfter: number) {
    super('RATE_LIMITED', `Too many sign-in attempts. Try again in ${retryAfter} seconds.`);
  }
}

export interface LoginThrottle {
  /** Throws TooManyAttempts when the IP or the address is over its limit. */
  check(ip: string, email: string): Promise<void>;
  /** Counts a failure; throws TooManyAttempts when it put either over the limit. */
  fail(ip: string, email: string): Promise<void>;
  succeed(email: string): Promise<void>;
}

// The address as a Redis key: hashed, so keys neither hold addresses nor vary in length.
const accountKey = (email: string) => createHash('sha256').update(email).digest('hex');

function throttle(byIp: AuthFailureLimit, byAccount: AuthFailureLimit): LoginThrottle {
  return {
    async check(ip, email) {
      const wait = Math.max(await byIp.blockedFor(ip), await byAccount.blockedFor(accountKey(email)));
      if (wait) throw new TooManyAttempts(wait);
    },
    async fail(ip, email) {
      const wait = Math.max(await byIp.recordFailure(ip), await byAccount.recordFailure(accountKey(email)));
      if (wait) throw new TooManyAttempts(wait);
    },
    succeed: (email) => byAccount.reset(accountKey(email)),
  };
}

/** Sign-in failures (`login`) or password-reset requests (`reset`, every request counts). */
export function createLoginThrottle(deps: ApiDeps, kind: 'login' | 'reset'): LoginThrottle {
  const common = { prefix: deps.config.REDIS_PREFIX, log: deps.log, windowMs: WINDOW_MS };
  return throttle(
    createAuthFailureLimit(deps.redis, { ...common, name: `dash:${kind}:ip`, max: deps.config.DASHBOARD_LOGIN_FAILURES_PER_IP }),
    createAuthFailureLimit(deps.redis, { ...common, name: `dash:${kind}:acct`, max: deps.config.DASHBOARD_LOGIN_FAILURES_PER_ACCOUNT }),
  );
}
