// Idle memory of the API and the worker, run from the TypeScript sources with tsx (development,
// `npm run dev:api`) against the compiled output of `npm run build` (production, `npm run start:api`).
// Each process starts alone on a fresh database and Redis prefix, no load; once ready it settles,
// then its RSS is sampled from /proc. Rounds alternate the variants so a change in the machine's
// load hits all alike. Figures: median of rounds.
// Run: npx tsx bench/idle-rss/run.ts [rounds=3] [settle seconds=20]
import { spawn } from 'node:child_process';

import os from 'node:os';
import path from 'node:path';
import { createRedis } from '@mailrail/platform/redis/client';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { buildAll } from '../../scripts/build';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';
import { writeResult } from '../report-kit';
import { procStatusMb } from '../process-stats';
import { freePort } from '@mailrail/testing/free-port';
import { setTimeout as sleep } from 'node:timers/promises';

const ROUNDS = Number(process.argv[2] ?? 3);
const SETTLE_S = Number(process.argv[3] ?? 20);
const SAMPLES = 5; // one a second after settling
const root = path.resolve(__dirname, '../..');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

type App = 'api' | 'worker';
type Mode = 'tsx' | 'compiled';
const variants: { app: App; mode: Mode }[] = [
  { app: 'api', mode: 'tsx' },
  { app: 'api', mode: 'compiled' },
  { app: 'worker', mode: 'tsx' },
  { app: 'worker', mode: 'compiled' },
];

function nodeArgs(app: App, mode: Mode): string[] {
  // The process flag `npm run start:*` and `dev:*` pass (docs/worker.md, "Memory").
  return mode === 'tsx'
    ? [youngGenerationFlag(app), '--import', 'tsx', `apps/${app}/src/main.ts`]
    : [youngGenerationFlag(app), `dist/${app}/main.js`];
}

async function measure(app: App, mode: Mode, databaseUrl: string, prefix: string) {
  const port = await freePort();
  const child = spawn(process.execPath, nodeArgs(app, mode), {
    cwd: root,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      DATABASE_URL: databaseUrl,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      SECRET: 'x'.repeat(40),
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKER_METRICS_PORT: String(port),
      SES_ENDPOINT: 'http://127.0.0.1:9',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y', // never called: nothing is queued
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const exited = new Promise((r) => child.on('exit', r));
  try {
    const started = performance.now();
    const readyUrl = `http://127.0.0.1:${port}/${app === 'api' ? 'health' : 'metrics'}`;
    while (!(await fetch(readyUrl).catch(() => null))?.ok) {
      if (child.exitCode !== null) throw new Error(`${app} (${mode}) exited with ${child.exitCode}`);
      if (performance.now() - started > 120_000) throw new Error(`${app} (${mode}) not ready after 120 s`);
      await sleep(50);
    }
    const readyMs = performance.now() - started;
    const rssAtReady = procStatusMb(child.pid!, 'VmRSS');
    await sleep(SETTLE_S * 1000);
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      samples.push(procStatusMb(child.pid!, 'VmRSS'));
      await sleep(1000);
    }
    return { readyMs, rssAtReady, idleRss: median(samples), peakRss: procStatusMb(child.pid!, 'VmHWM') };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function main() {
  const loadBefore = os.loadavg();
  await buildAll();
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const redis = createRedis('redis://127.0.0.1:6379');
  const results = new Map<string, Awaited<ReturnType<typeof measure>>[]>();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? variants : [...variants].reverse();
      for (const { app, mode } of order) {
        const r = await measure(app, mode, databaseUrl, prefix);
        console.error(
          `round ${round} ${app} ${mode}: ready ${r.readyMs.toFixed(0)} ms, RSS at ready ${r.rssAtReady.toFixed(0)} MB, idle ${r.idleRss.toFixed(0)} MB, peak ${r.peakRss.toFixed(0)} MB`,
        );
        results.set(`${app} ${mode}`, [...(results.get(`${app} ${mode}`) ?? []), r]);
      }
    }
  } finally {
    await deleteRedisPrefix(redis, prefix);
    redis.disconnect();
    await dropDatabase(databaseUrl);
  }
  const loadAfter = os.loadavg();

  const figures: Record<string, number> = {};
  const rows = variants.map(({ app, mode }) => {
    const rs = results.get(`${app} ${mode}`)!;
    const row = {
      readyMs: median(rs.map((r) => r.readyMs)),
      rssAtReady: median(rs.map((r) => r.rssAtReady)),
      idleRss: median(rs.map((r) => r.idleRss)),
      peakRss: median(rs.map((r) => r.peakRss)),
    };
    figures[`${app}_${mode}_idle_rss_mb`] = Math.round(row.idleRss);
    figures[`${app}_${mode}_ready_ms`] = Math.round(row.readyMs);
    return { app, mode, ...row };
  });
  writeResult('idle-rss', figures, { rounds: ROUNDS, settleSeconds: SETTLE_S, perRound: Object.fromEntries(results) });

  const cpus = os.cpus();
  console.log(
    `Machine: ${cpus.length} cores (${cpus[0]?.model.trim()}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`,
  );
  console.log(`Command: npx tsx bench/idle-rss/run.ts ${ROUNDS} ${SETTLE_S}`);
  console.log(
    `Load average (1/5/15 min): ${loadBefore.map((l) => l.toFixed(2)).join(' / ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' / ')} after`,
  );
  console.log('');
  console.log(`| process | run as | start to ready | RSS at ready | idle RSS (${SETTLE_S} s after ready) | peak RSS (VmHWM) |`);
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const how = r.mode === 'tsx' ? `\`node --import tsx apps/${r.app}/src/main.ts\`` : `\`node dist/${r.app}/main.js\``;
    console.log(
      `| ${r.app} | ${how} | ${(r.readyMs / 1000).toFixed(2)} s | ${r.rssAtReady.toFixed(0)} MB | ${r.idleRss.toFixed(0)} MB | ${r.peakRss.toFixed(0)} MB |`,
    );
  }
  for (const app of ['api', 'worker'] as const) {
    const tsx = rows.find((r) => r.app === app && r.mode === 'tsx')!;
    const compiled = rows.find((r) => r.app === app && r.mode === 'compiled')!;
    console.log(
      `\n${app}: compiled / tsx idle RSS ${(compiled.idleRss / tsx.idleRss).toFixed(2)}, start to ready ${(compiled.readyMs / tsx.readyMs).toFixed(2)}`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
