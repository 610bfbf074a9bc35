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
  const ids = await env.createEmails(Array.from({ length: 5 }, (_, i) => ({ to: [`backlog-${i}@example.net`] })));
  // Redis lost the job of the one that sorts last (a failover to a replica that had not received
  // it). One insert gave all five the same createdAt: the id orders them.
  const lost = [...ids].sort().at(-1)!;
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
