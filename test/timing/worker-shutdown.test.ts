import type { ChildProcess } from 'node:child_process';
import { testRedisUrl } from '@mailrail/testing/redis';
import { startTcpProxyFor } from '@mailrail/testing/tcp-proxy';
import { spawnWorkerProcess, useTestWorkerEnv, workerStarted } from '../../apps/worker/src/testing/worker-harness';

// The worker as a real process (apps/worker/src/main.test.ts has the rest of its stops): a stop
// that cannot finish exits 1 once WORKER_SHUTDOWN_GRACE_MS has passed. The rule gives the
// tolerance: never before the grace (README.md).

const env = useTestWorkerEnv();

const GRACE_MS = 3000;

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

// Redis reached through a proxy this test cuts. On the cluster run (test:cluster) the worker would
// need every node proxied; the cluster client's own close is in test/scale/redis-outage-close.test.ts.
const onOneRedis = process.env.REDIS_CLUSTER_NODES ? it.skip : it;

onOneRedis(
  'on SIGTERM while Redis is away, exits 1 once WORKER_SHUTDOWN_GRACE_MS has passed, not before',
  async () => {
    const url = testRedisUrl();
    const proxy = await startTcpProxyFor(url);
    try {
      const child = spawnWorkerProcess(env, {
        logLevel: 'info',
        extraEnv: { REDIS_URL: proxy.route(url), WORKER_SHUTDOWN_GRACE_MS: String(GRACE_MS) },
      });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exit = exited(child);
      await workerStarted(child);
      await proxy.cut();
      await new Promise((r) => setTimeout(r, 500));
      const signalled = Date.now();
      child.kill('SIGTERM');
      // A hang guard, not a bound: the worker that never exits fails here instead of holding jest.
      const result = await Promise.race([exit, new Promise((r) => setTimeout(() => r('still running'), 20_000).unref())]);
      if (result === 'still running') child.kill('SIGKILL');
      expect(result).toEqual({ code: 1, signal: null });
      expect(output).toContain('did not finish within WORKER_SHUTDOWN_GRACE_MS');
      const exitedAt = Date.now();
      expect(exitedAt).toBeGreaterThanOrEqual(signalled + GRACE_MS);
    } finally {
      await proxy.close();
    }
  },
  60_000,
);
