import type { ChildProcess } from 'node:child_process';
import { queueNames } from '@mailrail/platform/queue/queues';
import { spawnWorkerProcess, useTestWorkerEnv, workerStarted } from './testing/worker-harness';

// The worker as a real process (`node --import tsx apps/worker/src/main.ts`, what
// `npm run start:worker` runs): SIGTERM finishes the sends in flight and exits 0; SIGKILL loses
// nothing because the lease expires and the email is sent by whoever runs next, one sweep later.
// The exit once WORKER_SHUTDOWN_GRACE_MS has passed is a timing check: test/timing/worker-shutdown.test.ts.

const env = useTestWorkerEnv();

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

it('after SIGKILL mid-send, the next worker leaves the email alone while the lease lasts, then its sweeper sends it once', async () => {
  // The first call hangs (SES never answers it, so it never accepted the message).
  env.ses.failNext(1, { kind: 'timeout', delayMs: 60_000 });
  const [id] = await env.createEmails([{ to: ['killed@example.net'] }]);
  const child = startWorkerProcess();
  const exit = exited(child);
  await env.waitFor(async () => env.ses.sendCalls >= 1, 20_000);
  expect((await env.email(id)).sendLeaseUntil).not.toBeNull();
  child.kill('SIGKILL');
  expect((await exit).signal).toBe('SIGKILL');
  // The test moves time for the lease (its length is the claim's rule, claim-committer.test.ts):
  // it lasts until the test ends it, so nothing below depends on how fast this machine is.
  await env.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: new Date(Date.now() + 10 * 60_000) } });

  const next = spawnWorkerProcess(env, { logLevel: 'info', extraEnv: { SEND_LEASE_SECONDS: '60' } });
  const nextExit = exited(next);
  const up = await workerStarted(next);
  // While the lease lasts, a sweep of the next worker leaves the email alone.
  await env.sweptSince(up);
  expect(await env.email(id)).toMatchObject({ latestStatus: 'QUEUED', sendAttempts: 1 });
  expect(env.ses.sendCalls).toBe(1);

  // The lease ends. The dead worker's send job stays active in BullMQ until a stalled check, which
  // a worker with this lease runs every 30 s; the sweeper replaces it once its lock is gone.
  const leaseEnded = Date.now();
  await env.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: new Date(leaseEnded - 1000) } });
  const row = await env.waitFor(async () => {
    const r = await env.email(id);
    return r.latestStatus === 'SENT' ? r : null;
  }, 20_000);
  expect(env.ses.messagesTo('killed@example.net')).toHaveLength(1);
  expect(row.sendAttempts).toBe(2);
  // Sent by a job the sweeper added after the lease ended, not by the dead worker's job brought
  // back by a stalled check.
  const job = await env.deps.queues.get(queueNames.send(env.domain.region, 'transactional')).getJob(id);
  expect(job!.timestamp).toBeGreaterThanOrEqual(leaseEnded);
  next.kill('SIGTERM');
  expect((await nextExit).code).toBe(0);
}, 90_000);

it('a worker SIGKILLed while it runs the sweeper holds no sweep back: the next worker sweeps while the killed tick still holds its lock', async () => {
  const maintenance = env.deps.queues.get(queueNames.maintenance);
  // The sweep reads "Domain" (the email's region); nothing else the worker runs here does. While
  // the table is locked, the sweep tick the worker takes stays active, holding its BullMQ lock.
  const killedTick = await env.deps.sql.transaction(async (tx) => {
    await tx.execute('LOCK TABLE "Domain" IN ACCESS EXCLUSIVE MODE');
    const child = startWorkerProcess();
    const exit = exited(child);
    const tick = await env.waitFor(
      async () => (await maintenance.getJobs(['active'])).find((j) => j.name === 'sweep-unsent-emails'),
      30_000,
    );
    child.kill('SIGKILL');
    expect((await exit).signal).toBe('SIGKILL');
    return tick.id!;
  });

  const next = spawnWorkerProcess(env, { logLevel: 'info' });
  const nextExit = exited(next);
  const up = await workerStarted(next);
  await env.sweptSince(up);
  // The killed tick is still active under the dead worker's lock (30 s): the scheduler queued the
  // next tick when this one started, so nothing waited for BullMQ's stalled check. The state, not
  // the time the sweep took, is the proof.
  expect(await maintenance.getJobState(killedTick)).toBe('active');
  next.kill('SIGTERM');
  expect((await nextExit).code).toBe(0);
}, 90_000);
