// Email API benchmark: single and batch sends against two floors (bench/emails/plain-floor.ts:
// node:http, one INSERT + one add, or one multi-row INSERT + one addBulk per request; and
// bench/emails/floor.ts: the same single send on Express), measured alternately, with the worker stopped.
//   npx tsx bench/emails/run.ts [--duration 15] [--connections 32] [--rounds 3] [--rate 2000] [--warm-up 5] [--batch-connections 16] [--env K=V] [--profile] [--compiled] [--batch-only]
// Writes bench/out/emails.json and prints a markdown summary ending in the three verdict lines
// (single and batch ratios to the plain floor, p99 at --rate offered).
import os from 'node:os';
import path from 'node:path';
import { writeResult } from '../report-kit';
import { machineSpeedMs } from '../machine-speed';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';
import {
  alternate,
  benchEmail,
  envArgs,
  measure,
  measureOpenLoop,
  median,
  numberArg,
  ratios as ratiosOf,
  root,
  setUpEmailBench,
  startServer,
  stopServer,
  type BenchServer,
  type Figures,
  type Load,
} from './bench-kit';

const apiEnv = envArgs('env');
const DURATION = numberArg('duration', 15);
const CONNECTIONS = numberArg('connections', 32);
const TARGET_RATE = numberArg('rate', 2000);
const WARM_UP = numberArg('warm-up', 5);
const ROUNDS = numberArg('rounds', 3);
const BATCH_CONNECTIONS = numberArg('batch-connections', 16);
// --batch-only: just the batch rounds (to profile or compare the batch route alone).
const BATCH_ONLY = process.argv.includes('--batch-only');

