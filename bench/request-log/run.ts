// What the request log costs the single-send path (issue 42: "less than 5 % of its bench figure"):
// two APIs on one scratch database, one with REQUEST_LOG_ENABLED=true and one with false, loaded
// one at a time with the emails bench's POST /api/v1/emails, in interleaved rounds (on, off, off,
// on, ...) so that load from elsewhere on the machine falls on both alike.
//   npx tsx bench/request-log/run.ts [--duration 10] [--connections 32] [--rounds 6] [--env K=V]
// The cost of a round is 1 - (sends/s with the log) / (sends/s without); the figure is the median
// of the rounds'. Also reports the API's CPU per send both ways, and, steadier on a busy machine,
// the CPU this process spends on the log's own work per entry (redaction, buffering, the batch's
// JSON and its INSERT through the production writer) against the API's CPU per send without the log.
// Writes bench/out/request-log.json.
import os from 'node:os';
import { maintainEmailPartitions } from '@mailrail/domain/email-log/email-partitions';
import { redactRequestBody } from '@mailrail/domain/request-log/redact-body';
import { maintainRequestLogPartitions } from '@mailrail/domain/request-log/request-log-partitions';
import { createRequestLogWriter } from '@mailrail/domain/request-log/request-log-writer';
import { createSqlPool } from '@mailrail/platform/db/sql/executor';
import { createLogger } from '@mailrail/platform/log/logger';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';
import { machineSpeedMs } from '../machine-speed';
import { writeResult } from '../report-kit';
import {
  alternate,
  benchEmail,
  envArgs,
  measure,
  median,
  numberArg,
  setUpEmailBench,
  startServer,
  stopServer,
  type BenchServer,
  type Figures,
  type Load,
} from '../emails/bench-kit';

const apiEnv = envArgs('env');
const DURATION = numberArg('duration', 10);
const CONNECTIONS = numberArg('connections', 32);
const ROUNDS = numberArg('rounds', 6);
const TARGET = 0.05;

