import { createHash } from 'node:crypto';
import { ApiError } from '@mailrail/domain/errors/api-error';
import type { ApiDeps } from '../../deps';
import { createAuthFailureLimit, type AuthFailureLimit } from '@mailrail/domain/teams/auth-failure-limit';

// Sign-in attempts are counted per client IP and per address, over 15 minutes, in Redis (shared by
// every replica), before the password is checked (auth-failure-limit.ts): however many arrive at
// once, at most the limit's number of passwords are verified. The address is counted whether or
// not an account has it, so a 429 tells nothing about existence. A success gives the IP its
// attempt back and forgets the address's failures; the IP's earlier failures stay.

const WINDOW_MS = 15 * 60_000;

export class TooManyAttempts extends ApiError {
  constructor(readonly retryAfter: number) {
    super('RATE_LIMITED', `Too many sign-in attempts. Try again in ${retryAfter} seconds.`);
  }
}

export interface LoginAttempt {
  /** The password was right: the IP's attempt is given back and the address's failures forgotten. */
  succeeded(): Promise<void>;
}

export interface LoginThrottle {
  /**
   * Reserves an attempt of the IP and of the address; call it before checking the password. Throws
   * TooManyAttempts when either is over its limit. An attempt that is not `succeeded()` counts as a failure.
   */
  reserve(ip: string, email: string): Promise<LoginAttempt>;
}

// The address as a Redis key: hashed, so keys neither hold addresses nor vary in length.
const accountKey = (email: string) => createHash('sha256').update(email).digest('hex');

function throttle(byIp: AuthFailureLimit, byAccount: AuthFailureLimit): LoginThrottle {
  return {
    async reserve(ip, email) {
      const fromIp = await byIp.reserve(ip);
      if (fromIp.refusedFor) throw new TooManyAttempts(fromIp.refusedFor);
      const forAccount = await byAccount.reserve(accountKey(email));
      if (forAccount.refusedFor) {
        // Refused for its address: not a failure of the IP.
        await fromIp.giveBack();
        throw new TooManyAttempts(forAccount.refusedFor);
      }
      return {
        async succeeded() {
          await Promise.all([fromIp.giveBack(), byAccount.reset(accountKey(email))]);
        },
      };
    },
  };
}

/** Sign-in and password-change attempts (`login`) or password-reset requests (`reset`, every request counts). */
export function createLoginThrottle(deps: ApiDeps, kind: 'login' | 'reset'): LoginThrottle {
  const common = { prefix: deps.config.REDIS_PREFIX, log: deps.log, windowMs: WINDOW_MS };
  return throttle(
    createAuthFailureLimit(deps.redis, { ...common, name: `dash:${kind}:ip`, max: deps.config.DASHBOARD_LOGIN_FAILURES_PER_IP }),
    createAuthFailureLimit(deps.redis, { ...common, name: `dash:${kind}:acct`, max: deps.config.DASHBOARD_LOGIN_FAILURES_PER_ACCOUNT }),
  );
}
