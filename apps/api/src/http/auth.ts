import type { RequestHandler } from 'express';
import { ApiError, apiKeyRevokedChannel, keyMatches, parseApiKey, type Permission } from '@mailrail/core';
import type { ApiDeps } from '../deps';

export interface AuthContext {
  teamId: number;
  apiKeyId: number;
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
  tokenHash: string;
  auth: AuthContext;
  expiresAt: number;
}

const LAST_USED_EVERY_MS = 60_000;

/**
 * Bearer API key check. Verified keys are cached for API_KEY_CACHE_SECONDS so the hot path costs
 * one SHA-256 and a map lookup; a revocation is announced over Redis and evicts at once.
 */
export function createAuth(deps: ApiDeps): { middleware: RequestHandler; close: () => void } {
  const cache = new Map<string, CachedKey>();
  const lastUsedWritten = new Map<number, number>();
  const ttlMs = deps.config.API_KEY_CACHE_SECONDS * 1000;

  const subscriber = deps.redis.duplicate();
  const channel = apiKeyRevokedChannel(deps.config.REDIS_PREFIX);
  subscriber.subscribe(channel).catch((err) => deps.log.warn({ err }, 'api key revocation channel unavailable'));
  subscriber.on('message', (_ch, clientId: string) => cache.delete(clientId));
  subscriber.on('error', () => undefined);

  async function load(clientId: string): Promise<CachedKey | null> {
    const hit = cache.get(clientId);
    if (hit && hit.expiresAt > Date.now()) return hit;
    const row = await deps.db.apiKey.findUnique({
      where: { clientId },
      select: { id: true, tokenHash: true, permission: true, domainId: true, teamId: true, revokedAt: true, team: { select: { apiRateLimit: true } } },
    });
    if (!row || row.revokedAt) {
      cache.delete(clientId);
      return null;
    }
    const entry: CachedKey = {
      tokenHash: row.tokenHash,
      expiresAt: Date.now() + ttlMs,
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
    const now = Date.now();
    if ((lastUsedWritten.get(apiKeyId) ?? 0) + LAST_USED_EVERY_MS > now) return;
    lastUsedWritten.set(apiKeyId, now);
    deps.db.apiKey.update({ where: { id: apiKeyId }, data: { lastUsed: new Date(now) } }).catch(() => undefined);
  }

  const middleware: RequestHandler = async (req, _res, next) => {
    try {
      const header = req.headers.authorization;
      const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!m) throw new ApiError('UNAUTHORIZED', 'No Authorization header provided');
      const parsed = parseApiKey(m[1]);
      if (!parsed) throw new ApiError('FORBIDDEN', 'Invalid API token');
      const key = await load(parsed.clientId);
      if (!key || !keyMatches(parsed.secret, key.tokenHash)) throw new ApiError('FORBIDDEN', 'Invalid API token');
      // SENDING keys reach only the email routes; the path check here covers every future route.
      if (key.auth.permission === 'SENDING' && !/^\/api\/v1\/emails(\/|$)/.test(req.originalUrl.split('?')[0])) {
        throw new ApiError('FORBIDDEN', 'This API key has SENDING permission and can only send emails');
      }
      req.auth = key.auth;
      touchLastUsed(key.auth.apiKeyId);
      next();
    } catch (err) {
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