async function main() {
  const bench = await setUpEmailBench('request_log');
  // As in production: today's partitions exist (the worker's jobs create them), so the log's rows
  // go to their day's partition, not the DEFAULT one.
  const sql = createSqlPool(bench.dbUrl, 1, () => undefined);
  await maintainEmailPartitions(sql, { daysAhead: 1, bodyRetentionDays: 0, retentionDays: 0 }, new Date());
  await maintainRequestLogPartitions(sql, { daysAhead: 1, retentionDays: 0 }, new Date());
  await sql.end();

  const loadBefore = os.loadavg()[0];
  const cpuReferenceBefore = machineSpeedMs();
  const apiEntry = [youngGenerationFlag('api'), '--import', 'tsx', 'apps/api/src/main.ts'];
  let on: BenchServer | undefined;
  let off: BenchServer | undefined;
  const rounds: Record<'on' | 'off', Figures[]> = { on: [], off: [] };
  try {
    on = await startServer('API, request log on', apiEntry, { ...bench.env, ...apiEnv, REQUEST_LOG_ENABLED: 'true' }, '/health');
    off = await startServer('API, request log off', apiEntry, { ...bench.env, ...apiEnv, REQUEST_LOG_ENABLED: 'false' }, '/health');
    const load: Load = { path: '/api/v1/emails', headers: bench.headers, body: JSON.stringify(benchEmail), connections: CONNECTIONS };
    const [a, b] = [on, off];
    // Warm-up (JIT, pools), both.
    await alternate(1, { on: () => measure(a, { ...load, duration: 3 }), off: () => measure(b, { ...load, duration: 3 }) });
    // ABBA: a round pair runs on, off, then off, on, so neither always goes first (the database grows,
    // the machine's other load comes and goes).
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const which of order) rounds[which].push(await measure(which === 'on' ? a : b, { ...load, duration: DURATION }));
    }
  } finally {
    await stopServer(on);
    await stopServer(off);
  }

  const logged = await bench.db.requestLog.count();
  const emails = await bench.db.email.count();
  // The log's own work, alone: ENTRIES entries through the production writer, in batches of 1,000.
  const ENTRIES = 20_000;
  const logSql = createSqlPool(bench.dbUrl, 1, () => undefined);
  const writer = createRequestLogWriter(
    { sql: logSql, log: createLogger('warn', 'bench-request-log'), onDrop: () => undefined },
    { flushMs: 3_600_000, maxBuffered: 10_000, maxBatch: 1000 },
  );
  let insertMs = 0; // waiting for the batch INSERTs: PostgreSQL's share, mostly
  const entryCpu0 = process.cpuUsage();
  for (let i = 0; i < ENTRIES; i++) {
    writer.record({
      teamId: bench.teamId,
      apiKeyId: 1,
      source: 'api',
      method: 'POST',
      path: '/api/v1/emails',
      status: 200,
      errorCode: null,
      errorMessage: null,
      durationMs: 3,
      requestBody: redactRequestBody(benchEmail),
      createdAt: new Date(),
    });
    if (i % 1000 === 999) {
      const t = performance.now();
      await writer.flush();
      insertMs += performance.now() - t;
    }
  }
  const entryCpu = process.cpuUsage(entryCpu0);
  writer.close();
  await logSql.end();
  const logMicrosPerEntry = (entryCpu.user + entryCpu.system) / ENTRIES;

  const costs = rounds.on.map((r, i) => 1 - r.requestsPerSec / rounds.off[i].requestsPerSec);
  const cpuCosts = rounds.on.map((r, i) => r.serverCpuMicrosPerRequest / rounds.off[i].serverCpuMicrosPerRequest - 1);
  const cost = median(costs, (x) => x);
  const cpuCost = median(cpuCosts, (x) => x);
  const byRate = (f: Figures) => f.requestsPerSec;
  const medianOn = median(rounds.on, byRate);
  const medianOff = median(rounds.off, byRate);
  await bench.close();

  const machine = {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  const loadAverage = { before: Number(loadBefore.toFixed(2)), after: Number(os.loadavg()[0].toFixed(2)) };
  const cpuReferenceMs = { before: cpuReferenceBefore, after: machineSpeedMs() };
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  writeResult(
    'request-log',
    {
      requestLogCost: Number(cost.toFixed(3)),
      requestLogCpuCost: Number(cpuCost.toFixed(3)),
      requestLogEntryCpuMs: Number((logMicrosPerEntry / 1000).toFixed(4)),
      requestLogInsertMsPerEntry: Number((insertMs / ENTRIES).toFixed(4)),
      requestLogEntryVsSendCpu: Number((logMicrosPerEntry / medianOff.serverCpuMicrosPerRequest).toFixed(3)),
      singleWithLogPerSec: medianOn.requestsPerSec,
      singleWithoutLogPerSec: medianOff.requestsPerSec,
      singleWithLogServerCpuMs: medianOn.serverCpuMicrosPerRequest / 1000,
      singleWithoutLogServerCpuMs: medianOff.serverCpuMicrosPerRequest / 1000,
    },
    {
      machine,
      loadAverage,
      cpuReferenceMs,
      apiEnv,
      durationSeconds: DURATION,
      connections: CONNECTIONS,
      rounds,
      costs,
      cpuCosts,
      logged,
      emails,
    },
  );
  const line = (name: string, f: Figures) =>
    `| ${name} | ${f.requestsPerSec} | ${f.p50} | ${f.p99} | ${f.serverCpuMicrosPerRequest} | ${f.postgresCpuMicrosPerRequest} | ${f.non2xx} | ${f.errors} |`;
  console.log(
    [
      `machine: ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGB} GB, node ${machine.node}; ${DURATION} s per run, ${CONNECTIONS} connections, ${ROUNDS} rounds each way; load average ${loadAverage.before} -> ${loadAverage.after}; CPU reference ${cpuReferenceMs.before} -> ${cpuReferenceMs.after} ms`,
      '',
      '| run | requests/s | p50 ms | p99 ms | API CPU µs/request | PostgreSQL CPU µs/request | non-2xx | errors |',
      '|---|---|---|---|---|---|---|---|',
      ...rounds.on.flatMap((r, i) => [line(`round ${i + 1}, log on`, r), line(`round ${i + 1}, log off`, rounds.off[i])]),
      '',
      `request log rows written: ${logged} (emails: ${emails})`,
      `COST (throughput) per round: ${costs.map(pct).join(', ')}; median ${pct(cost)} (target < ${pct(TARGET)}: ${cost < TARGET ? 'met' : 'MISSED'})`,
      `COST (API CPU per send) per round: ${cpuCosts.map(pct).join(', ')}; median ${pct(cpuCost)}`,
      `the batch INSERTs took ${((insertMs * 1000) / ENTRIES).toFixed(1)} µs per entry (wall time, mostly PostgreSQL's; the API's sends took ${medianOff.postgresCpuMicrosPerRequest} µs of PostgreSQL CPU each without the log)`,
      `COST (the log's own CPU per entry, ${logMicrosPerEntry.toFixed(1)} µs, over the API's CPU per send without it, ${medianOff.serverCpuMicrosPerRequest} µs): ${pct(logMicrosPerEntry / medianOff.serverCpuMicrosPerRequest)}`,
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
