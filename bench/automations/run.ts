// Automations at scale (issue 45 §5), the real worker process (`apps/worker/src/main.ts`) on a fresh
// database, everything seeded with SQL (generate_series), nothing through the API:
//   enroll: one burst of N events (one statement) enrolling N contacts of team A into an automation
//           whose first step is a one-day wait: time from the burst to N runs (the runs' first steps
//           go on meanwhile, as they would);
//   timers: N runs waiting, due spread over one minute: drain time (first due to last fired) and the
//           lateness of each (its log entry's time minus its due time), p50/p99/max;
//   floor:  a bare BullMQ drain of N delayed jobs due over one minute, in this process, with the
//           worker's step concurrency and a processor that does nothing: the same figures.
// During enroll and timers, team B stores one event every 500 ms that its automation answers with
// an email: event stored to the message at the fake SES, p50/max (another team's sends, not stalled).
// The worker's RSS is sampled every 250 ms (peak per phase).
// Run: npx tsx bench/automations/run.ts [N=1000000] [waits=N] (the floor drains as many jobs as there are waits)
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import { createDb, type Db } from '@mailrail/platform/db/client';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { loadConfig } from '@mailrail/platform/config/load';
import { seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { createRedis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';
import { writeResult } from '../report-kit';
import { procStatusMb } from '../process-stats';

const N = Number(process.argv[2] ?? 1_000_000);
const TIMERS_N = Number(process.argv[3] ?? N); // at most N (the waits' contacts are the enrolled ones)
const FLOOR_N = TIMERS_N;
const root = path.resolve(__dirname, '../..');
const STEP_CONCURRENCY = 4; // AUTOMATION_STEP_CONCURRENCY's default, for the floor's worker too
const TIMEOUT_MS = Number(process.env.BENCH_AUTOMATIONS_TIMEOUT_MINUTES ?? 60) * 60_000;

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] : NaN;
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 50), p99: pct(s, 99), max: s[s.length - 1] ?? NaN };
};
const machine = () =>
  `${os.cpus().length} x ${os.cpus()[0].model}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load ${os.loadavg()[0].toFixed(2)}`;

