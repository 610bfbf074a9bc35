// The inputs of the capacity model (docs/capacity.md), measured in one run of a few minutes:
//   npx tsx bench/capacity/run.ts [emails=3000] [connections=16]
// 1. accept: the API (its own process) takes N emails over HTTP while no worker runs: API CPU per
//    email (user + system from /proc), PostgreSQL commits and row writes (pg_stat_database of the
//    bench database), WAL (pg_stat_wal: the whole server, so other load on it counts too; and
//    the bench database's own records through pg_walinspect), and
//    Redis memory per queued email (MEMORY USAGE of every key under the bench prefix, and INFO
//    used_memory, which other users of the same Redis move too).
// 2. deliver: a worker process (its own) sends them to a fake SES over HTTP, with the SES event
//    simulator on, so each email also gets SES's Send and Delivery events, processed by the same
//    worker, and the batched counters are folded: worker CPU, commits, rows and WAL per delivered
//    email. Done when every email is DELIVERED and no counter delta is left.
// Load average is printed beside every figure: CPU per email is only meaningful on a quiet machine.
import { spawn, type ChildProcess } from 'node:child_process';

import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { createDb } from '@mailrail/platform/db/client';
import { createRedis, type Redis } from '@mailrail/platform/redis/client';
import { testConfig } from '@mailrail/testing/config';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { startFakeSes } from '@mailrail/testing/fake-ses';
import { freePort } from '@mailrail/testing/free-port';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { youngGenerationFlag, type NodeApp } from '@mailrail/platform/process/memory-flags';
import { cpuSeconds } from '../process-stats';

const N = Number(process.argv[2] ?? 3000);
const CONNECTIONS = Number(process.argv[3] ?? 16);
const root = path.resolve(__dirname, '../..');
const SECRET = 'bench-secret-bench-secret-bench-secret-0123';

const load = () => os.loadavg()[0].toFixed(1);

interface PgStats {
  commits: number;
  rows: number;
  inserted: number;
  updated: number;
  deleted: number;
  walRecords: number;
  walBytes: number;
  lsn: string;
}

async function pgStats(c: Client): Promise<PgStats> {
  // Backends report their counters at most once a second, when idle: let them.
  await sleep(1500);
  await c.query('SELECT pg_stat_clear_snapshot()');
  const [d] = (
    await c.query<Record<string, string>>(
      `SELECT xact_commit, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = current_database()`,
    )
  ).rows;
  const [w] = (await c.query<Record<string, string>>(`SELECT wal_records, wal_bytes, pg_current_wal_lsn()::text AS lsn FROM pg_stat_wal`))
    .rows;
  const inserted = Number(d.tup_inserted);
  const updated = Number(d.tup_updated);
  const deleted = Number(d.tup_deleted);
  return {
    commits: Number(d.xact_commit),
    rows: inserted + updated + deleted,
    inserted,
    updated,
    deleted,
    walRecords: Number(w.wal_records),
    walBytes: Number(w.wal_bytes),
    lsn: w.lsn,
  };
}

/**
 * WAL written for this database alone between two snapshots (pg_walinspect): the records that
 * touch its relations. Commit records carry no relation and are left out (about 50 bytes each).
 */
async function ownWal(c: Client, a: PgStats, b: PgStats) {
  const [r] = (
    await c.query<{ records: string; bytes: string; fpi: string }>(
      `SELECT count(*) AS records, COALESCE(sum(record_length), 0) AS bytes, COALESCE(sum(fpi_length), 0) AS fpi
         FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
        WHERE block_ref LIKE '%/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/%'`,
      [a.lsn, b.lsn],
    )
  ).rows;
  return {
    walRecords: Number((Number(r.records) / N).toFixed(1)),
    walBytes: Math.round(Number(r.bytes) / N),
    fullPageImageBytes: Math.round(Number(r.fpi) / N),
  };
}

const perEmail = (a: PgStats, b: PgStats) =>
  Object.fromEntries(
    Object.entries(b)
      .filter(([k]) => k !== 'lsn')
      .map(([k, v]) => [k, Number(((Number(v) - Number(a[k as keyof PgStats])) / N).toFixed(2))]),
  ) as Record<keyof PgStats, number>;

async function prefixMemory(redis: Redis, prefix: string): Promise<number> {
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    const pipe = redis.pipeline();
    for (const k of keys) pipe.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
    for (const [, v] of (await pipe.exec()) ?? []) bytes += Number(v ?? 0);
  } while (cursor !== '0');
  return bytes;
}
const usedMemory = async (redis: Redis) => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

