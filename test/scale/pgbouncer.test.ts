// mailrail behind PgBouncer in transaction mode (docs/pgbouncer.md): the test starts its own
// pgbouncer on loopback in front of the test PostgreSQL server, and runs the API and the worker
// with DATABASE_URL through it (`?pgbouncer=true`). Server connections start in a time zone far
// from UTC, so a client whose UTC setting did not follow it across server connections would
// store and read shifted times.
import { Client } from 'pg';
import request from 'supertest';
import { foldCounterDeltas } from '@mailrail/domain/ses-events/counter-deltas';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { prismaExecutor, withTransaction } from '@mailrail/platform/db/sql/executor';
import { createTestDatabase, dropDatabase, testServerUrl } from '@mailrail/testing/databases';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { pgBouncerUnavailable, startLocalPgBouncer, type LocalPgBouncer } from '@mailrail/testing/pgbouncer';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

const FAR_FROM_UTC = 'Asia/Kathmandu';

let bouncer: LocalPgBouncer;
let directUrl: string;
let bouncedUrl: string;
let env: TestWorkerEnv;
let api: TestApi;

beforeAll(async () => {
  const missing = pgBouncerUnavailable();
  if (missing) throw new Error(missing);
  directUrl = await createTestDatabase();
  // A small server pool: 2 API + worker pools of 5 and the committer share 4 server connections.
  bouncer = await startLocalPgBouncer(testServerUrl, { poolSize: 4, serverTimeZone: FAR_FROM_UTC });
  bouncedUrl = bouncer.urlOf(new URL(directUrl).pathname.slice(1));
  env = await startTestWorkerEnv({ DATABASE_URL: bouncedUrl, COUNTER_FOLD_EVERY_MS: '200' });
  api = await startTestApi({ SES_ENDPOINT: env.ses.url }, { databaseUrl: bouncedUrl, redisPrefix: env.config.REDIS_PREFIX });
  await api.addDomain(api.team.teamId, 'bouncer.example.com');
  await env.start();
}, 120_000);

afterAll(async () => {
  await api?.close();
  await env?.close();
  await bouncer?.stop();
  if (directUrl) await dropDatabase(directUrl);
});

const from = 'hello@bouncer.example.com';
const sendOne = (subject: string, key?: string) => {
  const r = request(api.app).post('/api/v1/emails').set(api.team.auth);
  return (key ? r.set('Idempotency-Key', key) : r).send({ from, to: 'to@example.net', subject, text: 'Hi' });
};
const allSent = (ids: string[]) =>
  env.waitFor(async () => (await env.deps.db.email.count({ where: { id: { in: ids }, latestStatus: 'SENT' } })) === ids.length, 60_000);
const atSes = (subject: string) => env.ses.messages.filter((m) => m.raw.includes(`Subject: ${subject}`)).length;

it('goes through pgbouncer, whose server connections start in another time zone', async () => {
  expect(env.config.DATABASE_URL).toBe(bouncedUrl);
  const raw = new Client({ connectionString: bouncedUrl.replace('?pgbouncer=true', '') });
  await raw.connect();
  try {
    expect((await raw.query('SHOW TimeZone')).rows[0].TimeZone).toBe(FAR_FROM_UTC);
    expect((await raw.query('SHOW port')).rows[0].port).toBe(new URL(testServerUrl).port || '5432');
  } finally {
    await raw.end();
  }
});

it('every session of Prisma and of the pg pool runs in UTC, on whichever server connection it gets', async () => {
  const zones = await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const via = i % 2 ? prismaExecutor(api.deps.db) : env.deps.sql;
      return (await via.query<{ tz: string }>('SELECT current_setting($1) AS tz', ['TimeZone']))[0].tz;
    }),
  );
  expect(new Set(zones)).toEqual(new Set(['UTC']));
  // A Date written by Prisma reads back as the same instant through the pool, and in SQL text.
  const at = new Date('2026-05-06T07:08:09.123Z');
  const team = await api.deps.db.team.create({ data: { name: 'tz', createdAt: at } });
  const [row] = await env.deps.sql.query<{ createdAt: Date; day: string }>(
    `SELECT "createdAt", to_char("createdAt", 'YYYY-MM-DD HH24:MI') AS day FROM "Team" WHERE id = $1`,
    [team.id],
  );
  expect(row.createdAt.toISOString()).toBe(at.toISOString());
  expect(row.day).toBe('2026-05-06 07:08');
});

