import { queueNames } from '@mailrail/platform/queue/queues';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';

// Group send jobs (several emails stored together, one BullMQ job) when the worker stops: the
// group's emails not yet started go back to the queue alone, for any replica, instead of keeping
// the stop waiting for the whole group.

let env: TestWorkerEnv;
beforeAll(async () => {
  // One SES call at a time (three emails in flight), and slow calls: a group of 16 takes seconds.
  env = await startTestWorkerEnv({ SEND_CONCURRENCY: '1' });
});
afterAll(async () => {
  await env?.close();
});

it('hands the unstarted emails of a group back when the worker closes, and another worker sends each once', async () => {
  env.ses.latencyMs = 200;
  const queue = env.deps.queues.get(queueNames.send(env.domain.region, 'transactional'));
  const ids = await env.createEmails(Array.from({ length: 16 }, (_, i) => ({ to: [`closing-${i}@example.net`] })));
  const groupId = (await env.email(ids[0])).sendJobId!;
  const sentCount = () => env.deps.db.email.count({ where: { id: { in: ids }, latestStatus: 'SENT' } });

  const first = await env.start();
  // The stop begins as SES takes the first message, from SES's side: how long the test took to
  // notice cannot let the rest of the group go meanwhile.
  let closing: Promise<void> | undefined;
  const closeFirst = () => (closing ??= first.close());
  env.ses.onAccept = () => void closeFirst();
  if (env.ses.messages.length > 0) closeFirst();
  await env.waitFor(async () => closing !== undefined);
  await closing;
  env.ses.onAccept = null;
  // The stop waited for the sends in flight only, not for the sixteen: counted below (fewer than
  // 16 sent, the rest handed back unclaimed), not timed, so a slow machine cannot fail it.
  const sentByFirst = await sentCount();
  expect(sentByFirst).toBeLessThan(16);
  const unsent = await env.deps.db.email.findMany({ where: { id: { in: ids }, latestStatus: 'QUEUED' } });
  expect(unsent).toHaveLength(16 - sentByFirst);
  // A member may also have gone back to its queue as throttled: on a busy machine its message was
  // late for its send slot three times (send-pacing.ts, LATE_BOOKINGS). It then waits, delayed by
  // one interval, in a job of its own like a handed-back one.
  const returned = (await queue.getJob(groupId))?.returnvalue as { result: string; outcomes: Record<string, number> };
  expect(returned.result).toBe('group');
  const { sent = 0, 'handed-back': handedBack = 0, throttled = 0, ...others } = returned.outcomes;
  expect(others).toEqual({});
  expect(sent).toBe(sentByFirst);
  expect(handedBack).toBeGreaterThan(0);
  expect(handedBack + throttled).toBe(16 - sentByFirst);
  for (const e of unsent) {
    // Not claimed, and waiting in a job of its own.
    expect(e.sendLeaseUntil).toBeNull();
    expect(['waiting', 'delayed']).toContain(await queue.getJobState(e.id));
  }
  expect(await queue.getJobState(groupId)).toBe('completed');

  env.ses.latencyMs = 0;
  await env.start();
  await env.waitFor(async () => (await sentCount()) === 16);
  ids.forEach((_, i) => expect(env.ses.messagesTo(`closing-${i}@example.net`)).toHaveLength(1));
});