async function insertAutomation(db: Db, teamId: number, name: string, status: string, def: unknown): Promise<string> {
  const id = `bench_${name}`;
  await db.$executeRawUnsafe(
    `INSERT INTO "Automation" (id, "teamId", name, status, "currentVersion", "enrollFromTxid", "createdAt", "updatedAt")
     VALUES ($1, $2, $3, $4::"AutomationStatus", 1, pg_current_xact_id()::text::bigint, now(), now())`,
    id,
    teamId,
    name,
    status,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "AutomationVersion" ("automationId", version, definition, "createdAt") VALUES ($1, 1, $2::jsonb, now())`,
    id,
    JSON.stringify(def),
  );
  return id;
}

/** Team B: one event every 500 ms, each answered by an email; latency from the event to the fake SES. */
let pingCount = 0;

function otherTeamPings(db: Db, ses: FakeSes, teamId: number, bookId: string) {
  const sentAt = new Map<string, number>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const i = ++pingCount;
      const email = `s${i}@quiet.example.net`;
      sentAt.set(email, Date.now());
      await db.$executeRawUnsafe(
        `INSERT INTO "Event" (id, "teamId", name, "contactId", "contactBookId", properties, source, "occurredAt", "createdAt")
         SELECT 'bping' || $3::int, $1, 'b.ping', c.id, $2, '{}', 'api', now(), now() FROM "Contact" c WHERE c."contactBookId" = $2 AND c.email = $4`,
        teamId,
        bookId,
        i,
        email,
      );
      await sleep(500);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await sleep(3000); // the last pings' emails
      const latencies: number[] = [];
      let missing = 0;
      for (const [email, t] of sentAt) {
        const m = ses.messages.find((x) => x.destination.to[0] === email);
        if (m) latencies.push(m.at - t);
        else missing++;
      }
      return { ...summary(latencies), missing };
    },
  };
}

function watchRss(pid: number) {
  let peak = 0;
  const t = setInterval(() => {
    try {
      peak = Math.max(peak, procStatusMb(pid, 'VmRSS'));
    } catch {
      /* gone */
    }
  }, 250);
  return {
    take() {
      const p = peak;
      peak = 0;
      return Math.round(p);
    },
    stop: () => clearInterval(t),
  };
}

async function until(what: string, probe: () => Promise<boolean>, everyMs = 500) {
  const t0 = Date.now();
  while (!(await probe())) {
    if (Date.now() - t0 > TIMEOUT_MS) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A bare BullMQ drain of `n` delayed jobs due over one minute from `t0`: lateness of each, drain time. */
async function bullmqFloor(config: ReturnType<typeof loadConfig>, n: number) {
  const connection = createRedis(config.redis, { forWorker: true });
  const prefix = `${config.REDIS_PREFIX}:floor`;
  const queue = new Queue('floor', { connection, prefix });
  const t0 = Date.now() + Math.max(20_000, n / 5); // room to add them all before the first is due
  const late = new Float64Array(n);
  let fired = 0;
  let last = 0;
  const add0 = Date.now();
  for (let i = 0; i < n; i += 5000) {
    const now = Date.now();
    await queue.addBulk(
      Array.from({ length: Math.min(5000, n - i) }, (_, j) => {
        const due = t0 + Math.floor(((i + j) * 60_000) / n);
        return { name: 'timer', data: { due }, opts: { delay: Math.max(0, due - now), removeOnComplete: true } };
      }),
    );
  }
  const addSeconds = (Date.now() - add0) / 1000;
  const worker = new Worker(
    'floor',
    async (job) => {
      const now = Date.now();
      late[fired++] = now - (job.data as { due: number }).due;
      last = now;
    },
    { connection, prefix, concurrency: STEP_CONCURRENCY },
  );
  await until('the floor to drain', async () => fired >= n, 200);
  await worker.close();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  connection.disconnect();
  return { n, addSeconds, drainSeconds: (last - t0) / 1000, lateMs: summary(Array.from(late.subarray(0, fired))) };
}

async function main() {
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, REDIS_PREFIX: prefix });
  const db = createDb(databaseUrl, 4);
  const ses = await startFakeSes();
  const a = await createTeam(db, 'Burst');
  const b = await createTeam(db, 'Quiet');
  const bDomain = await insertDomain(db, config.SECRET, {
    teamId: b.id,
    name: 'quiet.example.com',
    region: 'us-east-1',
    dkimSelector: 'usesend',
    verified: true,
  });
  void bDomain;
  const s0 = performance.now();
  const bookA = await seedContactBook(db, a.id, { subscribed: N }, { domain: 'burst.example.net' });
  const bookB = await seedContactBook(db, b.id, { subscribed: 5000 }, { domain: 'quiet.example.net' });
  await db.$executeRawUnsafe('VACUUM ANALYZE "Contact"');
  const seedContactsSeconds = (performance.now() - s0) / 1000;
  console.log(`seeded ${N} contacts in ${seedContactsSeconds.toFixed(1)} s; ${machine()}`);

  const enrollId = await insertAutomation(db, a.id, 'enroll', 'ACTIVE', {
    trigger: { type: 'event', event: 'burst' },
    reEntry: { mode: 'once' },
    steps: [
      { id: 'w', type: 'wait', seconds: 86_400 },
      { id: 'x', type: 'exit' },
    ],
  });
  await insertAutomation(db, b.id, 'ping', 'ACTIVE', {
    trigger: { type: 'event', event: 'b.ping' },
    reEntry: { mode: 'everyTime' },
    steps: [{ id: 's', type: 'sendEmail', from: 'Quiet <hi@quiet.example.com>', subject: 'Ping', html: '<p>Ping {{firstName}}</p>' }],
  });

  const worker: ChildProcess = spawn(
    process.execPath,
    [youngGenerationFlag('worker'), '--import', 'tsx', path.join(root, 'apps/worker/src/main.ts')],
    {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        REDIS_PREFIX: prefix,
        SES_ENDPOINT: ses.url,
        LOG_LEVEL: 'warn',
        SES_RATE_LIMIT: '1000',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  // A bench that fails must not leave its worker running (it would load the machine for others).
  process.on('exit', () => worker.kill('SIGKILL'));
  const rss = watchRss(worker.pid!);
  await sleep(6000); // start-up (tsx compile) is not the bench's time
  const idleRssMb = rss.take();

  // --- enroll: one burst of N events, one statement.
  const loadBefore = os.loadavg()[0];
  let pings = otherTeamPings(db, ses, b.id, bookB.id);
  await sleep(3000);
  const e0 = Date.now();
  await db.$executeRawUnsafe(
    `INSERT INTO "Event" (id, "teamId", name, "contactId", "contactBookId", properties, source, "occurredAt", "createdAt")
     SELECT 'ev' || lpad(i::text, 8, '0'), $1, 'burst', $2 || '_s' || lpad(i::text, 7, '0'), $2, '{}', 'api', now(), now()
       FROM generate_series(1, $3::int) AS i`,
    a.id,
    bookA.id,
    N,
  );
  const burstInsertSeconds = (Date.now() - e0) / 1000;
  const count = async (sql: string, id = enrollId) => Number((await db.$queryRawUnsafe<{ n: bigint }[]>(sql, id))[0].n);
  let enrolledAt = 0;
  await until(
    'every contact enrolled',
    async () => {
      const n = await count(`SELECT count(*) AS n FROM "AutomationRun" WHERE "automationId" = $1`);
      if (n >= N && !enrolledAt) enrolledAt = Date.now();
      return n >= N;
    },
    1000,
  );
  const enrollSeconds = (enrolledAt - e0) / 1000;
  console.log(`enrolled ${N} in ${enrollSeconds.toFixed(1)} s`);
  const enrollPings = await pings.stop();
  const enrollRssMb = rss.take();
  // Out of the way of the timer phase (its runs wait a day anyway).
  await db.$executeRawUnsafe(`UPDATE "Automation" SET status = 'PAUSED' WHERE id = $1`, enrollId);

  // --- timers: N runs waiting, due over one minute, seeded while their automation is paused.
  const timerId = await insertAutomation(db, a.id, 'timers', 'PAUSED', {
    trigger: { type: 'event', event: 'never' },
    steps: [{ id: 'w', type: 'wait', seconds: 60 }],
  });
  const lead = Math.max(30_000, TIMERS_N / 4);
  const t0 = Date.now() + lead;
  const st0 = Date.now();
  await db.$executeRawUnsafe(
    `INSERT INTO "AutomationRun" (id, "teamId", "automationId", version, "contactId", "entryKey", "sourceId", context, status, "stepId", "dueAt",
                                  "waitSince", "enteredAt", "updatedAt")
     SELECT 'tr' || lpad(i::text, 8, '0'), $1, $2, 1, $3 || '_s' || lpad(i::text, 7, '0'), 'once', 'seed',
            jsonb_build_object('due', $4::bigint + (i - 1)::bigint * 60000 / $5::int), 'ACTIVE', 'w',
            to_timestamp(($4::bigint + (i - 1)::bigint * 60000 / $5::int) / 1000.0), to_timestamp(($4::bigint + (i - 1)::bigint * 60000 / $5::int - 60000) / 1000.0), now(), now()
       FROM generate_series(1, $5::int) AS i`,
    a.id,
    timerId,
    bookA.id,
    t0,
    TIMERS_N,
  );
  await db.$executeRawUnsafe('ANALYZE "AutomationRun"');
  console.log(
    `seeded ${TIMERS_N} waits in ${((Date.now() - st0) / 1000).toFixed(1)} s; first due in ${((t0 - Date.now()) / 1000).toFixed(1)} s`,
  );
  if (Date.now() > t0 - 2000) console.log('WARNING: the seed ran past the first due time; lateness includes it');
  await sleep(Math.max(0, t0 - 2000 - Date.now()));
  pings = otherTeamPings(db, ses, b.id, bookB.id);
  await db.$executeRawUnsafe(`UPDATE "Automation" SET status = 'ACTIVE' WHERE id = $1`, timerId);
  await until(
    'every wait fired',
    async () => (await count(`SELECT count(*) AS n FROM "AutomationRun" WHERE "automationId" = $1 AND status = 'ACTIVE'`, timerId)) === 0,
    2000,
  );
  const timerPings = await pings.stop();
  const timerRssMb = rss.take();
  const lateRows = await db.$queryRawUnsafe<{ ms: number }[]>(
    // The due time is in the run's context: the step clears waitSince and dueAt when it runs.
    `SELECT (extract(epoch FROM l.at) * 1000)::float8 - (r.context->>'due')::float8 AS ms
       FROM "AutomationRun" r JOIN "AutomationRunLog" l ON l."runId" = r.id WHERE r."automationId" = $1`,
    timerId,
  );
  const [{ last }] = await db.$queryRawUnsafe<{ last: Date }[]>(
    `SELECT max(l.at) AS last FROM "AutomationRunLog" l JOIN "AutomationRun" r ON r.id = l."runId" WHERE r."automationId" = $1`,
    timerId,
  );
  const timers = { drainSeconds: (last.getTime() - t0) / 1000, lateMs: summary(lateRows.map((r) => r.ms)) };
  console.log(`timers: ${JSON.stringify(timers)}`);
  worker.kill('SIGTERM');
  await new Promise((r) => worker.once('exit', r));
  rss.stop();

  // --- floor: a bare BullMQ delayed-job drain, same count (or FLOOR_N), same concurrency.
  const floor = await bullmqFloor(config, FLOOR_N);
  console.log(`floor: ${JSON.stringify(floor)}`);
  const loadAfter = os.loadavg()[0];

  const report = {
    contacts: N,
    waits: TIMERS_N,
    machine: machine(),
    loadBefore,
    loadAfter,
    seedContactsSeconds,
    enroll: {
      burstInsertSeconds,
      enrollSeconds,

      workerPeakRssMb: enrollRssMb,
      otherTeamEventToSesMs: enrollPings,
    },
    timers: { ...timers, workerPeakRssMb: timerRssMb, otherTeamEventToSesMs: timerPings },
    floor,
    workerIdleRssMb: idleRssMb,
  };
  console.log(JSON.stringify(report, null, 2));
  writeResult(
    'automations',
    {
      enrollSeconds,
      enrollWorkerPeakRssMb: enrollRssMb,
      timersDrainSeconds: timers.drainSeconds,
      timersLateP50Ms: timers.lateMs.p50,
      timersLateP99Ms: timers.lateMs.p99,
      timersLateMaxMs: timers.lateMs.max,
      timersWorkerPeakRssMb: timerRssMb,
      floorDrainSeconds: floor.drainSeconds,
      floorLateP99Ms: floor.lateMs.p99,
      floorLateMaxMs: floor.lateMs.max,
      otherTeamMaxMsDuringEnroll: enrollPings.max,
      otherTeamMaxMsDuringTimers: timerPings.max,
    },
    report,
  );
  await ses.close();
  await db.$disconnect();
  const redis = createRedis(config.redis);
  await deleteRedisPrefix(redis, prefix).catch(() => undefined);
  redis.disconnect();
  await dropDatabase(databaseUrl);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
