import type { RequestHandler } from 'express';
import { ApiError } from '@mailrail/domain/errors/api-error';
import type { ApiDeps } from '../deps';
import { countInWindow } from './fixed-window';

// Fixed one-second window per team, shared by every API replica.
const WINDOW_MS = 1000;

export function createRateLimit(deps: ApiDeps): RequestHandler {
  const prefix = `${deps.config.REDIS_PREFIX}:rl:`;
  return async (req, res, next) => {
    const limit = req.auth.rateLimit;
    if (!limit) return next();
    let count: number;
    let resetSeconds: number;
    try {
      ({ count, resetSeconds } = await countInWindow(deps.redis, `${prefix}${req.auth.teamId}`, WINDOW_MS));
    } catch (err) {
      // Fail open: a Redis hiccup must not take the API down with it.
      req.log.warn({ err }, 'rate limiter unavailable');
      return next();
    }
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - count)));
    res.setHeader('X-RateLimit-Reset', String(Math.floor(Date.now() / 1000) + resetSeconds));
    if (count > limit) {
      res.setHeader('Retry-After', String(resetSeconds));
      return next(new ApiError('RATE_LIMITED', `Rate limit exceeded. Try again in ${resetSeconds} seconds.`));
    }
    next();
  };
}
