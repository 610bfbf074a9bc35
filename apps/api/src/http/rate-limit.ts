import type { RequestHandler } from 'express';
import { ApiError } from '@mailrail/core';
import type { ApiDeps } from '../deps';

// Fixed one-second window per team, counted in Redis so every API replica shares it.
const INCR_WITH_TTL = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 1000) end
return {n, redis.call('PTTL', KEYS[1])}
`;

export function createRateLimit(deps: ApiDeps): RequestHandler {
  const prefix = `${deps.config.REDIS_PREFIX}:rl:`;
  return async (req, res, next) => {
    const limit = req.auth.rateLimit;
    if (!limit) return next();
    let count: number;
    let pttl: number;
    try {
      [count, pttl] = (await deps.redis.eval(INCR_WITH_TTL, 1, `${prefix}${req.auth.teamId}`)) as [number, number];
    } catch (err) {
      // Fail open: a Redis hiccup must not take the API down with it.
      req.log.warn({ err }, 'rate limiter unavailable');
      return next();
    }
    const resetSeconds = Math.max(1, Math.ceil((pttl > 0 ? pttl : 1000) / 1000));
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
