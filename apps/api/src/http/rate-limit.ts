import type { RequestHandler } from 'express';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { createTeamRateLimit } from '@mailrail/domain/teams/team-rate-limit';
import type { ApiDeps } from '../deps';

// The per-team rate of core's team-rate-limit.ts (shared with the SMTP relay), as HTTP headers and a 429.
export function createRateLimit(deps: ApiDeps): RequestHandler {
  const rate = createTeamRateLimit(deps.redis, { prefix: deps.config.REDIS_PREFIX, log: deps.log });
  return async (req, res, next) => {
    const counted = await rate.hit(req.auth.teamId, req.auth.rateLimit);
    if (!counted) return next();
    res.setHeader('X-RateLimit-Limit', String(counted.limit));
    res.setHeader('X-RateLimit-Remaining', String(counted.remaining));
    res.setHeader('X-RateLimit-Reset', String(Math.floor(Date.now() / 1000) + counted.resetSeconds));
    if (counted.exceeded) {
      res.setHeader('Retry-After', String(counted.resetSeconds));
      return next(new ApiError('RATE_LIMITED', `Rate limit exceeded. Try again in ${counted.resetSeconds} seconds.`));
    }
    next();
  };
}
