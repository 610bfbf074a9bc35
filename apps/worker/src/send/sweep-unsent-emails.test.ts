import { Worker } from 'bullmq';
import { queueNames, queuePrefix } from '@mailrail/platform/queue/queues';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { sweepCursorKey, sweepUnsentEmails } from './sweep-unsent-emails';

// The sweeper against send jobs in each BullMQ state. No worker runs: the test takes the job
// itself, the way a worker that is then SIGKILLed would have.

let env: TestWorkerEnv;
let taker: Worker;
beforeAll(async () => {
  env = await startTestWorkerEnv();
  const name = queueNames.send(env.domain.region, 'transactional');
  // No processor: jobs are taken by hand (getNextJob), and their locks are never renewed.
  taker = new Worker(name, null, { connection: env.deps.redis, prefix: queuePrefix(env.config, name), lockDuration: 60_000 });
});
afterAll(async () => {
  await taker?.close();
  await env?.close();
});

it('leaves an active job whose worker holds its lock, and re-adds one whose lock is gone (its worker died)', async () => {
  const queue = env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  const [id] = await env.createEmails([{ to: ['dead-worker@example.net'] }]);
  const taken = await taker.getNextJob('token-of-the-worker-that-dies');
  expect(taken?.id).toBe(id);

  // The lock is held: whatever PostgreSQL says (here no lease yet), the job is someone's.
  expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 1, enqueued: 0 });
  expect(await queue.getJobState(id)).toBe('active');

  // The lock expires (the worker was SIGKILLed) before BullMQ's stalled check has come by.
  await env.deps.redis.del(`${queue.toKey(id)}:lock`);
  expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 1, enqueued: 1 });
  expect(await queue.getJobState(id)).toBe('waiting');
  const again = await queue.getJob(id);
  expect(again?.data).toEqual({ emailId: id });
  expect(again?.processedOn).toBeFalsy();

  // A job that waits is left alone.
  expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 1, enqueued: 0 });
});

it('looks at a backlog larger than its batch a page per run, so an email far down the backlog gets its lost job back', async () => {
  const queue = env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  // Only this test's emails are unsent.
  await env.deps.db.email.updateMany({ where: { latestStatus: 'QUEUED' }, data: { latestStatus: 'SENT' } });
  // One insert each: emails stored together would share a group job.
  for (let i = 0; i < 5; i++) await env.createEmails([{ to: [`backlog-${i}@example.net`] }]);
  // Redis lost the job of the one that sorts last (a failover to a replica that had not received it).
  const [{ id: lost }] = await env.deps.sql.query<{ id: string }>(
    `SELECT id FROM "Email" WHERE "latestStatus" = 'QUEUED' ORDER BY "createdAt" DESC, id DESC LIMIT 1`,
  );
  await queue.remove(lost);
  expect(await queue.getJobState(lost)).toBe('unknown');

  const sweep = () => sweepUnsentEmails({ ...env.deps, config: { ...env.deps.config, SEND_SWEEP_BATCH: 2 } });
  // Oldest first, two a run: the first two pages find nothing missing, the third finds the lost job.
  expect(await sweep()).toEqual({ checked: 2, enqueued: 0 });
  expect(await sweep()).toEqual({ checked: 2, enqueued: 0 });
  expect(await sweep()).toEqual({ checked: 1, enqueued: 1 });
  expect(await queue.getJobState(lost)).toBe('waiting');
  // That page was short: the pass is over, and the next starts from the oldest again.
  expect(await sweep()).toEqual({ checked: 2, enqueued: 0 });
  // A cursor that is not ours is dropped, not trusted.
  await env.deps.redis.set(sweepCursorKey(env.config.REDIS_PREFIX), '{"sortAt":"yesterday-ish","id":"x"}');
  expect(await sweep()).toEqual({ checked: 2, enqueued: 0 });
});

describe('emails stored together, in one group job', () => {
  const queue = () => env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  const groupOf = async (ids: string[]) => {
    const rows = await env.deps.db.email.findMany({ where: { id: { in: ids } }, select: { sendJobId: true } });
    const jobIds = [...new Set(rows.map((r) => r.sendJobId))];
    expect(jobIds).toHaveLength(1);
    return jobIds[0]!;
  };
  beforeEach(async () => {
    // Only each test's own emails are unsent, and only their jobs wait.
    await env.deps.db.email.updateMany({ where: { latestStatus: 'QUEUED' }, data: { latestStatus: 'SENT' } });
    await queue().drain(true);
  });

  it('leaves them to their group job while it waits or its worker holds it', async () => {
    const ids = await env.createEmails(Array.from({ length: 3 }, (_, i) => ({ to: [`group-${i}@example.net`] })));
    const groupId = await groupOf(ids);
    // A group job takes its team's place in the queue (fair-priority.ts).
    expect(await queue().getJobState(groupId)).toBe('prioritized');
    expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 3, enqueued: 0 });
    expect(await taker.getNextJob('token-of-a-live-worker')).toMatchObject({ id: groupId, data: { emailIds: ids } });
    expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 3, enqueued: 0 });
    expect(await Promise.all(ids.map((id) => queue().getJobState(id)))).toEqual(['unknown', 'unknown', 'unknown']);
    await queue()
      .remove(groupId)
      .catch(() => undefined);
    await env.deps.redis.del(`${queue().toKey(groupId)}:lock`);
  });

  it('reads one job state per waiting group, not one per email (a backlog is mostly waiting groups)', async () => {
    const ids = await env.createEmails(Array.from({ length: 5 }, (_, i) => ({ to: [`backlog-group-${i}@example.net`] })));
    const groupId = await groupOf(ids);
    const reads = jest.spyOn(queue(), 'getJobState');
    try {
      expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 5, enqueued: 0 });
      expect(reads.mock.calls).toEqual([[groupId]]);
    } finally {
      reads.mockRestore();
    }
  });

  it('gives each unsent email a job of its own once its group job is abandoned or over', async () => {
    const ids = await env.createEmails(Array.from({ length: 3 }, (_, i) => ({ to: [`abandoned-${i}@example.net`] })));
    const groupId = await groupOf(ids);
    expect((await taker.getNextJob('token-of-the-worker-that-dies'))?.id).toBe(groupId);
    // Its worker was SIGKILLed: the lock is gone before BullMQ's stalled check came by.
    await env.deps.redis.del(`${queue().toKey(groupId)}:lock`);
    expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 3, enqueued: 3 });
    expect(await queue().getJobState(groupId)).toBe('unknown');
    for (const id of ids) expect((await queue().getJob(id))?.data).toEqual({ emailId: id });

    // A group job that completed with one email still unsent and without a job of its own (its
    // delayed job was never added): that email gets one.
    await env.deps.db.email.updateMany({ where: { id: { in: ids } }, data: { latestStatus: 'SENT' } });
    await queue().drain(true);
    const more = await env.createEmails(Array.from({ length: 2 }, (_, i) => ({ to: [`left-${i}@example.net`] })));
    const moreGroup = await groupOf(more);
    const taken = await taker.getNextJob('token-2');
    expect(taken?.id).toBe(moreGroup);
    await taken!.moveToCompleted({ result: 'group', outcomes: { sent: 1, retry: 1 } }, 'token-2', false);
    await env.deps.db.email.update({ where: { id: more[0] }, data: { latestStatus: 'SENT' } });
    expect(await sweepUnsentEmails(env.deps)).toEqual({ checked: 1, enqueued: 1 });
    expect((await queue().getJob(more[1]))?.data).toEqual({ emailId: more[1] });
  });
});
