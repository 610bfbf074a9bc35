import { createHash, randomUUID } from 'node:crypto';
import { ApiError } from '../errors/api-error';
import type { Redis } from '@mailrail/platform/redis/client';
import { redisScript, runScript } from '@mailrail/platform/redis/script';

// Idempotency-Key as useSend has it (docs/emails.md, "Idempotency"): per team, in Redis, 24 h,
// keyed to a SHA-256 of the canonical body (same key + same body replays, another body is a 409).
// One Lua script decides atomically between "replay", "already running" and "you run it", so two
// concurrent requests with one key can never both run the operation.
const RESULT_TTL_SECONDS = 24 * 3600;
const LOCK_TTL_MS = 60_000;

const BEGIN = redisScript(
  `
local done = redis.call('GET', KEYS[1])
if done then return {'done', done} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'run', ''} end
return {'busy', redis.call('GET', KEYS[2]) or ''}
`,
  2,
);
// Stores the result and releases the lock in one step, and only if we still hold the lock.
const FINISH = redisScript(
  `
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
`,
  2,
);
const RELEASE = redisScript(
  `
if redis.call('GET', KEYS[2]) == ARGV[1] then return redis.call('DEL', KEYS[2]) end
return 0
`,
  2,
);

/** JSON with object keys sorted at every depth; undefined dropped, Dates as ISO strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    const raw = key === '' ? v : (this as Record<string, unknown>)[key];
    if (raw instanceof Date) return raw.toISOString();
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, (v as Record<string, unknown>)[k]]),
      );
    }
    return v;
  });
}

export const bodyHash = (body: unknown) => createHash('sha256').update(canonicalJson(body)).digest('hex');

/** The header value, or undefined without one; 400 when present but not 1..256 characters. */
export function readIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header.join(',') : header;
  if (key.length < 1 || key.length > 256) {
    throw new ApiError('BAD_REQUEST', 'Invalid Idempotency-Key length', [
      { path: ['Idempotency-Key'], message: 'must be 1 to 256 characters' },
    ]);
  }
  return key;
}

interface StoredResult {
  bodyHash: string;
  emailIds: string[];
}

/** A 409 with the reason, so a caller that is not HTTP (the SMTP relay) can tell the two apart. */
export class IdempotencyConflict extends ApiError {
  constructor(
    readonly reason: 'mismatch' | 'in-progress',
    message: string,
  ) {
    super('NOT_UNIQUE', message);
  }
}

const mismatch = () => new IdempotencyConflict('mismatch', 'Idempotency-Key already used with a different payload');

/**
 * Runs `operation` at most once per (team, key) within 24 h. A replay with the same body gets
 * the stored ids back; another body, or a request while the first still runs, is 409 NOT_UNIQUE.
 * If the operation throws, nothing is stored and the lock is released, so a retry runs again.
 */
export async function withIdempotency(
  redis: Redis,
  scope: { prefix: string; teamId: number; key: string | undefined; body: unknown },
  operation: () => Promise<string[]>,
): Promise<string[]> {
  if (scope.key === undefined) return operation();
  const resultKey = `${scope.prefix}:idem:${scope.teamId}:${scope.key}`;
  const lockKey = `${scope.prefix}:idemlock:${scope.teamId}:${scope.key}`;
  const hash = bodyHash(scope.body);
  const token = `${randomUUID()}:${hash}`;

  const [state, value] = (await runScript(redis, BEGIN, [resultKey, lockKey, token, LOCK_TTL_MS])) as [string, string];
  if (state === 'done') {
    const stored = JSON.parse(value) as StoredResult;
    if (stored.bodyHash !== hash) throw mismatch();
    return stored.emailIds;
  }
  if (state === 'busy') {
    if (!value.endsWith(`:${hash}`)) throw mismatch();
    throw new IdempotencyConflict('in-progress', 'Request with same Idempotency-Key is in progress. Retry later.');
  }

  let ids: string[];
  try {
    ids = await operation();
  } catch (err) {
    await runScript(redis, RELEASE, [resultKey, lockKey, token]).catch(() => undefined);
    throw err;
  }
  const stored: StoredResult = { bodyHash: hash, emailIds: ids };
  // The emails exist now: a Redis failure here must not turn a success into an error.
  await runScript(redis, FINISH, [resultKey, lockKey, token, JSON.stringify(stored), RESULT_TTL_SECONDS]).catch(() => undefined);
  return ids;
}
