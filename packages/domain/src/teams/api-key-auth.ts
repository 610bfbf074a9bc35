import { LRUCache } from 'lru-cache';
import type { Clock } from '@mailrail/platform/clock';
import type { Config } from '@mailrail/platform/config/schema';
import type { Db } from '@mailrail/platform/db/client';
import { ApiError } from '../errors/api-error';
import type { Logger } from '@mailrail/platform/log/logger';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import { duplicateRedis, type Redis } from '@mailrail/platform/redis/client';
import { apiKeyRevokedChannel, keyMatches, parseApiKey, type ApiKeyCache, type Permission } from './api-keys';
import { createAuthFailureLimit } from './auth-failure-limit';
import { effectiveTeamRateLimit } from './team-rate-limit';

// API key verification, the one rule for every door a key opens: the HTTP API's Bearer header
// and the SMTP relay's AUTH password. Each door maps the outcome to its own protocol.

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

/** The client's IP made too many attempts that failed: refused before any database lookup for `retryAfter` seconds. */
export class TooManyAuthFailures extends ApiError {
  constructor(readonly retryAfter: number) {
    super('RATE_LIMITED', `Too many failed authentications from this address. Try again in ${retryAfter} seconds.`);
  }
}

/** Unknown, wrong or revoked key (the HTTP API answers 403, the SMTP relay 535). */
export const invalidApiKey = () => new ApiError('FORBIDDEN', 'Invalid API token');

interface CachedKey {
  keyId: number;
  tokenHash: string;
  auth: AuthContext;
  expiresAt: number;
}

const LAST_USED_EVERY_MS = 60_000;
// Unknown key ids remembered per process: enough for a burst of guesses, bounded in memory.
const UNKNOWN_KEYS_MAX = 10_000;

export interface ApiKeyVerifierDeps {
  config: Pick<
    Config,
    | 'REDIS_PREFIX'
    | 'API_KEY_CACHE_SECONDS'
    | 'API_KEY_NEGATIVE_CACHE_SECONDS'
    | 'AUTH_FAILURES_PER_MINUTE'
    | 'API_RATE_LIMIT'
    | 'API_RATE_LIMIT_MAX'
  >;
  db: Db;
  redis: Redis;
  log: Logger;
  clock: Clock;
}

export interface ApiKeyVerifier extends ApiKeyCache {
  /**
   * The key's context, or a throw: `invalidApiKey()` for a key that does not verify (counted as a
   * failure of `ip`), `TooManyAuthFailures` when `ip` is over AUTH_FAILURES_PER_MINUTE.
   */
  verify(key: string, ip: string): Promise<AuthContext>;
  /** Drops these keys from the cache at once (a revocation made in this process). */
  evict(clientIds: readonly string[]): void;
  /** Stops listening for revocations. */
  close(): void;
}

/**
 * Verified keys are cached for API_KEY_CACHE_SECONDS so the hot path costs one SHA-256 and a map
 * lookup; a revocation is announced over Redis and evicts at once. Unauthenticated load is
 * bounded: unknown key ids are remembered for API_KEY_NEGATIVE_CACHE_SECONDS, and every attempt
 * that is not a cached key's match is counted against its IP before any database lookup, so an IP
 * gets at most AUTH_FAILURES_PER_MINUTE lookups of wrong keys however many it sends at once.
 */
