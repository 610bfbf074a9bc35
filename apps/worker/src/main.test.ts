import type { ChildProcess } from 'node:child_process';
import { queueNames } from '@mailrail/platform/queue/queues';
import { completedSince } from '@mailrail/testing/queue-state';
import { testRedisUrl } from '@mailrail/testing/redis';
import { startTcpProxyFor } from '@mailrail/testing/tcp-proxy';
import { spawnWorkerProcess, useTestWorkerEnv, workerStarted } from './testing/worker-harness';

// The worker as a real process (`node --import tsx apps/worker/src/main.ts`, what
// `npm run start:worker` runs): SIGTERM finishes the sends in flight and exits 0; SIGKILL loses
// nothing because the lease expires and the email is sent by whoever runs next, one sweep later.

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

// The harness sweeps every second (SEND_SWEEP_CRON); the rest of a bound is room for the sweep's
// query, the send and a loaded test machine, still far below BullMQ's 30 s lock and stalled check.
const SWEEP_PERIOD_MS = 1000;
const LOADED_MACHINE_SLACK_MS = 4000;

it('after SIGKILL mid-send, the next worker sends the email once, one sweep after the lease ends', async () => {
  // The first call hangs (SES never answers it, so it never accepted the message).
  env.ses.failNext(1, { kind: 'timeout', delayMs: 60_000 });
  const [id] = await env.createEmails([{ to: ['killed@example.net'] }]);
  const child = startWorkerProcess();
  const exit = exited(child);
  await env.waitFor(async () => env.ses.sendCalls >= 1, 20_000);
  const leaseUntil = (await env.email(id)).sendLeaseUntil;
  expect(leaseUntil).not.toBeNull();
  child.kill('SIGKILL');
  expect((await exit).signal).toBe('SIGKILL');

  // The dead worker's send job stays active in BullMQ until its stalled check, which a worker with
  // the default lease runs every 30 s: this one would not move the job back within the bound
  // below. The sweeper takes the job over once the email's lease has ended and its lock is gone.
  const next = spawnWorkerProcess(env, { logLevel: 'info', extraEnv: { SEND_LEASE_SECONDS: '60' } });
  const nextExit = exited(next);
  const up = await workerStarted(next);
  const bound = Math.max(up, leaseUntil!.getTime()) + SWEEP_PERIOD_MS + LOADED_MACHINE_SLACK_MS;
  const row = await env.waitFor(
    async () => {
      const r = await env.email(id);
      return r.latestStatus === 'SENT' ? r : null;
    },
    Math.max(0, bound - Date.now()),
  );
  expect(env.ses.messagesTo('killed@example.net')).toHaveLength(1);
  expect(row.sendAttempts).toBe(2);
  next.kill('SIGTERM');
  expect((await nextExit).code).toBe(0);
}, 90_000);

it('a worker SIGKILLed while it runs the sweeper holds no sweep back: the next worker sweeps within one period', async () => {
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
  await env.waitFor(() => completedSince(maintenance, 'sweep-unsent-emails', up), SWEEP_PERIOD_MS + LOADED_MACHINE_SLACK_MS);
  // The killed tick is still active under the dead worker's lock (30 s): the scheduler queued the
  // next tick when this one started, so nothing waited for BullMQ's stalled check.
  expect(await maintenance.getJobState(killedTick)).toBe('active');
  next.kill('SIGTERM');
  expect((await nextExit).code).toBe(0);
}, 90_000);

// Redis reached through a proxy this test cuts. On the cluster run (test:cluster) the worker would
// need every node proxied; the cluster client's own close is in test/scale/redis-outage-close.test.ts.
const onOneRedis = process.env.REDIS_CLUSTER_NODES ? it.skip : it;

onOneRedis(
  'on SIGTERM while Redis is away, exits 1 once WORKER_SHUTDOWN_GRACE_MS has passed',
  async () => {
    const url = testRedisUrl();
    const proxy = await startTcpProxyFor(url);
    try {
      const child = spawnWorkerProcess(env, {
        logLevel: 'info',
        extraEnv: { REDIS_URL: proxy.route(url), WORKER_SHUTDOWN_GRACE_MS: '3000' },
      });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exit = exited(child);
      await workerStarted(child);
      await proxy.cut();
      await new Promise((r) => setTimeout(r, 500));
      const signalled = Date.now();
      child.kill('SIGTERM');
      const result = await Promise.race([exit, new Promise((r) => setTimeout(() => r('still running'), 20_000).unref())]);
      if (result === 'still running') child.kill('SIGKILL');
      expect(result).toEqual({ code: 1, signal: null });
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(3000);
      expect(output).toContain('did not finish within WORKER_SHUTDOWN_GRACE_MS');
    } finally {
      await proxy.close();
    }
  },
  60_000,
);
