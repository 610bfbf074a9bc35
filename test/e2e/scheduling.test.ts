import request from 'supertest';
import { queueNames } from '@mailrail/platform/queue/queues';
import { jobIsSettled, queueIsIdle } from '@mailrail/testing/queue-state';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

// Scheduled emails are delayed jobs; the API reschedules them with changeDelay and cancels them
// by removing the job, both behind the same lease guard as the worker's claim. The real API (its
// test harness, on the worker's database and Redis prefix) does the rescheduling and cancelling.
// When a scheduled or rescheduled email reaches SES is a timing check: test/timing/scheduled-sends.test.ts.

let env: TestWorkerEnv;
let api: TestApi;
let auth: { Authorization: string };
beforeAll(async () => {
  env = await startTestWorkerEnv();
  api = await startTestApi({}, { databaseUrl: env.config.DATABASE_URL, redisPrefix: env.config.REDIS_PREFIX });
  auth = { Authorization: `Bearer ${await api.newKey(env.teamId)}` };
  await env.start();
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});
beforeEach(() => env.ses.reset());

const sendQueue = () => env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));

async function cancel(id: string) {
  return request(api.app).post(`/api/v1/emails/${id}/cancel`).set(auth);
}

const sentAt = (address: string) => env.waitFor(async () => env.ses.messagesTo(address)[0]?.at, 20_000);

it('never sends a cancelled email', async () => {
  const at = new Date(Date.now() + 1500);
  const [id] = await env.createEmails([{ to: ['cancelled@example.net'], scheduledAt: at }]);
  expect((await cancel(id)).status).toBe(200);
  // Past its time, once a sweep has seen it and no job of it is left to run, still nothing.
  await env.sweptSince(at.getTime() + 500);
  await env.waitFor(() => jobIsSettled(sendQueue(), id));
  expect(env.ses.messagesTo('cancelled@example.net')).toHaveLength(0);
  expect((await env.email(id)).latestStatus).toBe('CANCELLED');
});

it('refuses to cancel an email a worker holds, so it is never both sent and cancelled', async () => {
  const [id] = await env.createEmails([{ to: ['held@example.net'], scheduledAt: new Date(Date.now() + 60_000) }]);
  // A worker's lease on the row (as during an SES call) makes the API's guarded update a no-op.
  await env.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: new Date(Date.now() + 10_000) } });
  const refused = await cancel(id);
  expect(refused.status).toBe(400);
  expect(refused.body.error.message).toBe('Email already processed');
  expect((await env.email(id)).latestStatus).toBe('SCHEDULED');
  await env.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: null } });
  expect((await cancel(id)).status).toBe(200);
  expect((await env.email(id)).latestStatus).toBe('CANCELLED');
});