export function createApiKeyVerifier(deps: ApiKeyVerifierDeps, metrics?: Pick<Metrics, 'authFailures'>): ApiKeyVerifier {
  const cache = new Map<string, CachedKey>();
  // The injected clock, so tests can move time past a cache expiry without sleeping.
  const nowMs = () => deps.clock.now().getTime();
  // Unknown key ids come from strangers: at most UNKNOWN_KEYS_MAX are remembered (least recently
  // used out first), each for the negative-cache time on the same clock; 0 seconds turns it off.
  const negativeTtlMs = deps.config.API_KEY_NEGATIVE_CACHE_SECONDS * 1000;
  const unknownKeys =
    negativeTtlMs > 0
      ? new LRUCache<string, true>({ max: UNKNOWN_KEYS_MAX, ttl: negativeTtlMs, ttlResolution: 0, perf: { now: nowMs } })
      : null;
  const failures = createAuthFailureLimit(deps.redis, {
    prefix: deps.config.REDIS_PREFIX,
    max: deps.config.AUTH_FAILURES_PER_MINUTE,
    log: deps.log,
  });
  const lastUsedWritten = new Map<number, number>();
  const ttlMs = deps.config.API_KEY_CACHE_SECONDS * 1000;

  const subscriber = duplicateRedis(deps.redis);
  const channel = apiKeyRevokedChannel(deps.config.REDIS_PREFIX);
  subscriber.subscribe(channel).catch((err) => deps.log.warn({ err }, 'api key revocation channel unavailable'));
  subscriber.on('message', (_ch, clientId: string) => cache.delete(clientId));
  subscriber.on('error', () => undefined);

  // Lookups under way, by key id: a burst of requests with one key on a cold cache (a client's
  // pool opening at once, a restart) shares one lookup instead of each counting an attempt of the
  // IP, which refused a client's own concurrent requests with 429 once they outnumbered the limit.
  const lookups = new Map<string, Promise<CachedKey | null>>();

  const cachedKey = (clientId: string): CachedKey | null => {
    const hit = cache.get(clientId);
    return hit && hit.expiresAt > nowMs() ? hit : null;
  };

  async function lookUp(clientId: string): Promise<CachedKey | null> {
    if (unknownKeys?.get(clientId)) return null;
    const row = await deps.db.apiKey.findUnique({
      where: { clientId },
      select: {
        id: true,
        tokenHash: true,
        permission: true,
        domainId: true,
        teamId: true,
        revokedAt: true,
        team: { select: { apiRateLimit: true } },
      },
    });
    if (!row || row.revokedAt) {
      cache.delete(clientId);
      unknownKeys?.set(clientId, true);
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
        rateLimit: effectiveTeamRateLimit(row.team.apiRateLimit, deps.config),
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

  return {
    async verify(key, ip) {
      const parsed = parseApiKey(key);
      let cached = parsed ? cachedKey(parsed.clientId) : null;
      // A lookup of this key already under way counts as the cache: its result is compared like a
      // cached key's (a wrong secret is still counted below).
      const pending = parsed && !cached ? lookups.get(parsed.clientId) : undefined;
      if (pending) cached = await pending;
      // The hot path: a cached key whose secret matches costs one SHA-256 and is not counted.
      if (parsed && cached && keyMatches(parsed.secret, cached.tokenHash)) {
        touchLastUsed(cached.keyId);
        return cached.auth;
      }
      // This request looks the key up: it says so before its first await, so that the requests
      // arriving meanwhile wait for its result. They get null (and look up for themselves) when its
      // IP is refused or the database errs.
      let share: ((entry: CachedKey | null) => void) | undefined;
      if (parsed && !cached && !pending) {
        const clientId = parsed.clientId;
        lookups.set(
          clientId,
          new Promise<CachedKey | null>((resolve) => {
            share = (entry) => {
              lookups.delete(clientId);
              resolve(entry);
            };
          }),
        );
      }
      let found: CachedKey | null = null;
      try {
        // Anything else is an attempt of the IP, reserved before the database lookup, so concurrent
        // wrong keys cannot all pass a count that has not seen the others yet.
        const attempt = await failures.reserve(ip);
        if (attempt.refusedFor) {
          metrics?.authFailures.inc({ reason: 'ip-blocked' });
          throw new TooManyAuthFailures(attempt.refusedFor);
        }
        try {
          found = parsed && !cached ? await lookUp(parsed.clientId) : cached;
        } catch (err) {
          // The key was never checked (database down): not a failure of the IP.
          await attempt.giveBack();
          throw err;
        }
        if (!parsed || !found || !keyMatches(parsed.secret, found.tokenHash)) {
          metrics?.authFailures.inc({ reason: 'invalid-key' });
          throw invalidApiKey();
        }
        await attempt.giveBack();
      } finally {
        share?.(found);
      }
      touchLastUsed(found.keyId);
      return found.auth;
    },
    evict: (clientIds) => {
      for (const clientId of clientIds) cache.delete(clientId);
    },
    close: () => subscriber.disconnect(),
  };
}
