import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '@mailrail/platform/db/client';
import { ApiError } from '../errors/api-error';
import type { Redis } from '@mailrail/platform/redis/client';
import { redisScript, runScript } from '@mailrail/platform/redis/script';
import { violatesConstraint } from '@mailrail/platform/db/sql/postgres-error';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

// Idempotency-Key as useSend has it (docs/emails.md, "Idempotency"): per team, 24 h, keyed to a
// SHA-256 of the canonical body (same key + same body replays, another body is a 409).
// Redis is the fast path: one Lua script decides atomically between "replay", "already running"
// and "you run it". PostgreSQL is the durable record (docs/redis.md): the operation writes an
// IdempotencyRecord row in the same statement as the emails, so when Redis lost the record (a
// failover that dropped recent writes, a flush) the row's primary key refuses a second set of
// emails and the retry answers the first ids.
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
const inProgress = () => new IdempotencyConflict('in-progress', 'Request with same Idempotency-Key is in progress. Retry later.');

/** What the operation must store with its emails (IdempotencyRecord), in the same statement. */
export interface IdempotencyClaim {
  teamId: number;
  key: string;
  bodyHash: string;
}

/**
 * The two Redis keys of one (team, key). With hash tags (REDIS_HASH_TAGS) both carry the same
 * `{team:key}` tag, so the scripts that touch both run on one cluster slot: REDIS_PREFIX has no
 * braces, so the first `{` is ours and both tags end at the same first `}` even if the client's
 * key contains braces.
 */
export function idempotencyRedisKeys(scope: { prefix: string; hashTags: boolean; teamId: number; key: string }) {
  const id = scope.hashTags ? `{${scope.teamId}:${scope.key}}` : `${scope.teamId}:${scope.key}`;
  return { resultKey: `${scope.prefix}:idem:${id}`, lockKey: `${scope.prefix}:idemlock:${id}` };
}

/**
 * Runs `operation` at most once per (team, key) within 24 h. A replay with the same body gets
 * the stored ids back; another body, or a request while the first still runs, is 409 NOT_UNIQUE.
 * If the operation throws, nothing is stored and the lock is released, so a retry runs again.
 * The operation gets the claim to write with its emails; when that write hits an existing row
 * (Redis had forgotten the key), the row decides: replay, mismatch, or (expired) run again.
 */
export async function withIdempotency(
  store: { redis: Redis; db: Db },
  scope: { prefix: string; hashTags: boolean; teamId: number; key: string | undefined; body: unknown },
  operation: (claim: IdempotencyClaim | undefined) => Promise<string[]>,
): Promise<string[]> {
  if (scope.key === undefined) return operation(undefined);
  const { redis } = store;
  const { resultKey, lockKey } = idempotencyRedisKeys({ ...scope, key: scope.key });
  const hash = bodyHash(scope.body);
  const token = `${randomUUID()}:${hash}`;
  const claim: IdempotencyClaim = { teamId: scope.teamId, key: scope.key, bodyHash: hash };

  const [state, value] = (await runScript(redis, BEGIN, [resultKey, lockKey, token, LOCK_TTL_MS])) as [string, string];
  if (state === 'done') return replay(JSON.parse(value) as StoredResult, hash);
  let stored: StoredResult;
  if (state === 'busy') {
    if (!value.endsWith(`:${hash}`)) throw mismatch();
    // A lock can outlive its request: when the request's last Redis write (the result, which also
    // frees the lock) was lost in a failover or never reached Redis, a retry would get 409s for the
    // lock's whole minute. The emails and their record are in PostgreSQL by then: answer them, and
    // put the result back in Redis below for the next retry (FINISH leaves a lock it does not hold).
    const done = await freshRecord(store.db, claim);
    if (!done) throw inProgress();
    stored = done;
  } else {
    try {
      stored = { bodyHash: hash, emailIds: await runClaimed(store.db, claim, operation) };
    } catch (err) {
      await runScript(redis, RELEASE, [resultKey, lockKey, token]).catch(() => undefined);
      throw err;
    }
  }
  // The emails exist now: a Redis failure here must not turn a success into an error.
  await runScript(redis, FINISH, [resultKey, lockKey, token, JSON.stringify(stored), RESULT_TTL_SECONDS]).catch(() => undefined);
  return replay(stored, hash);
}

function replay(stored: StoredResult, hash: string): string[] {
  if (stored.bodyHash !== hash) throw mismatch();
  return stored.emailIds;
}

/**
 * Runs the operation; if PostgreSQL already holds the claim's row, answers that row's result
 * instead (the stored ids, or a mismatch). A row past 24 h is deleted and the operation runs
 * again, once: the key is free again, as in Redis.
 */
async function runClaimed(db: Db, claim: IdempotencyClaim, operation: (claim: IdempotencyClaim) => Promise<string[]>): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation(claim);
    } catch (err) {
      if (!isIdempotencyRowConflict(err)) throw err;
    }
    const fresh = await freshRecord(db, claim);
    if (fresh) return replay(fresh, claim.bodyHash);
    if (attempt > 0) throw inProgress();
    // The row that refused the insert is past 24 h (or was just purged): free the key.
    await db.idempotencyRecord.deleteMany({
      where: { teamId: claim.teamId, key: claim.key, createdAt: { lte: new Date(Date.now() - RESULT_TTL_SECONDS * 1000) } },
    });
  }
}

/** The claim's IdempotencyRecord row if it is within its 24 h, else null. */
async function freshRecord(db: Db, claim: IdempotencyClaim): Promise<StoredResult | null> {
  const row = await db.idempotencyRecord.findUnique({ where: { teamId_key: { teamId: claim.teamId, key: claim.key } } });
  return row && row.createdAt.getTime() > Date.now() - RESULT_TTL_SECONDS * 1000
    ? { bodyHash: row.bodyHash, emailIds: row.emailIds }
    : null;
}

/** A unique violation (23505) of IdempotencyRecord's primary key. */
const isIdempotencyRowConflict = (err: unknown) => violatesConstraint(err, '23505', 'IdempotencyRecord_pkey');

/** Deletes IdempotencyRecord rows past their 24 h (a periodic job of the worker); answers how many. */
export async function purgeExpiredIdempotencyRecords(sql: SqlExecutor, now: Date): Promise<number> {
  return sql.execute(`DELETE FROM "IdempotencyRecord" WHERE "createdAt" < $1`, [new Date(now.getTime() - RESULT_TTL_SECONDS * 1000)]);
}
