import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '@mailrail/platform/config/schema';
import type { Db } from '@mailrail/platform/db/client';
import type { Logger } from '@mailrail/platform/log/logger';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import type { Redis } from '@mailrail/platform/redis/client';
import { safeEqualHex } from '@mailrail/platform/crypto/secrets';
import { newId } from '@mailrail/platform/ids';

import { ApiPermission } from '@mailrail/platform/db/generated/enums';

export type Permission = ApiPermission;

export const isApiPermission = (value: string): value is Permission => (Object.values(ApiPermission) as string[]).includes(value);

// Keys look like useSend's: us_<clientId>_<secret>, 10 lowercase alphanumerics and 128 random bits.
const KEY_PATTERN = /^[a-z]+_([0-9a-z]{10})_([0-9a-f]{32})$/;

export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function parseApiKey(key: string): { clientId: string; secret: string } | null {
  const m = KEY_PATTERN.exec(key);
  return m ? { clientId: m[1], secret: m[2] } : null;
}

export function keyMatches(secret: string, tokenHash: string): boolean {
  return safeEqualHex(hashKeySecret(secret), tokenHash);
}

/** A new team (the admin CLI's `team create`, the dashboard's operators; in a transaction too). */
export async function createTeam(db: Pick<Db, 'team'>, name: string) {
  return db.team.create({ data: { name } });
}

export async function createApiKey(
  db: Db,
  input: { teamId: number; name?: string; permission?: Permission; domainId?: number | null },
): Promise<{ apiKey: string; id: number; clientId: string }> {
  const clientId = newId(10);
  const secret = randomBytes(16).toString('hex');
  const apiKey = `us_${clientId}_${secret}`;
  const row = await db.apiKey.create({
    data: {
      clientId,
      tokenHash: hashKeySecret(secret),
      partialToken: `${apiKey.slice(0, 6)}...${apiKey.slice(-3)}`,
      name: input.name ?? 'default',
      permission: input.permission ?? 'FULL',
      teamId: input.teamId,
      domainId: input.domainId ?? null,
    },
  });
  return { apiKey, id: row.id, clientId };
}

/** Revokes by the whole key, its `us_<clientId>` prefix, or the client id alone. */
export async function revokeApiKey(db: Db, keyOrPrefix: string): Promise<{ clientId: string } | null> {
  const m = /^(?:[a-z]+_)?([0-9a-z]{10})(?:_[0-9a-f]*)?$/.exec(keyOrPrefix.trim());
  if (!m) return null;
  const updated = await db.apiKey.updateMany({ where: { clientId: m[1], revokedAt: null }, data: { revokedAt: new Date() } });
  return updated.count > 0 ? { clientId: m[1] } : null;
}

/** Channel on which revocations are announced so every API replica drops its cached copy at once. */
export const apiKeyRevokedChannel = (prefix: string) => `${prefix}:apikey:revoked`;

/** The verified keys a process holds (api-key-auth's verifier): what a revocation must evict there. */
export interface ApiKeyCache {
  evict(clientIds: readonly string[]): void;
}

export interface AnnounceRevocationDeps {
  /**
   * The cache of the process that revokes, evicted before the announcement: the announcement
   * reaches its own subscriber a moment after PUBLISH returns (on a Redis Cluster, measurably
   * later), and the very next request must already be refused. Null where no key is verified.
   */
  apiKeyCache: ApiKeyCache | null;
  redis: Pick<Redis, 'publish'>;
  config: Pick<Config, 'REDIS_PREFIX' | 'API_KEY_CACHE_SECONDS'>;
  log: Logger;
  metrics?: Pick<Metrics, 'apiKeyRevocationsUnannounced'>;
}

/**
 * Announces revoked keys to every API replica, retrying a Redis hiccup a few times. A key whose
 * announcement still fails stays usable on replicas that cached it until API_KEY_CACHE_SECONDS
 * pass: that is logged at error level and counted, never swallowed. The revocation itself is
 * already committed, so the caller's request does not fail. Returns the client ids not announced.
 */
export async function announceApiKeyRevocations(
  deps: AnnounceRevocationDeps,
  clientIds: string[],
  opts: { attempts?: number; retryDelayMs?: number } = {},
): Promise<string[]> {
  const attempts = opts.attempts ?? 3;
  const retryDelayMs = opts.retryDelayMs ?? 100;
  deps.apiKeyCache?.evict(clientIds);
  const channel = apiKeyRevokedChannel(deps.config.REDIS_PREFIX);
  let left = clientIds;
  let lastError: unknown;
  for (let attempt = 1; left.length && attempt <= attempts; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, retryDelayMs * (attempt - 1)));
    const results = await Promise.allSettled(left.map((c) => deps.redis.publish(channel, c)));
    lastError = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
    left = left.filter((_, i) => results[i].status === 'rejected');
  }
  if (left.length) {
    deps.metrics?.apiKeyRevocationsUnannounced.inc(left.length);
    deps.log.error(
      { err: lastError, clientIds: left, cachedForSeconds: deps.config.API_KEY_CACHE_SECONDS },
      'revoked API keys not announced: other API replicas may accept them until their cache expires',
    );
  }
  return left;
}