async function main() {
  const bench = await setUpEmailBench('emails');
  const results: Record<string, Figures> = {};
  const loadBefore = os.loadavg()[0];
  const cpuReferenceBefore = machineSpeedMs();

  // All three servers run side by side (only one is loaded at a time) and the runs alternate
  // plain floor, Express floor, API... so load from elsewhere on the machine hits all alike.
  // --profile writes V8 CPU profiles of the API (bench/out/profile) and of the plain floor
  // (bench/out/profile-floor), to summarise with bench/emails/profile-summary.ts; --compiled runs the API from `npm run build`'s dist/.
  const profileTo = (dir: string) => (process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${path.join(root, dir)}`] : []);
  const profile = profileTo('bench/out/profile');
  // The API starts with the young-generation flag production passes (memory-flags.ts);
  // BENCH_API_NODE_ARGS adds Node flags (a later --max-semi-space-size wins).
  const apiNodeArgs = [youngGenerationFlag('api'), ...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const apiEntry = [
    ...apiNodeArgs,
    ...(process.argv.includes('--compiled') ? ['dist/api/main.js'] : ['--import', 'tsx', 'apps/api/src/main.ts']),
  ];
  let api: BenchServer | undefined;
  let floor: BenchServer | undefined;
  let plain: BenchServer | undefined;
  let single: Record<'plain' | 'floor' | 'api', Figures[]> = { plain: [], floor: [], api: [] };
  let batch: Record<'plain' | 'api', Figures[]> = { plain: [], api: [] };
  try {
    api = await startServer('API', [...profile, ...apiEntry], { ...bench.env, ...apiEnv }, '/health');
    floor = await startServer('Express floor', ['--import', 'tsx', 'bench/emails/floor.ts'], bench.env, '/nothing');
    plain = await startServer(
      'plain floor',
      [...profileTo('bench/out/profile-floor'), '--import', 'tsx', 'bench/emails/plain-floor.ts'],
      bench.env,
      '/nothing',
    );
    const s: Load = { path: '/api/v1/emails', headers: bench.headers, body: JSON.stringify(benchEmail), connections: CONNECTIONS };
    const floorS: Load = { ...s, path: '/floor' };
    const b: Load = {
      path: '/api/v1/emails/batch',
      headers: bench.headers,
      body: JSON.stringify(Array.from({ length: 100 }, () => benchEmail)),
      connections: BATCH_CONNECTIONS,
      emailsPerRequest: 100,
    };
    const floorB: Load = { ...b, path: '/floor/batch' };
    const [a, f, p] = [api, floor, plain];
    // Warm-up (JIT, pools).
    if (ROUNDS > 0 && !BATCH_ONLY) {
      await alternate(1, {
        plain: () => measure(p, { ...floorS, duration: 3 }),
        floor: () => measure(f, { ...floorS, duration: 3 }),
        api: () => measure(a, { ...s, duration: 3 }),
      });
    }
    single = await alternate(BATCH_ONLY ? 0 : ROUNDS, {
      plain: () => measure(p, { ...floorS, duration: DURATION }),
      floor: () => measure(f, { ...floorS, duration: DURATION }),
      api: () => measure(a, { ...s, duration: DURATION }),
    });
    if (!BATCH_ONLY) {
      // The target's figure: a steady offered rate (open loop); autocannon's overallRate, which
      // sends each second's share in a burst at full speed, is kept beside it for comparison.
      // Each after WARM_UP seconds at the same rate, unmeasured: the steady state at that rate.
      results.singleAtTargetRate = await measureOpenLoop(a, { ...s, duration: DURATION }, TARGET_RATE, { warmUpSeconds: WARM_UP });
      results.plainAtTargetRate = await measureOpenLoop(p, { ...floorS, duration: DURATION }, TARGET_RATE, { warmUpSeconds: WARM_UP });
      results.singleBurstsAtTargetRate = await measure(a, { ...s, duration: DURATION, overallRate: TARGET_RATE });
      results.plainBurstsAtTargetRate = await measure(p, { ...floorS, duration: DURATION, overallRate: TARGET_RATE });
    }
    if (ROUNDS > 0) {
      await alternate(1, { plain: () => measure(p, { ...floorB, duration: 3 }), api: () => measure(a, { ...b, duration: 3 }) });
    }
    batch = await alternate(Math.max(1, ROUNDS), {
      plain: () => measure(p, { ...floorB, duration: DURATION }),
      api: () => measure(a, { ...b, duration: DURATION }),
    });
  } finally {
    await stopServer(api);
    await stopServer(floor);
    await stopServer(plain);
  }
  // The round with the median API rate stands for the run; a ratio is the median of the rounds'.
  const medianRatio = (xs: number[]) => (xs.length ? median(xs, (x) => x) : NaN);
  const ratios = ratiosOf(single.api, single.plain);
  const expressRatios = ratiosOf(single.api, single.floor);
  const batchRatios = ratiosOf(batch.api, batch.plain);
  const ratio = medianRatio(ratios);
  const byRate = (r: Figures) => r.requestsPerSec;
  results.single = median(single.api, byRate);
  results.plain = median(single.plain, byRate);
  results.floor = median(single.floor, byRate);
  results.batch = median(batch.api, byRate);
  results.plainBatch = median(batch.plain, byRate);

  const rows = await bench.db.email.count();
  await bench.close();

  const loadAverage = { before: Number(loadBefore.toFixed(2)), after: Number(os.loadavg()[0].toFixed(2)) };
  const cpuReferenceMs = { before: cpuReferenceBefore, after: machineSpeedMs() };
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
    cpuReferenceMs,
    apiEnv,
    durationSeconds: DURATION,
    connections: CONNECTIONS,
    targetRate: TARGET_RATE,
    warmUpSeconds: WARM_UP,
    results,
    rounds: {
      api: single.api,
      plainFloor: single.plain,
      expressFloor: single.floor,
      apiBatch: batch.api,
      plainFloorBatch: batch.plain,
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
      floorP99AtTargetRateMs: results.plainAtTargetRate?.p99 ?? NaN,
      generatorLagP99AtTargetRateMs: results.singleAtTargetRate?.sendLagP99 ?? NaN,
      singleP99BurstsAtTargetRateMs: results.singleBurstsAtTargetRate?.p99 ?? NaN,
      singleVsFloor: out.ratioToFloor,
      singleVsExpressFloor: out.ratioToExpressFloor,
      floorPerSec: results.plain?.requestsPerSec ?? NaN,
      floorP99Ms: results.plain?.p99 ?? NaN,
      floorServerCpuMs: (results.plain?.serverCpuMicrosPerRequest ?? NaN) / 1000,
      expressFloorPerSec: results.floor?.requestsPerSec ?? NaN,
      expressFloorServerCpuMs: (results.floor?.serverCpuMicrosPerRequest ?? NaN) / 1000,
      batchEmailsPerSec: results.batch?.emailsPerSec ?? NaN,
      batchServerCpuMsPerEmail: (results.batch?.serverCpuMicrosPerEmail ?? NaN) / 1000,
      batchVsFloor: out.batchRatioToFloor,
      floorBatchEmailsPerSec: results.plainBatch?.emailsPerSec ?? NaN,
      floorBatchServerCpuMsPerEmail: (results.plainBatch?.serverCpuMicrosPerEmail ?? NaN) / 1000,
    },
    out,
  );
  const line = (name: string, f: Figures | undefined) =>
    !f
      ? `| ${name} | not run |`
      : `| ${name} | ${f.requestsPerSec} | ${f.emailsPerSec} | ${f.p50} | ${f.p99} | ${f.serverCpuMicrosPerRequest} | ${f.postgresCpuMicrosPerRequest} / ${f.redisCpuMicrosPerRequest} / ${f.loadCpuMicrosPerRequest} | ${f.non2xx} | ${f.errors} |`;
  const list = (xs: number[]) => xs.map((r) => r.toFixed(2)).join(', ');
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const atRate = results.singleAtTargetRate;
  const atRateOk = !!atRate && atRate.p99 <= 20 && atRate.non2xx + atRate.errors === 0 && atRate.requestsPerSec >= TARGET_RATE * 0.95;
  console.log(
    [
      `machine: ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGB} GB, node ${machine.node}; ${DURATION} s per run, ${CONNECTIONS} connections; load average ${loadAverage.before} -> ${loadAverage.after}; CPU reference (bench/machine-speed.ts) ${cpuReferenceMs.before} -> ${cpuReferenceMs.after} ms; API env ${JSON.stringify(apiEnv)}`,
      '',
      '| run | requests/s | emails/s | p50 ms | p99 ms | server CPU µs/request | PostgreSQL / Redis / load generator CPU µs/request | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|---|',
      line(`POST /api/v1/emails, max (median of ${ROUNDS} rounds)`, results.single),
      line('plain floor: node:http, 1 INSERT + 1 add (median round)', results.plain),
      line('Express floor: 1 INSERT + 1 add (median round)', results.floor),
      line(`POST /api/v1/emails at ${TARGET_RATE}/s offered (open loop, after ${WARM_UP} s at that rate)`, results.singleAtTargetRate),
      line(`plain floor at ${TARGET_RATE}/s offered (open loop, after ${WARM_UP} s at that rate)`, results.plainAtTargetRate),
      line(`POST /api/v1/emails, autocannon overallRate ${TARGET_RATE} (each second's share in a burst)`, results.singleBurstsAtTargetRate),
      line(`plain floor, autocannon overallRate ${TARGET_RATE}`, results.plainBurstsAtTargetRate),
      line(`POST /api/v1/emails/batch, 100 per request (${BATCH_CONNECTIONS} connections, median round)`, results.batch),
      line('plain floor batch: 1 multi-row INSERT + 1 addBulk (median round)', results.plainBatch),
      '',
      `single/Express floor per round: ${list(expressRatios)}; median ${out.ratioToExpressFloor}`,
      `rows written: ${rows}`,
      '',
      `SINGLE  POST /api/v1/emails / plain floor, per round: ${list(ratios)}; median ${ratio.toFixed(2)} (target >= 0.6: ${verdict(ratio >= 0.6)})`,
      `BATCH   POST /api/v1/emails/batch / plain floor batch, per round: ${list(batchRatios)}; median ${out.batchRatioToFloor} (target >= 0.8: ${verdict(out.batchRatioToFloor >= 0.8)})`,
      `P99     POST /api/v1/emails at ${TARGET_RATE}/s offered: ${atRate?.requestsPerSec}/s answered, p99 ${atRate?.p99} ms, ${(atRate?.non2xx ?? 0) + (atRate?.errors ?? 0)} failed (target <= 20 ms: ${verdict(atRateOk)}); plain floor at the same rate: p99 ${results.plainAtTargetRate?.p99} ms; the load generator's own lateness p99 ${atRate?.sendLagP99} ms (API run), ${results.plainAtTargetRate?.sendLagP99} ms (floor run)`,
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
