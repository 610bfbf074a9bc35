import { Worker } from 'bullmq';
import { queueNames, queuePrefix } from '@mailrail/platform/queue/queues';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { sweepUnsentEmails } from './sweep-unsent-emails';

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
