import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import request from 'supertest';
import { createServer, type Server } from 'node:http';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { bodyHash, canonicalJson, idempotencyRedisKeys, purgeExpiredIdempotencyRecords } from '@mailrail/domain/emails/idempotency';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';

let api: TestApi;
let server: Server;
const from = 'hello@idem.org';
const body = { to: 'a@dest.org', from, subject: 'Once', text: 'T' };

beforeAll(async () => {
  api = await startTestApi();
  await api.addDomain(api.team.teamId, 'idem.org');
  server = createServer(api.app).listen(0);
});

afterAll(async () => {
  server.close();
  await api.close();
});

const send = (key: string | undefined, b: unknown = body, auth = api.team.auth) => {
  const r = request(server).post('/api/v1/emails').set(auth);
  return (key === undefined ? r : r.set('Idempotency-Key', key)).send(b as object);
};
const emailsWithSubject = (subject: string) => api.deps.db.email.count({ where: { subject } });
// The Redis keys of the team's Idempotency-Key (hash-tagged on a cluster run).
const redisKeys = (key: string) =>
  idempotencyRedisKeys({ prefix: api.config.REDIS_PREFIX, hashTags: api.config.redisHashTags, teamId: api.team.teamId, key });

describe('canonical body', () => {
  it('sorts keys at every depth and ignores undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[{"y":2,"z":1}]},"b":1}');
    expect(bodyHash({ a: 1, b: 2 })).toBe(bodyHash({ b: 2, a: 1 }));
  });
});

describe('Idempotency-Key', () => {
  it('replays the same body: the original id, nothing re-sent', async () => {
    const before = Date.now();
    const first = await send('k-replay', { ...body, subject: 'replay' });
    const again = await send('k-replay', { subject: 'replay', text: 'T', from, to: 'a@dest.org' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await emailsWithSubject('replay')).toBe(1);
    // Kept 24 h from the first answer: less the time since, give or take Redis's rounding to seconds.
    const ttl = await api.deps.redis.ttl(redisKeys('k-replay').resultKey);
    const sinceSeconds = Math.ceil((Date.now() - before) / 1000);
    expect(ttl).toBeLessThanOrEqual(24 * 3600);
    expect(ttl).toBeGreaterThanOrEqual(24 * 3600 - sinceSeconds - 1);
  });

  it('answers 409 NOT_UNIQUE for the same key with another body', async () => {
    await send('k-diff', { ...body, subject: 'diff-1' });
    const res = await send('k-diff', { ...body, subject: 'diff-2' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'NOT_UNIQUE', message: 'Idempotency-Key already used with a different payload' });
    expect(await emailsWithSubject('diff-2')).toBe(0);
  });

  it('answers 409 while the first request with the key is still in flight', async () => {
    // Hold the lock as a first request would while it runs.
    const lock = redisKeys('k-busy').lockKey;
    await api.deps.redis.set(lock, `someone:${bodyHash({ ...body, to: ['a@dest.org'] })}`, 'PX', 10_000);
    const res = await send('k-busy');
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'NOT_UNIQUE', message: 'Request with same Idempotency-Key is in progress. Retry later.' });
    await api.deps.redis.del(lock);
    expect((await send('k-busy')).status).toBe(200);
  });

  it('creates exactly one email for 50 concurrent identical requests', async () => {
    const b = { ...body, subject: 'race' };
    const responses = await Promise.all(Array.from({ length: 50 }, () => send('k-race', b)));
    const ok = responses.filter((r) => r.status === 200);
    const conflicts = responses.filter((r) => r.status === 409);
    expect(ok.length + conflicts.length).toBe(50);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body.emailId)).size).toBe(1);
    conflicts.forEach((r) => expect(r.body.error.code).toBe('NOT_UNIQUE'));
    expect(await emailsWithSubject('race')).toBe(1);
    // Once the first has finished, a retry is a replay.
    expect((await send('k-race', b)).body.emailId).toBe(ok[0].body.emailId);
  });

  it('releases the key when the operation fails, so a retry runs', async () => {
    const b = { ...body, from: 'x@later.org', subject: 'retry' };
    expect((await send('k-fail', b)).status).toBe(400);
    await api.addDomain(api.team.teamId, 'later.org');
    const retry = await send('k-fail', b);
    expect(retry.status).toBe(200);
    expect(await emailsWithSubject('retry')).toBe(1);
  });

  it('does not consume the key on a body that fails validation', async () => {
    expect((await send('k-invalid', { ...body, to: 'nope' })).status).toBe(400);
    expect((await send('k-invalid', { ...body, subject: 'valid now' })).status).toBe(200);
  });

  it('refuses an empty key or one over 256 characters', async () => {
    for (const key of ['', 'x'.repeat(257)]) {
      const res = await send(key);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('Invalid Idempotency-Key length');
    }
    expect((await send('x'.repeat(256), { ...body, subject: 'long key' })).status).toBe(200);
  });

  it('is per team', async () => {
    const other = await api.newTeam('Other');
    await api.addDomain(other.teamId, 'other-idem.org');
    const a = await send('k-team', { ...body, subject: 'team-a' });
    const b = await send('k-team', { ...body, from: 'x@other-idem.org', subject: 'team-b' }, other.auth);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.emailId).not.toBe(a.body.emailId);
  });

  it('works for batch: a replay returns the same data, nothing re-sent', async () => {
    const items = [1, 2].map((i) => ({ ...body, subject: `batch-idem-${i}` }));
    const first = await request(server).post('/api/v1/emails/batch').set(api.team.auth).set('Idempotency-Key', 'k-batch').send(items);
    const again = await request(server).post('/api/v1/emails/batch').set(api.team.auth).set('Idempotency-Key', 'k-batch').send(items);
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await emailsWithSubject('batch-idem-1')).toBe(1);
    const other = await request(server)
      .post('/api/v1/emails/batch')
      .set(api.team.auth)
      .set('Idempotency-Key', 'k-batch')
      .send(items.slice(0, 1));
    expect(other.status).toBe(409);
  });
});

