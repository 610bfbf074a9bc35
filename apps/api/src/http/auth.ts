import type { RequestHandler } from 'express';
import { ApiError, apiKeyRevokedChannel, keyMatches, parseApiKey, type Metrics, type Permission } from '@mailrail/core';
import type { ApiDeps } from '../deps';
import { createAuthFailureLimit } from './auth-failure-limit';
import { BoundedCache } from './bounded-cache';

export interface AuthContext {
  teamId: number;
  /** The key of the request; null for a dashboard session (apps/api/src/dashboard). */
  apiKeyId: number | null;
  permission: Permission;
  /** A key bound to a domain may only act on that domain. */
  domainId: number | null;
  /** Requests per second for the team; 0 = unlimited. */
  rateLimit: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth: AuthContext;
    }
  }
}

interface CachedKey {
  keyId: number;
  tokenHash: string;
  auth: AuthContext;
  expiresAt: number;
}

const LAST_USED_EVERY_MS = 60_000;
// Unknown key ids remembered per process: enough for a burst of guesses, bounded in memory.
const UNKNOWN_KEYS_MAX = 10_000;

class TooManyFailures extends ApiError {
  constructor(readonly retryAfter: number) {
    super('RATE_LIMITED', `Too many failed authentications from this address. Try again in ${retryAfter} seconds.`);
  }
}
const tooManyFailures = (retryAfter: number) => new TooManyFailures(retryAfter);

/**
 * Bearer API key check. Verified keys are cached for API_KEY_CACHE_SECONDS so the hot path costs
 * one SHA-256 and a map lookup; a revocation is announced over Redis and evicts at once.
 * Unauthenticated load is bounded: unknown key ids are remembered for API_KEY_NEGATIVE_CACHE_SECONDS,
 * and an IP with AUTH_FAILURES_PER_MINUTE failures gets 429 before any database lookup.
 */
export function createAuth(deps: ApiDeps, metrics?: Metrics): { middleware: RequestHandler; close: () => void } {
  const cache = new Map<string, CachedKey>();
  // The injected clock, so tests can move time past a cache expiry without sleeping.
  const nowMs = () => deps.clock.now().getTime();
  const unknownKeys = new BoundedCache<true>(UNKNOWN_KEYS_MAX, deps.config.API_KEY_NEGATIVE_CACHE_SECONDS * 1000, nowMs);
  const failures = createAuthFailureLimit(deps.redis, { prefix: deps.config.REDIS_PREFIX, max: deps.config.AUTH_FAILURES_PER_MINUTE, log: deps.log });
  const lastUsedWritten = new Map<number, number>();
  const ttlMs = deps.config.API_KEY_CACHE_SECONDS * 1000;

  const subscriber = deps.redis.duplicate();
  const channel = apiKeyRevokedChannel(deps.config.REDIS_PREFIX);
  subscriber.subscribe(channel).catch((err) => deps.log.warn({ err }, 'api key revocation channel unavailable'));
  subscriber.on('message', (_ch, clientId: string) => cache.delete(clientId));
  subscriber.on('error', () => undefined);

  async function load(clientId: string, ip: string): Promise<CachedKey | null> {
    const hit = cache.get(clientId);
    if (hit && hit.expiresAt > nowMs()) return hit;
    if (unknownKeys.has(clientId)) return null;
    const retryAfter = await failures.blockedFor(ip);
    if (retryAfter) {
      metrics?.authFailures.inc({ reason: 'ip-blocked' });
      throw tooManyFailures(retryAfter);
    }
    const row = await deps.db.apiKey.findUnique({
      where: { clientId },
      select: { id: true, tokenHash: true, permission: true, domainId: true, teamId: true, revokedAt: true, team: { select: { apiRateLimit: true } } },
    });
    if (!row || row.revokedAt) {
      cache.delete(clientId);
      unknownKeys.set(clientId, true);
      return null;
    }
    const entry: CachedKey = {
      keyId: row.id,
      tokenHash: row.tokenHash,
      expiresAt: nowMs() + ttlMs,
      auth: {
        teamId: row.teamId,
        apiKeyId: row.id,
        permission: row.permission,
        domainId: row.domainId,
        rateLimit: row.team.apiRateLimit ?? deps.config.API_RATE_LIMIT,
      },
    };
    if (ttlMs > 0) cache.set(clientId, entry);
    return entry;
  }

  function touchLastUsed(apiKeyId: number) {
    const now = nowMs();
    if ((lastUsedWritten.get(apiKeyId) ?? 0) + LAST_USED_EVERY_MS > now) return;
    lastUsedWritten.set(apiKeyId, now);
    deps.db.apiKey.update({ where: { id: apiKeyId }, data: { lastUsed: new Date(now) } }).catch(() => undefined);
  }

  const middleware: RequestHandler = async (req, res, next) => {
    try {
      const header = req.headers.authorization;
      const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!m) throw new ApiError('UNAUTHORIZED', 'No Authorization header provided');
      const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
      const parsed = parseApiKey(m[1]);
      const key = parsed ? await load(parsed.clientId, ip) : null;
      if (!parsed || !key || !keyMatches(parsed.secret, key.tokenHash)) {
        metrics?.authFailures.inc({ reason: 'invalid-key' });
        const retryAfter = await failures.recordFailure(ip);
        if (retryAfter) throw tooManyFailures(retryAfter);
        throw new ApiError('FORBIDDEN', 'Invalid API token');
      }
      // SENDING keys reach only the email routes; the path check here covers every future route.
      if (key.auth.permission === 'SENDING' && !/^\/api\/v1\/emails(\/|$)/.test(req.originalUrl.split('?')[0])) {
        throw new ApiError('FORBIDDEN', 'This API key has SENDING permission and can only send emails');
      }
      req.auth = key.auth;
      touchLastUsed(key.keyId);
      next();
    } catch (err) {
      if (err instanceof TooManyFailures) res.setHeader('Retry-After', String(err.retryAfter));
      next(err);
    }
  };

  return {
    middleware,
    close: () => {
      subscriber.disconnect();
    },
  };
}