it('still sends every email when Redis loses its jobs (sweeper)', async () => {
  const at = new Date(Date.now() + 3000);
  const scheduled = await env.createEmails(Array.from({ length: 5 }, (_, i) => ({ to: [`flushed${i}@example.net`], scheduledAt: at })));
  // Queued emails whose jobs never reached Redis, and one whose worker died mid-send.
  const queued = await env.createEmails([{ to: ['lost0@example.net'] }, { to: ['lost1@example.net'] }, { to: ['crashed@example.net'] }]);
  await env.waitFor(async () => (await env.deps.db.email.count({ where: { id: { in: queued }, latestStatus: 'SENT' } })) === 3);
  env.ses.reset();
  await env.deps.db.email.updateMany({
    where: { id: { in: queued } },
    data: { latestStatus: 'QUEUED', sesEmailId: null, sentAt: null },
  });
  await env.deps.db.email.update({ where: { id: queued[2] }, data: { sendLeaseUntil: new Date(Date.now() - 1000), sendAttempts: 1 } });

  const flushedAt = Date.now();
  await deleteRedisPrefix(env.deps.redis, env.config.REDIS_PREFIX);
  // Gone, or already made again by the sweeper: on a loaded machine a sweep can run in between.
  const job = await sendQueue().getJob(scheduled[0]);
  expect(job === undefined || job.timestamp >= flushedAt).toBe(true);

  for (let i = 0; i < 5; i++) {
    // Re-created by the sweeper (look-ahead) as a job due at the email's time: not early, and late
    // by no more than the time the sweep took to see it (a sweep at or after `at` adds it due now).
    // The rule, not this machine's speed: a wall-clock bound on the send failed CI under load.
    const job = await env.waitFor(async () => {
      const j = await sendQueue().getJob(scheduled[i]);
      return j && j.timestamp >= flushedAt ? j : undefined;
    });
    // opts.delay: BullMQ sets job.delay to 0 once the job is promoted.
    const due = job.timestamp + (job.opts.delay ?? 0);
    expect(due).toBeGreaterThanOrEqual(at.getTime());
    expect(due).toBeLessThanOrEqual(job.timestamp + Math.max(0, at.getTime() - flushedAt));
    // And it left no earlier than it was due.
    expect(await sentAt(`flushed${i}@example.net`)).toBeGreaterThanOrEqual(at.getTime());
  }
  for (const address of ['lost0@example.net', 'lost1@example.net', 'crashed@example.net']) await sentAt(address);
  const ids = [...scheduled, ...queued];
  await env
    .waitFor(async () => (await env.deps.db.email.count({ where: { id: { in: ids }, latestStatus: 'SENT' } })) === 8)
    .catch(async (err) => {
      // Say which rows are behind, to tell a slow machine from a lost email.
      const rows = await env.deps.db.email.findMany({
        where: { id: { in: ids } },
        select: { to: true, latestStatus: true, sendLeaseUntil: true },
      });
      throw new Error(`${(err as Error).message}: ${JSON.stringify(rows)}`);
    });
  // Once a sweep that saw every row SENT has run and the queue is idle, nothing more can be sent.
  await env.sweptSince(Date.now());
  await env.waitFor(() => queueIsIdle(sendQueue()));
  expect(env.ses.messages).toHaveLength(8);
});

it('replaces a finished job of an email that is still unsent (sweeper)', async () => {
  // A job that completed without sending (here: the row said SENT at the time) leaves a completed
  // job behind; re-adding the same job id would be a no-op, so the sweeper replaces it.
  const [id] = await env.createEmails([{ to: ['stale-job@example.net'] }]);
  await env.waitFor(async () => (await sendQueue().getJobState(id)) === 'completed');
  env.ses.reset();
  await env.deps.db.email.update({ where: { id }, data: { latestStatus: 'QUEUED', sesEmailId: null } });
  await sentAt('stale-job@example.net');
  await env.waitFor(async () => (await env.email(id)).latestStatus === 'SENT');
  expect(env.ses.messagesTo('stale-job@example.net')).toHaveLength(1);
});

it('replaces a half-written job left by a partial Redis loss (sweeper)', async () => {
  // Keys deleted one by one (eviction, a scripted cleanup) can race a worker taking the job: BullMQ
  // then writes processedOn into a job hash that no longer exists, leaving a hash with no data in no
  // list. Its state is "unknown", and adding the same job id again is a silent no-op while it exists.
  const [id] = await env.createEmails([{ to: ['ghost-job@example.net'] }]);
  await env.waitFor(async () => (await env.email(id)).latestStatus === 'SENT');
  env.ses.reset();
  await sendQueue().remove(id);
  await env.deps.redis.hset(sendQueue().toKey(id), 'processedOn', Date.now(), 'ats', 1);
  await env.deps.db.email.update({ where: { id }, data: { latestStatus: 'QUEUED', sesEmailId: null } });
  expect(await sendQueue().getJobState(id)).toBe('unknown');
  await sentAt('ghost-job@example.net');
  await env.waitFor(async () => (await env.email(id)).latestStatus === 'SENT');
  expect(env.ses.messagesTo('ghost-job@example.net')).toHaveLength(1);
});