it('sends single emails and a batch, each once at SES', async () => {
  const one = await sendOne('Bounced single');
  expect(one.status).toBe(200);
  const batch = await request(api.app)
    .post('/api/v1/emails/batch')
    .set(api.team.auth)
    .send(Array.from({ length: 20 }, (_, i) => ({ from, to: `r${i}@example.net`, subject: 'Bounced batch', text: 'Hi' })));
  expect(batch.status).toBe(200);
  const ids = [one.body.emailId, ...batch.body.data.map((d: { emailId: string }) => d.emailId)];
  await allSent(ids);
  expect(atSes('Bounced single')).toBe(1);
  expect(atSes('Bounced batch')).toBe(20);
});

it('honours Idempotency-Key: a retry answers the same email, a different body is refused', async () => {
  const first = await sendOne('Bounced idempotent', 'key-pgbouncer-1');
  const again = await sendOne('Bounced idempotent', 'key-pgbouncer-1');
  expect(first.status).toBe(200);
  expect(again.status).toBe(200);
  expect(again.body.emailId).toBe(first.body.emailId);
  expect((await sendOne('Bounced other body', 'key-pgbouncer-1')).status).toBe(409);
  await allSent([first.body.emailId]);
  expect(atSes('Bounced idempotent')).toBe(1);
});

it('runs a campaign to the end', async () => {
  const domain = await api.deps.db.domain.findFirstOrThrow({ where: { teamId: api.team.teamId, name: 'bouncer.example.com' } });
  const book = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 60, unsubscribed: 5 });
  const id = await insertScheduledCampaign(api.deps.db, {
    teamId: api.team.teamId,
    domainId: domain.id,
    contactBookId: book.id,
    from,
    scheduledAt: new Date(Date.now() - 1000),
    batchSize: 25,
  });
  await env.waitFor(async () => (await api.deps.db.campaign.findUniqueOrThrow({ where: { id } })).status === 'SENT', 90_000);
  const c = await api.deps.db.campaign.findUniqueOrThrow({ where: { id } });
  expect(c.sent).toBe(60);
  expect(env.ses.messages.filter((m) => m.raw.includes('people.test')).length).toBe(60);
}, 120_000);

it('counts SES events through the batched counters (the fold holds its transaction-scoped lock behind pgbouncer)', async () => {
  const one = await sendOne('Bounced counted');
  await allSent([one.body.emailId]);
  const email = await api.deps.db.email.findUniqueOrThrow({ where: { id: one.body.emailId } });
  const message = JSON.stringify({
    eventType: 'Delivery',
    mail: { messageId: email.sesEmailId, timestamp: new Date().toISOString(), headers: [] },
  });
  for (const snsMessageId of ['sns-pgb-1', 'sns-pgb-2'])
    expect(await processSesEventJob({ db: api.deps.db }, { snsMessageId, topicArn: 'arn', message })).toBe('processed');
  // Two folds at once, as two workers' ticks could overlap: the advisory lock lets one through.
  await Promise.all([foldCounterDeltas(env.deps.sql, 100), foldCounterDeltas(prismaExecutor(api.deps.db), 100)]);
  await env.waitFor(async () => (await api.deps.db.emailCounterDelta.count()) === 0, 10_000);
  const usage = await api.deps.db.dailyEmailUsage.aggregate({ where: { teamId: api.team.teamId }, _sum: { delivered: true } });
  expect(usage._sum.delivered).toBe(1);
  const series = await request(api.app).get('/api/v1/analytics/email-time-series?days=7').set(api.team.auth);
  expect(series.body.totalCounts.delivered).toBe(1);
});

it('keeps a pg-pool transaction on one server connection (BEGIN … COMMIT is one pgbouncer transaction)', async () => {
  const pids = await withTransaction(env.deps.sql, async (tx) => {
    const seen = new Set<number>();
    for (let i = 0; i < 5; i++) seen.add((await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0].pid);
    await tx.query('SELECT pg_advisory_xact_lock(4242)');
    return seen;
  });
  expect(pids.size).toBe(1);
});
