// Email API benchmark: single and batch sends against two floors (bench/emails/plain-floor.ts:
// node:http, one INSERT + one add, or one multi-row INSERT + one addBulk per request; and
// bench/emails/floor.ts: the same single send on Express), measured alternately, with the worker stopped.
//   npx tsx bench/emails/run.ts [--duration 15] [--connections 32] [--rounds 3] [--rate 2000] [--batch-connections 16] [--env K=V] [--profile] [--compiled]
// Writes bench/out/emails.json and prints a markdown summary.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { createDb } from '@mailrail/platform/db/client';
import { createRedis } from '@mailrail/platform/redis/client';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { dropDatabase, ensureDatabase } from '@mailrail/platform/db/admin';
import { prepareTemplateDatabase, templateDatabaseName, testServerUrl } from '@mailrail/testing/databases';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { writeResult } from '../report-kit';

// autocannon ships no types; this is the part we use.
interface CannonOptions {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration?: number;
  overallRate?: number;
}
interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (o: CannonOptions) => Promise<CannonResult>;

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
// --env KEY=VALUE (repeatable) passes settings to the API, e.g. --env EMAIL_COMMIT_CONCURRENCY=4.
const apiEnv = Object.fromEntries(
  process.argv.flatMap((a, i) => (a === '--env' ? [process.argv[i + 1].split(/=(.*)/s).slice(0, 2)] : [])),
) as Record<string, string>;
const DURATION = arg('duration', 15);
const CONNECTIONS = arg('connections', 32);
const TARGET_RATE = arg('rate', 2000);
const ROUNDS = arg('rounds', 3);
const BATCH_CONNECTIONS = arg('batch-connections', 16);
const API_PORT = 3900;
const FLOOR_PORT = 3901;
const PLAIN_PORT = 3902;
const root = path.resolve(__dirname, '../..');