// The durable record (docs/redis.md): PostgreSQL keeps (team, key) with the ids, written by the
// statement that writes the emails, so Redis losing its record does not create a second email.
describe('Idempotency-Key when Redis lost its record', () => {
  const forgetRedis = () => deleteRedisPrefix(api.deps.redis, api.config.REDIS_PREFIX);

  it('a retry after Redis lost everything answers the same email id, and one email exists', async () => {
    const b = { ...body, subject: 'durable' };
    const first = await send('k-durable', b);
    expect(first.status).toBe(200);
    await forgetRedis();
    const retry = await send('k-durable', b);
    expect(retry.status).toBe(200);
    expect(retry.body.emailId).toBe(first.body.emailId);
    expect(await emailsWithSubject('durable')).toBe(1);
    // The replay put the record back in Redis: the next retry is answered there.
    expect(await api.deps.redis.exists(redisKeys('k-durable').resultKey)).toBe(1);
    const row = await api.deps.db.idempotencyRecord.findUniqueOrThrow({
      where: { teamId_key: { teamId: api.team.teamId, key: 'k-durable' } },
    });
    expect(row.emailIds).toEqual([first.body.emailId]);
  });

  it("a retry gets the ids from PostgreSQL when Redis kept the lock but lost the result (no 409 for the lock's minute)", async () => {
    const b = { ...body, subject: 'lock-left' };
    const first = await send('k-lock-left', b);
    expect(first.status).toBe(200);
    // A failover dropped the request's last write (the result, which also frees the lock): the
    // new master has the lock from the start of the request and no result.
    const { resultKey, lockKey } = redisKeys('k-lock-left');
    const row = await api.deps.db.idempotencyRecord.findUniqueOrThrow({
      where: { teamId_key: { teamId: api.team.teamId, key: 'k-lock-left' } },
    });
    await api.deps.redis.del(resultKey);
    await api.deps.redis.set(lockKey, `the-first-request:${row.bodyHash}`, 'PX', 60_000);
    const retry = await send('k-lock-left', b);
    expect(retry.status).toBe(200);
    expect(retry.body.emailId).toBe(first.body.emailId);
    expect(await emailsWithSubject('lock-left')).toBe(1);
    // The result is back in Redis for the next retry; the lock was not this request's to free.
    expect(await api.deps.redis.exists(resultKey)).toBe(1);
    expect(await api.deps.redis.get(lockKey)).toBe(`the-first-request:${row.bodyHash}`);
    // Another body under the key is still refused.
    await api.deps.redis.del(resultKey);
    const other = await send('k-lock-left', { ...b, text: 'other' });
    expect(other.status).toBe(409);
    expect(other.body.error.message).toBe('Idempotency-Key already used with a different payload');
  });

  it('another body under the key is still a 409 once Redis forgot it', async () => {
    await send('k-durable-diff', { ...body, subject: 'durable-diff-1' });
    await forgetRedis();
    const res = await send('k-durable-diff', { ...body, subject: 'durable-diff-2' });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toBe('Idempotency-Key already used with a different payload');
    expect(await emailsWithSubject('durable-diff-2')).toBe(0);
  });

  it('a batch replays its ids from PostgreSQL', async () => {
    const items = [1, 2, 3].map((i) => ({ ...body, subject: `durable-batch-${i}` }));
    const post = () =>
      request(server).post('/api/v1/emails/batch').set(api.team.auth).set('Idempotency-Key', 'k-durable-batch').send(items);
    const first = await post();
    await forgetRedis();
    const again = await post();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await emailsWithSubject('durable-batch-2')).toBe(1);
  });

  it('concurrent first requests on two Redis keyspaces (a split brain) still create one email', async () => {
    // A second API on the same database but another Redis prefix: its Redis knows nothing of the
    // first's locks, as after a failover that lost them. Only the primary key can decide.
    const other = await startTestApi({}, { databaseUrl: api.config.DATABASE_URL, redisPrefix: testRedisPrefix() });
    const otherServer = createServer(other.app).listen(0);
    try {
      const b = { ...body, subject: 'split-brain' };
      const at = (srv: Server) => request(srv).post('/api/v1/emails').set(api.team.auth).set('Idempotency-Key', 'k-split').send(b);
      const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => at(i % 2 ? server : otherServer)));
      const ok = responses.filter((r) => r.status === 200);
      expect(responses.filter((r) => r.status !== 200 && r.status !== 409)).toEqual([]);
      expect(ok.length).toBeGreaterThanOrEqual(2);
      expect(new Set(ok.map((r) => r.body.emailId)).size).toBe(1);
      expect(await emailsWithSubject('split-brain')).toBe(1);
    } finally {
      otherServer.close();
      await deleteRedisPrefix(other.deps.redis, other.config.REDIS_PREFIX);
      await other.close();
    }
  });

  it('a record older than 24 h frees the key: the request runs again', async () => {
    const b = { ...body, subject: 'expired-key' };
    const first = await send('k-expired', b);
    await forgetRedis();
    const dayAgo = new Date(Date.now() - 25 * 3600_000);
    await api.deps.db.idempotencyRecord.updateMany({ where: { key: 'k-expired' }, data: { createdAt: dayAgo } });
    const again = await send('k-expired', b);
    expect(again.status).toBe(200);
    expect(again.body.emailId).not.toBe(first.body.emailId);
    expect(await emailsWithSubject('expired-key')).toBe(2);
  });

  it('the purge removes only records past 24 h', async () => {
    await send('k-purge-new', { ...body, subject: 'purge-new' });
    await send('k-purge-old', { ...body, subject: 'purge-old' });
    await api.deps.db.idempotencyRecord.updateMany({
      where: { key: 'k-purge-old' },
      data: { createdAt: new Date(Date.now() - 25 * 3600_000) },
    });
    expect(await purgeExpiredIdempotencyRecords(prismaExecutor(api.deps.db), new Date())).toBeGreaterThanOrEqual(1);
    const left = await api.deps.db.idempotencyRecord.findMany({ where: { key: { in: ['k-purge-new', 'k-purge-old'] } } });
    expect(left.map((r) => r.key)).toEqual(['k-purge-new']);
  });
});
