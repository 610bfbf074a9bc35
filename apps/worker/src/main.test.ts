import type { ChildProcess } from 'node:child_process';
import { spawnWorkerProcess, startTestWorkerEnv, type TestWorkerEnv } from './testing/worker-harness';

// The worker as a real process (`node --import tsx apps/worker/src/main.ts`, what
// `npm run start:worker` runs): SIGTERM finishes the sends in flight and exits 0; SIGKILL loses
// nothing because the lease expires and the email is sent by whoever runs next.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(() => env.ses.reset());

const startWorkerProcess = (logLevel = 'silent') => spawnWorkerProcess(env, { logLevel });

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

it('on SIGTERM finishes the sends in flight, takes no new job and exits 0', async () => {
  env.ses.latencyMs = 800;
  const ids = await env.createEmails([{ to: ['a@example.net'] }, { to: ['b@example.net'] }, { to: ['c@example.net'] }]);
  // SES answers after 800 ms; the harness's 1.5 s SES timeout could expire first on a loaded
  // machine, and a timed-out send is retried later instead of finishing in flight.
  const child = spawnWorkerProcess(env, { logLevel: 'info', extraEnv: { SES_TIMEOUT_MS: '10000', SEND_LEASE_SECONDS: '60' } });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = exited(child);
  await env.waitFor(async () => env.ses.sendCalls >= 3, 20_000); // all three are at SES now
  child.kill('SIGTERM');
  // Once the worker has acted on the signal, a new email must wait for the next worker.
  await env.waitFor(async () => output.includes('finishing the sends in flight'), 10_000);
  const [late] = await env.createEmails([{ to: ['late@example.net'] }]);
  expect(await exit).toEqual({ code: 0, signal: null });
  // The stopped worker recorded the three sends before exiting...
  const rows = await env.deps.db.email.findMany({ where: { id: { in: ids } } });
  expect(rows.map((r) => r.latestStatus)).toEqual(['SENT', 'SENT', 'SENT']);
  expect(env.ses.messages).toHaveLength(3);
  // ...and left the email that arrived after the signal to the next worker.
  expect((await env.email(late)).latestStatus).toBe('QUEUED');
  const again = startWorkerProcess();
  const againExit = exited(again);
  await env.waitFor(async () => (await env.email(late)).latestStatus === 'SENT', 20_000);
  again.kill('SIGTERM');
  expect((await againExit).code).toBe(0);
});

it('after SIGKILL mid-send, the email is sent exactly once by the next worker', async () => {
  // The first call hangs (SES never answers it, so it never accepted the message).
  env.ses.failNext(1, { kind: 'timeout', delayMs: 60_000 });
  const [id] = await env.createEmails([{ to: ['killed@example.net'] }]);
  const child = startWorkerProcess();
  const exit = exited(child);
  await env.waitFor(async () => env.ses.sendCalls >= 1, 20_000);
  expect((await env.email(id)).sendLeaseUntil).not.toBeNull();
  child.kill('SIGKILL');
  expect((await exit).signal).toBe('SIGKILL');

  const next = startWorkerProcess();
  const nextExit = exited(next);
  const row = await env.waitFor(async () => {
    const r = await env.email(id);
    return r.latestStatus === 'SENT' ? r : null;
    // Lease (5 s) plus a sweep, or BullMQ's stalled-job check (30 s) when the dead worker's lock on a
    // periodic job holds the sweeper back, as after the SIGTERM test in this file.
  }, 45_000);
  expect(env.ses.messagesTo('killed@example.net')).toHaveLength(1);
  expect(row.sendAttempts).toBe(2);
  next.kill('SIGTERM');
  expect((await nextExit).code).toBe(0);
}, 90_000);