async function waitForHttp(url: string, child: ChildProcess) {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timeout waiting for ${url}`);
}

function start(cmd: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(cmd[0], cmd.slice(1), {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  return child;
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
}

/** CPU seconds (user + system) used so far by a process, from /proc (Linux). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

interface Figures {
  requestsPerSec: number;
  emailsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time of the server process per request, in microseconds: independent of other load. */
  serverCpuMicrosPerRequest: number;
}

async function cannon(opts: CannonOptions, server: ChildProcess, emailsPerRequest = 1): Promise<Figures> {
  const cpu0 = cpuSeconds(server.pid);
  const r = await autocannon({ ...opts, duration: opts.duration ?? DURATION });
  const cpu = cpuSeconds(server.pid) - cpu0;
  return {
    serverCpuMicrosPerRequest: Math.round((cpu * 1e6) / Math.max(1, r.requests.total)),
    requestsPerSec: Math.round(r.requests.average),
    emailsPerSec: Math.round(r.requests.average * emailsPerRequest),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

async function main() {
  await prepareTemplateDatabase();
  const dbUrl = `${testServerUrl}/mailrail_bench_emails`;
  await dropDatabase(dbUrl);
  await ensureDatabase(dbUrl, templateDatabaseName());
  const prefix = `bench_emails_${process.pid}`;
  const db = createDb(dbUrl, 2);
  const team = await createTeam(db, 'Bench');
  const { apiKey } = await createApiKey(db, { teamId: team.id, permission: 'SENDING' });
  await insertDomain(db, 'dev-secret-change-me-dev-secret-change-me', {
    teamId: team.id,
    name: 'bench.example.com',
    region: 'us-east-1',
    dkimSelector: 'usesend',
    verified: true,
  });

  const email = {
    to: 'someone@dest.example.org',
    from: 'Bench <hello@bench.example.com>',
    subject: 'Hello',
    html: '<p>Hello there</p>',
    text: 'Hello there',
  };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    API_RATE_LIMIT: '0',
    NODE_ENV: 'production',
    SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  };
  const results: Record<string, Figures> = {};
  const loadBefore = os.loadavg()[0];

  // All three servers run side by side (only one is loaded at a time) and the runs alternate
  // plain floor, Express floor, API... so load from elsewhere on the machine hits all alike.
  // --profile writes a V8 CPU profile of the API to bench/out/profile (summarize it with
  // bench/emails/profile-summary.ts); --compiled runs the API from `npm run build`'s dist/.
  const profile = process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${path.join(root, 'bench/out/profile')}`] : [];
  const apiEntry = process.argv.includes('--compiled') ? ['dist/api/main.js'] : ['--import', 'tsx', 'apps/api/src/main.ts'];
  const api = start([process.execPath, ...profile, ...apiEntry], { ...env, ...apiEnv, PORT: String(API_PORT) });
  const floorEnv = { ...env, FLOOR_TEAM_ID: String(team.id) };
  const floor = start([process.execPath, '--import', 'tsx', 'bench/emails/floor.ts'], { ...floorEnv, PORT: String(FLOOR_PORT) });
  const plain = start([process.execPath, '--import', 'tsx', 'bench/emails/plain-floor.ts'], { ...floorEnv, PORT: String(PLAIN_PORT) });
  const plainRuns: Figures[] = [];
  const floorRuns: Figures[] = [];
  const apiRuns: Figures[] = [];
  const plainBatchRuns: Figures[] = [];
  const apiBatchRuns: Figures[] = [];
  try {
    await waitForHttp(`http://127.0.0.1:${API_PORT}/health`, api);
    await waitForHttp(`http://127.0.0.1:${FLOOR_PORT}/nothing`, floor);
    await waitForHttp(`http://127.0.0.1:${PLAIN_PORT}/nothing`, plain);
    const single = { url: `http://127.0.0.1:${API_PORT}/api/v1/emails`, method: 'POST' as const, headers, body: JSON.stringify(email) };
    const floorSingle = { ...single, url: `http://127.0.0.1:${FLOOR_PORT}/floor` };
    const plainSingle = { ...single, url: `http://127.0.0.1:${PLAIN_PORT}/floor` };
    const batch = {
      url: `http://127.0.0.1:${API_PORT}/api/v1/emails/batch`,
      method: 'POST' as const,
      headers,
      body: JSON.stringify(Array.from({ length: 100 }, () => email)),
    };
    const plainBatch = { ...batch, url: `http://127.0.0.1:${PLAIN_PORT}/floor/batch` };
    // Warm-up (JIT, pools).
    if (ROUNDS > 0) {
      await cannon({ ...plainSingle, connections: CONNECTIONS, duration: 3 }, plain);
      await cannon({ ...floorSingle, connections: CONNECTIONS, duration: 3 }, floor);
      await cannon({ ...single, connections: CONNECTIONS, duration: 3 }, api);
    }
    for (let round = 0; round < ROUNDS; round++) {
      plainRuns.push(await cannon({ ...plainSingle, connections: CONNECTIONS }, plain));
      floorRuns.push(await cannon({ ...floorSingle, connections: CONNECTIONS }, floor));
      apiRuns.push(await cannon({ ...single, connections: CONNECTIONS }, api));
    }
    results.singleAtTargetRate = await cannon({ ...single, connections: CONNECTIONS, overallRate: TARGET_RATE }, api);
    results.plainAtTargetRate = await cannon({ ...plainSingle, connections: CONNECTIONS, overallRate: TARGET_RATE }, plain);
    if (ROUNDS > 0) {
      await cannon({ ...plainBatch, connections: BATCH_CONNECTIONS, duration: 3 }, plain, 100);
      await cannon({ ...batch, connections: BATCH_CONNECTIONS, duration: 3 }, api, 100);
    }
    for (let round = 0; round < Math.max(1, ROUNDS); round++) {
      plainBatchRuns.push(await cannon({ ...plainBatch, connections: BATCH_CONNECTIONS }, plain, 100));
      apiBatchRuns.push(await cannon({ ...batch, connections: BATCH_CONNECTIONS }, api, 100));
    }
  } finally {
    await stop(api);
    await stop(floor);
    await stop(plain);
  }
  // The round with the median API rate stands for the run; a ratio is the median of the rounds'.
  const median = <T>(xs: T[], key: (x: T) => number) => [...xs].sort((x, y) => key(x) - key(y))[Math.floor(xs.length / 2)];
  const ratiosOf = (a: Figures[], b: Figures[]) => a.map((r, i) => r.requestsPerSec / b[i].requestsPerSec);
  const medianRatio = (xs: number[]) => (xs.length ? median(xs, (x) => x) : NaN);
  const ratios = ratiosOf(apiRuns, plainRuns);
  const expressRatios = ratiosOf(apiRuns, floorRuns);
  const batchRatios = ratiosOf(apiBatchRuns, plainBatchRuns);
  const ratio = medianRatio(ratios);
  results.single = median(apiRuns, (r) => r.requestsPerSec);
  results.plain = median(plainRuns, (r) => r.requestsPerSec);
  results.floor = median(floorRuns, (r) => r.requestsPerSec);
  results.batch = median(apiBatchRuns, (r) => r.requestsPerSec);
  results.plainBatch = median(plainBatchRuns, (r) => r.requestsPerSec);

  const rows = await db.email.count();
  const redis = createRedis('redis://127.0.0.1:6379');
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
  await db.$disconnect();
  await dropDatabase(dbUrl);

  const loadAverage = { before: Number(loadBefore.toFixed(2)), after: Number(os.loadavg()[0].toFixed(2)) };
  const machine = {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  const out = {
    at: new Date().toISOString(),
    machine,
    loadAverage,
    apiEnv,
    durationSeconds: DURATION,
    connections: CONNECTIONS,
    targetRate: TARGET_RATE,
    results,
    rounds: {
      api: apiRuns,
      plainFloor: plainRuns,
      expressFloor: floorRuns,
      apiBatch: apiBatchRuns,
      plainFloorBatch: plainBatchRuns,
      ratios: ratios.map((r) => Number(r.toFixed(2))),
      expressRatios: expressRatios.map((r) => Number(r.toFixed(2))),
      batchRatios: batchRatios.map((r) => Number(r.toFixed(2))),
    },
    ratioToFloor: Number(ratio.toFixed(2)),
    ratioToExpressFloor: Number(medianRatio(expressRatios).toFixed(2)),
    batchRatioToFloor: Number(medianRatio(batchRatios).toFixed(2)),
    rowsWritten: rows,
  };
  writeResult(
    'emails',
    {
      singlePerSec: results.single?.requestsPerSec ?? NaN,
      singleP99Ms: results.single?.p99 ?? NaN,
      singleServerCpuMs: (results.single?.serverCpuMicrosPerRequest ?? NaN) / 1000,
      singleP99AtTargetRateMs: results.singleAtTargetRate?.p99 ?? NaN,
      singleVsFloor: out.ratioToFloor,
      singleVsExpressFloor: out.ratioToExpressFloor,
      floorPerSec: results.plain?.requestsPerSec ?? NaN,
      floorP99Ms: results.plain?.p99 ?? NaN,
      floorServerCpuMs: (results.plain?.serverCpuMicrosPerRequest ?? NaN) / 1000,
      expressFloorPerSec: results.floor?.requestsPerSec ?? NaN,
      expressFloorServerCpuMs: (results.floor?.serverCpuMicrosPerRequest ?? NaN) / 1000,
      batchEmailsPerSec: results.batch?.emailsPerSec ?? NaN,
      batchServerCpuMsPerEmail: (results.batch?.serverCpuMicrosPerRequest ?? NaN) / 100 / 1000,
      batchVsFloor: out.batchRatioToFloor,
      floorBatchEmailsPerSec: results.plainBatch?.emailsPerSec ?? NaN,
      floorBatchServerCpuMsPerEmail: (results.plainBatch?.serverCpuMicrosPerRequest ?? NaN) / 100 / 1000,
    },
    out,
  );
  const line = (name: string, f: Figures | undefined) =>
    !f
      ? `| ${name} | not run |`
      : `| ${name} | ${f.requestsPerSec} | ${f.emailsPerSec} | ${f.p50} | ${f.p99} | ${f.serverCpuMicrosPerRequest} | ${f.non2xx} | ${f.errors} |`;
  const list = (xs: number[]) => xs.map((r) => r.toFixed(2)).join(', ');
  console.log(
    [
      `machine: ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGB} GB, node ${machine.node}; ${DURATION} s per run, ${CONNECTIONS} connections; load average ${loadAverage.before} -> ${loadAverage.after}; API env ${JSON.stringify(apiEnv)}`,
      '',
      '| run | requests/s | emails/s | p50 ms | p99 ms | server CPU µs/request | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|',
      line(`POST /api/v1/emails, max (median of ${ROUNDS} rounds)`, results.single),
      line('plain floor: node:http, 1 INSERT + 1 add (median round)', results.plain),
      line('Express floor: 1 INSERT + 1 add (median round)', results.floor),
      line(`POST /api/v1/emails at ${TARGET_RATE}/s offered`, results.singleAtTargetRate),
      line(`plain floor at ${TARGET_RATE}/s offered`, results.plainAtTargetRate),
      line(`POST /api/v1/emails/batch, 100 per request (${BATCH_CONNECTIONS} connections, median round)`, results.batch),
      line('plain floor batch: 1 multi-row INSERT + 1 addBulk (median round)', results.plainBatch),
      '',
      `single/plain floor per round: ${list(ratios)}; median ${ratio.toFixed(2)} (target >= 0.6)`,
      `single/Express floor per round: ${list(expressRatios)}; median ${out.ratioToExpressFloor}`,
      `batch/plain floor batch per round: ${list(batchRatios)}; median ${out.batchRatioToFloor} (target >= 0.8)`,
      `p99 of POST /api/v1/emails at ${TARGET_RATE}/s offered: ${results.singleAtTargetRate?.p99} ms (target <= 20); rows written: ${rows}`,
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