function startChild(app: NodeApp, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [youngGenerationFlag(app), '--import', 'tsx', `apps/${app}/src/main.ts`], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 600_000) {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function main() {
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const config = testConfig(databaseUrl, prefix);
  const db = createDb(databaseUrl, 2);
  const redis = createRedis(config.redis);
  const stats = new Client({ connectionString: databaseUrl });
  await stats.connect();
  await stats.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  // A temporary slot keeps the run's WAL from being recycled before it is read (other load on
  // the server may fill segments fast); it goes with this session.
  await stats.query(`SELECT pg_create_physical_replication_slot($1, true, true)`, [`mr_capacity_${process.pid}`]);
  const ses = await startFakeSes();
  const children: ChildProcess[] = [];
  try {
    const team = await createTeam(db, 'Capacity');
    const { apiKey } = await createApiKey(db, { teamId: team.id, permission: 'SENDING' });
    await insertDomain(db, SECRET, {
      teamId: team.id,
      name: 'cap.example.com',
      region: 'us-east-1',
      dkimSelector: 'usesend',
      verified: true,
    });
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      API_RATE_LIMIT: '0',
      SECRET,
      SES_ENDPOINT: ses.url,
      SES_RATE_LIMIT: '1000000',
      SES_EVENT_SIMULATOR: 'on',
      SES_EVENT_SIMULATOR_DELAY_MS: '10',
    };
    const port = await freePort();
    const api = startChild('api', { ...env, PORT: String(port), WORKER_METRICS_PORT: '0' });
    children.push(api);
    const base = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 'the API', 60_000);

    const body = JSON.stringify({
      from: 'Bench <hello@cap.example.com>',
      to: 'someone@dest.example.org',
      subject: 'Capacity',
      html: `<p>${'Hello capacity model. '.repeat(40)}</p>`,
      text: 'Hello capacity model.',
    });
    const post = () =>
      fetch(`${base}/api/v1/emails`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body,
      });
    for (let i = 0; i < 50; i++) await post(); // JIT warm-up, not measured (and not counted below)
    await until(async () => (await db.email.count()) === 50, 'warm-up emails');

    // ---- accept
    const s0 = await pgStats(stats);
    const keys0 = await prefixMemory(redis, prefix);
    const used0 = await usedMemory(redis);
    const load0 = load();
    const apiCpu0 = cpuSeconds(api.pid!);
    const t0 = Date.now();
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next++ < N) if (!(await post()).ok) failed++;
      }),
    );
    const acceptSeconds = (Date.now() - t0) / 1000;
    const apiCpu = cpuSeconds(api.pid!) - apiCpu0;
    const load1 = load();
    if (failed) throw new Error(`${failed} sends failed`);
    const s1 = await pgStats(stats);
    const acceptWal = await ownWal(stats, s0, s1);
    const keys1 = await prefixMemory(redis, prefix);
    const used1 = await usedMemory(redis);

    // ---- deliver (send + SES Send/Delivery events + counter folds)
    const worker = startChild('worker', {
      ...env,
      WORKER_METRICS_PORT: '0',
      SEND_CONCURRENCY: '16',
      DATABASE_POOL_SIZE: '20',
    });
    children.push(worker);
    // Start-up (tsx compiling) is not measured: from the first email sent.
    await until(async () => (await db.email.count({ where: { sentAt: { not: null } } })) > 0, 'the first send', 120_000);
    const workerCpu0 = cpuSeconds(worker.pid!);
    const sentBefore = await db.email.count({ where: { sentAt: { not: null } } });
    const t1 = Date.now();
    const load2 = load();
    await until(
      async () => (await db.email.count({ where: { latestStatus: 'DELIVERED' } })) === N + 50 && (await db.emailCounterDelta.count()) === 0,
      'every email delivered and counted',
    );
    const deliverSeconds = (Date.now() - t1) / 1000;
    const workerCpu = cpuSeconds(worker.pid!) - workerCpu0;
    const load3 = load();
    const s2 = await pgStats(stats);
    const deliverWal = await ownWal(stats, s1, s2);
    const delivered = await db.dailyEmailUsage.aggregate({ where: { teamId: team.id }, _sum: { delivered: true } });
    const measuredEmails = N + 50 - sentBefore; // the emails sent after the worker's CPU was first read

    const result = {
      emails: N,
      machine: { cores: os.cpus().length, model: os.cpus()[0]?.model },
      accept: {
        loadAverage: `${load0} → ${load1}`,
        seconds: acceptSeconds,
        emailsPerSecond: Math.round(N / acceptSeconds),
        apiCpuMsPerEmail: Number(((apiCpu * 1000) / N).toFixed(3)),
        emailsPerApiCoreSecond: Math.round(N / apiCpu),
        postgresPerEmail: perEmail(s0, s1),
        ownWalPerEmail: acceptWal,
        redisBytesPerQueuedEmail: Math.round((keys1 - keys0) / N),
        redisUsedMemoryDeltaPerEmail: Math.round((used1 - used0) / N),
      },
      deliver: {
        loadAverage: `${load2} → ${load3}`,
        seconds: deliverSeconds,
        emailsPerSecond: Math.round(measuredEmails / deliverSeconds),
        workerCpuMsPerEmail: Number(((workerCpu * 1000) / measuredEmails).toFixed(3)),
        emailsPerWorkerCoreSecond: Math.round(measuredEmails / workerCpu),
        postgresPerEmail: perEmail(s1, s2),
        ownWalPerEmail: deliverWal,
        sesMessages: ses.messages.length,
        countedDelivered: delivered._sum.delivered,
      },
      total: { postgresPerEmail: perEmail(s0, s2) },
    };
    console.log(JSON.stringify(result, null, 2));
    if (ses.messages.length !== N + 50 || delivered._sum.delivered !== N + 50) throw new Error('an email was lost or sent twice');
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await sleep(1000);
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await stats.end();
    await deleteRedisPrefix(redis, prefix).catch(() => undefined);
    redis.disconnect();
    await db.$disconnect();
    await ses.close();
    await dropDatabase(databaseUrl);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
