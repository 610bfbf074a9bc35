import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { AuthContext } from './auth';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { createTeamRateLimit } from '@mailrail/domain/teams/team-rate-limit';
import type { ApiDeps } from '../deps';

// The per-team rate of core's team-rate-limit.ts (shared with the SMTP relay), as HTTP headers and a 429.

/** Counts the request for its team and sets the X-RateLimit-* headers; throws the 429 when over. */
export type ApplyRateLimit = (auth: AuthContext, res: ServerResponse) => Promise<void>;

export function createApplyRateLimit(deps: ApiDeps): ApplyRateLimit {
  const rate = createTeamRateLimit(deps.redis, { prefix: deps.config.REDIS_PREFIX, log: deps.log });
  return async (auth, res) => {
    const counted = await rate.hit(auth.teamId, auth.rateLimit);
    if (!counted) return;
    res.setHeader('X-RateLimit-Limit', String(counted.limit));
    res.setHeader('X-RateLimit-Remaining', String(counted.remaining));
    res.setHeader('X-RateLimit-Reset', String(Math.floor(Date.now() / 1000) + counted.resetSeconds));
    if (counted.exceeded) {
      res.setHeader('Retry-After', String(counted.resetSeconds));
      throw new ApiError('RATE_LIMITED', `Rate limit exceeded. Try again in ${counted.resetSeconds} seconds.`);
    }
  };
}

export function createRateLimit(deps: ApiDeps, apply: ApplyRateLimit = createApplyRateLimit(deps)): RequestHandler {
  return async (req, res, next) => {
    try {
      await apply(req.auth, res);
      next();
    } catch (err) {
      next(err);
    }
  };
}
