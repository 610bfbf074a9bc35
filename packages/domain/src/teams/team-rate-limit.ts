import type { Logger } from '@mailrail/platform/log/logger';
import type { Redis } from '@mailrail/platform/redis/client';
import { createWindowCounter } from '@mailrail/platform/redis/fixed-window';

// The per-team request rate (API_RATE_LIMIT, or the team's own apiRateLimit): a fixed one-second
// window per team counted in Redis, shared by every API replica and the SMTP relay, where each
// message counts as one request. Fails open: a Redis hiccup must not stop sending.
const WINDOW_MS = 1000;

/**
 * The rate the limiter applies to a team: its own apiRateLimit, else API_RATE_LIMIT. The operator
 * owns the ceiling: a team's own value above API_RATE_LIMIT_MAX, or 0 (unlimited), counts as the
 * ceiling (0 = no ceiling). The instance default is the operator's own and applies as it is.
 */
export function effectiveTeamRateLimit(teamLimit: number | null, config: { API_RATE_LIMIT: number; API_RATE_LIMIT_MAX: number }): number {
  if (teamLimit === null) return config.API_RATE_LIMIT;
  const ceiling = config.API_RATE_LIMIT_MAX;
  return ceiling > 0 && (teamLimit === 0 || teamLimit > ceiling) ? ceiling : teamLimit;
}

export interface TeamRateCount {
  limit: number;
  /** Requests left in this window (0 when over). */
  remaining: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
  /** True when this request is over the limit. */
  exceeded: boolean;
}

export interface TeamRateLimit {
  /** Counts one request of the team; null when the team is unlimited or Redis cannot count. */
  hit(teamId: number, limit: number): Promise<TeamRateCount | null>;
}

export function createTeamRateLimit(redis: Redis, opts: { prefix: string; log: Logger }): TeamRateLimit {
  const keyPrefix = `${opts.prefix}:rl:`;
  // Under load, the requests of one team that arrive together share one Redis call.
  const countHit = createWindowCounter(redis, WINDOW_MS);
  return {
    async hit(teamId, limit) {
      if (!limit) return null;
      try {
        const { count, resetSeconds } = await countHit(`${keyPrefix}${teamId}`);
        return { limit, remaining: Math.max(0, limit - count), resetSeconds, exceeded: count > limit };
      } catch (err) {
        opts.log.warn({ err }, 'rate limiter unavailable');
        return null;
      }
    },
  };
}
