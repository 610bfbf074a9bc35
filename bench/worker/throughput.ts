// Worker throughput against the local SES endpoint (aws-ses-v2-local), compared with the
// endpoint's own ceiling measured in the same run by a bare SDK loop with the same concurrency.
// The worker runs as its own process (as in production) so its RSS can be read from /proc.
// Run: npx tsx bench/worker/throughput.ts [emails per round=5000] [concurrency=16] [rounds=3]
// BENCH_WORKER_CONCURRENCY overrides the worker's SEND_CONCURRENCY (to explore; the comparison
// at equal concurrency is the default). BENCH_PROFILE=<dir> writes CPU profiles of the worker.
// BENCH_WORKER_NODE_ARGS adds Node flags to the worker (e.g. --trace-gc); BENCH_WORKER_STDOUT=1
// shows the worker's standard output (where --trace-gc writes).
// The worker runs compiled, as in production (`npm run build`'s esbuild bundle, built into
// dist/bench/ at start); BENCH_WORKER_SCRIPT=<file.js> runs another build (e.g. an older commit's).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { createDb } from '@mailrail/platform/db/client';
import { createQueueFactory, queueNames } from '@mailrail/platform/queue/queues';
import { createRedis } from '@mailrail/platform/redis/client';
import { createSesClient } from '@mailrail/platform/ses/client';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertAndEnqueueEmails, type EmailDraft } from '@mailrail/domain/emails/create-emails';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { loadConfig } from '@mailrail/platform/config/load';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { buildRawMessage } from '../../apps/worker/src/send/build-mime';
import { writeResult } from '../report-kit';
import { buildAll } from '../../scripts/build';
import { cpuSeconds, procStatusMb, storesCpuSeconds } from '../process-stats';
import { freePort } from '@mailrail/testing/free-port';
import { setTimeout as sleep } from 'node:timers/promises';

const N = Number(process.argv[2] ?? 5000);
const C = Number(process.argv[3] ?? 16);
const ROUNDS = Number(process.argv[4] ?? 3);
const root = path.resolve(__dirname, '../..');

/**
 * Read and write system calls a process has made so far (/proc/<pid>/io): every socket write and
 * read of a round trip to PostgreSQL, Redis or SES is one, so their count per email shows the round
 * trips a change removed, whatever the machine's load (CPU time on a loaded machine does not).
 */
function syscalls(pid: number | 'self'): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/syscr: (\d+)/.exec(io)![1]) + Number(/syscw: (\d+)/.exec(io)![1]);
}

const html = `<html><body><h1>Hello {{name}}</h1>${'<p>Some paragraph of a typical transactional email, with a link to <a href="https://example.com/x">example</a>.</p>'.repeat(12)}</body></html>`;
const text = 'Hello, this is the plain text part of a typical transactional email.\n'.repeat(12);

/**
 * A call again when the emulator reset the connection (on a loaded machine it happens now and
 * then to a kept-alive socket): the floor should not die of it. Counted and printed.
 */
let loopResets = 0;
async function sendRetryingResets(send: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await send();
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= 3 || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw err;
      loopResets++;
    }
  }
}

async function bareSdkLoop(
  endpoint: string,
  count = N,
  // The SDK's defaults (a bare loop); the worker's clients cache their middleware stack, and one
  // loop with that setting is run for reference (docs/worker.md, "CPU per email").
  opts: { cacheMiddleware?: boolean } = {},
): Promise<{
  rate: number;
  cpuMsPerEmail: number;
  sesCpuMsPerEmail: number;
  syscallsPerEmail: number;
  pgCpuMsPerEmail: number;
  redisCpuMsPerEmail: number;
}> {
  const client = createSesClient({ SES_ENDPOINT: endpoint }, 'us-east-1', {
    timeoutMs: 10_000,
    maxSockets: C,
    cacheMiddleware: opts.cacheMiddleware,
  });
  const raw = await buildRawMessage({
    id: 'bench',
    from: 'Bench <bench@bench.example.com>',
    to: ['to@example.net'],
    cc: [],
    replyTo: [],
    subject: 'Benchmark',
    html,
    text,
    headers: null,
    attachments: null,
    unsubUrl: null,
    inReplyToSesId: null,
  });
  await sendRetryingResets(() =>
    client.send(new SendEmailCommand({ Content: { Raw: { Data: raw } }, Destination: { ToAddresses: ['warm@example.net'] } })),
  );
  let next = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const ses0 = cpuSeconds(sesPid);
  const calls0 = syscalls('self');
  const stores0 = storesCpuSeconds();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < count) {
        next++;
        // Each message is built like the worker builds it, so the loop pays for MIME too.
        const body = await buildRawMessage({
          id: `bench${next}`,
          from: 'Bench <bench@bench.example.com>',
          to: [`to${next}@example.net`],
          cc: [],
          replyTo: [],
          subject: 'Benchmark',
          html,
          text,
          headers: null,
          attachments: null,
          unsubUrl: null,
          inReplyToSesId: null,
        });
        await sendRetryingResets(() =>
          client.send(new SendEmailCommand({ Content: { Raw: { Data: body } }, Destination: { ToAddresses: [`to${next}@example.net`] } })),
        );
      }
    }),
  );
  const rate = count / ((performance.now() - t0) / 1000);
  const cpu = process.cpuUsage(cpu0);
  const sesCpu = cpuSeconds(sesPid) - ses0;
  const calls = syscalls('self') - calls0;
  const stores = storesCpuSeconds();
  client.destroy();
  return {
    rate,
    pgCpuMsPerEmail: ((stores.postgres - stores0.postgres) * 1000) / count,
    redisCpuMsPerEmail: ((stores.redis - stores0.redis) * 1000) / count,
    cpuMsPerEmail: (cpu.user + cpu.system) / 1000 / count,
    sesCpuMsPerEmail: (sesCpu * 1000) / count,
    syscallsPerEmail: calls / count,
  };
}

let sesPid = 0;

async function main() {
  const load = os.loadavg()[0];
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const sesPort = await freePort();
  const endpoint = `http://127.0.0.1:${sesPort}`;
  const children: ChildProcess[] = [];
  const ses = spawn(
    process.execPath,
    [path.join(root, 'node_modules/aws-ses-v2-local/dist/cli.js'), '--port', String(sesPort), '--host', '127.0.0.1'],
    { stdio: 'ignore' },
  );
  children.push(ses);
  sesPid = ses.pid!;
  const config = loadConfig({ DATABASE_URL: databaseUrl, REDIS_PREFIX: prefix, SES_ENDPOINT: endpoint, LOG_LEVEL: 'silent' });
  const db = createDb(databaseUrl, 4);
  const redis = createRedis(config.REDIS_URL);
  const queues = createQueueFactory(redis, prefix);
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${endpoint}/store`)).ok) break;
      } catch {
        if (i > 100) throw new Error('local SES did not start');
      }
      await sleep(100);
    }
    const clear = () => fetch(`${endpoint}/clear-store`, { method: 'POST' });

    await bareSdkLoop(endpoint, 500); // warm the emulator up (JIT) before measuring anything
    await clear();

    const team = await createTeam(db, 'Bench');
    const domain = await insertDomain(db, config.SECRET, {
      teamId: team.id,
      name: 'bench.example.com',
      region: 'us-east-1',
      dkimSelector: 'usesend',
      verified: true,
    });
    let workerScript = process.env.BENCH_WORKER_SCRIPT;
    if (!workerScript) {
      await buildAll(path.join(root, 'dist/bench'));
      workerScript = path.join(root, 'dist/bench/worker/main.js');
    }
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    // The young-generation flag every start path passes (docs/worker.md, "Memory"); without it the
    // worker ran with V8's larger default and did less garbage collection than in production.
    // BENCH_WORKER_NODE_ARGS adds Node flags (a later --max-semi-space-size wins).
    const workerNodeArgs = [youngGenerationFlag('worker'), ...(process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean)];
    const workerConcurrency = Number(process.env.BENCH_WORKER_CONCURRENCY ?? C);

    // One worker round: N stored emails, a fresh worker process, timed from first to last sentAt.
    const workerRound = async (round: number) => {
      const subject = `Benchmark round ${round}`;
      const drafts: EmailDraft[] = Array.from({ length: N }, (_, i) => ({
        teamId: team.id,
        domainId: domain.id,
        region: 'us-east-1',
        source: 'API',
        from: 'Bench <bench@bench.example.com>',
        to: [`to${i}@example.net`],
        subject,
        html,
        text,
      }));
      for (let i = 0; i < N; i += 1000) await insertAndEnqueueEmails({ db, queues }, drafts.slice(i, i + 1000));
      // Emails stored together share send jobs (SEND_GROUP_SIZE a job): the round's jobs, not its emails, are counted below.
      const sendQueue = queues.get(queueNames.send('us-east-1', 'transactional'));
      const unfinishedJobs = async () =>
        Object.values(await sendQueue.getJobCounts('wait', 'active', 'delayed', 'prioritized')).reduce((a, b) => a + b, 0);
      const roundJobs = await unfinishedJobs();
      const completedBefore = (await sendQueue.getJobCounts('completed')).completed;
      const worker = spawn(process.execPath, [...workerNodeArgs, ...profile, path.resolve(workerScript)], {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          REDIS_PREFIX: prefix,
          SES_ENDPOINT: endpoint,
          LOG_LEVEL: 'warn',
          SES_RATE_LIMIT: '1000000',
          // The send path only, as the loop: with a loopback endpoint the worker would otherwise
          // also simulate and process SES's Send and Delivery events (docs/events.md), work the
          // loop does not do, and Delivery moves emails past SENT.
          SES_EVENT_SIMULATOR: 'off',
          SEND_CONCURRENCY: String(workerConcurrency),
          DATABASE_POOL_SIZE: String(workerConcurrency + 4),
        },
        stdio: ['ignore', process.env.BENCH_WORKER_STDOUT ? 'inherit' : 'ignore', 'inherit'],
      });
      children.push(worker);
      let peakRss = 0;
      let idleRss = NaN;
      let cpu0 = NaN;
      let sesCpu0 = NaN;
      let calls0 = NaN;
      let stores0 = storesCpuSeconds();
      let roundStarted = false;
      // Progress is read from the send queue's counts in Redis (a few O(1) reads): counting the
      // round's sent rows in PostgreSQL every 100 ms scanned the table and, by the third round,
      // cost PostgreSQL about 0.2 ms of CPU per email, charged to the worker on these 2 cores.
      for (;;) {
        await sleep(100);
        const rss = procStatusMb(worker.pid!, 'VmRSS');
        peakRss = Math.max(peakRss, rss);
        const unfinished = await unfinishedJobs();
        // The baseline is the last reading before the round's first job ended (the queue's
        // completed count, O(1) as well). Read while the unfinished count stayed at the round's,
        // it moved into the round: an email that leaves its group job gets a job of its own and
        // kept the count up, and the CPU per email then read 0.13 ms.
        if (!roundStarted && (unfinished < roundJobs || (await sendQueue.getJobCounts('completed')).completed > completedBefore)) {
          roundStarted = true;
        }
        if (!roundStarted) {
          idleRss = rss;
          cpu0 = cpuSeconds(worker.pid!);
          sesCpu0 = cpuSeconds(sesPid);
          calls0 = syscalls(worker.pid!);
          stores0 = storesCpuSeconds();
        }
        // Every job has ended, and a job ends once its email's acceptance is written.
        if (unfinished === 0 && (await db.email.count({ where: { subject, sentAt: { not: null } } })) >= N) break;
      }
      const cpuMsPerEmail = ((cpuSeconds(worker.pid!) - cpu0) * 1000) / N;
      const sesCpuMsPerEmail = ((cpuSeconds(sesPid) - sesCpu0) * 1000) / N;
      const syscallsPerEmail = (syscalls(worker.pid!) - calls0) / N;
      const stores = storesCpuSeconds();
      const pgCpuMsPerEmail = ((stores.postgres - stores0.postgres) * 1000) / N;
      const redisCpuMsPerEmail = ((stores.redis - stores0.redis) * 1000) / N;
      const span = await db.$queryRaw<{ first: Date; last: Date }[]>`
        SELECT min("sentAt") AS first, max("sentAt") AS last FROM "Email" WHERE subject = ${subject}`;
      const rate = (N - 1) / ((span[0].last.getTime() - span[0].first.getTime()) / 1000);
      // An email the worker had to retry (a reset connection: SEND_RETRY_BASE_MS later) stretches the round.
      const retried = await db.email.count({ where: { subject, sendAttempts: { gt: 1 } } });
      const stored = ((await (await fetch(`${endpoint}/store`)).json()) as { emails: unknown[] }).emails.length;
      worker.kill('SIGTERM');
      await new Promise((r) => worker.on('exit', r));
      await clear();
      return {
        rate,
        peakRss,
        idleRss,
        cpuMsPerEmail,
        sesCpuMsPerEmail,
        pgCpuMsPerEmail,
        redisCpuMsPerEmail,
        syscallsPerEmail,
        stored,
        retried,
      };
    };

    // Loop, worker, loop, worker, ..., loop: each worker round is compared with the loops on
    // either side of it, so a change in the machine's load hits both sides alike.
    const loops: Awaited<ReturnType<typeof bareSdkLoop>>[] = [];
    const workers: Awaited<ReturnType<typeof workerRound>>[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      loops.push(await bareSdkLoop(endpoint));
      await clear();
      workers.push(await workerRound(round));
    }
    loops.push(await bareSdkLoop(endpoint));
    await clear();
    const tunedLoop = await bareSdkLoop(endpoint, N, { cacheMiddleware: true });
    const ratios = workers.map((w, i) => w.rate / ((loops[i].rate + loops[i + 1].rate) / 2));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const events = await db.emailEvent.count({ where: { status: 'SENT' } });

    console.log(
      `Machine: ${os.cpus().length} cores (${os.cpus()[0].model}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
    );
    console.log(
      `Command: npx tsx bench/worker/throughput.ts ${N} ${C} ${ROUNDS}${process.env.BENCH_WORKER_CONCURRENCY ? ` (BENCH_WORKER_CONCURRENCY=${workerConcurrency})` : ''}; worker: node ${workerNodeArgs.join(' ')} ${path.relative(root, workerScript)}`,
    );
    console.log(`Load average at start (1 min): ${load.toFixed(2)}`);
    console.log('');
    // CPU per email: the worker process against the loop process of the loops on either side.
    console.log(
      '| round | bare SDK loop before | worker | bare SDK loop after | worker / mean of loops | CPU per email: loops / worker | worker CPU / loop CPU |',
    );
    console.log('|---|---|---|---|---|---|---|');
    workers.forEach((w, i) => {
      const loopCpu = (loops[i].cpuMsPerEmail + loops[i + 1].cpuMsPerEmail) / 2;
      console.log(
        `| ${i + 1} | ${loops[i].rate.toFixed(0)}/s | ${w.rate.toFixed(0)}/s | ${loops[i + 1].rate.toFixed(0)}/s | ${ratios[i].toFixed(2)} | ${loopCpu.toFixed(2)} ms / ${w.cpuMsPerEmail.toFixed(2)} ms | ${(w.cpuMsPerEmail / loopCpu).toFixed(2)} |`,
      );
    });
    console.log('');
    console.log('| measure | value |');
    console.log('|---|---|');
    console.log(`| emails per round / rounds | ${N} / ${ROUNDS} |`);
    console.log(`| SES calls in flight (SDK loop callers; SEND_CONCURRENCY) | ${C}; ${workerConcurrency} |`);
    console.log(`| worker rate / bare SDK loop rate, median of rounds (issue 21 target ≥ 0.8) | ${median(ratios).toFixed(2)} |`);
    const lastLoop = loops[loops.length - 1];
    console.log(
      `| for reference, once after the last loop: the same loop with the worker's SDK setting (cacheMiddleware) / the bare loop before it | ${tunedLoop.rate.toFixed(0)}/s / ${lastLoop.rate.toFixed(0)}/s (${tunedLoop.cpuMsPerEmail.toFixed(2)} / ${lastLoop.cpuMsPerEmail.toFixed(2)} ms CPU per email) |`,
    );
    console.log(
      `| worker RSS idle / peak | ${workers[0].idleRss.toFixed(0)} MB / ${Math.max(...workers.map((w) => w.peakRss)).toFixed(0)} MB |`,
    );
    const cpuRatios = workers.map((w, i) => w.cpuMsPerEmail / ((loops[i].cpuMsPerEmail + loops[i + 1].cpuMsPerEmail) / 2));
    console.log(
      `| CPU ms per email, mean: bare SDK loop process / worker process (worker / loop, median of rounds) | ${mean(loops.map((l) => l.cpuMsPerEmail)).toFixed(2)} ms / ${mean(workers.map((w) => w.cpuMsPerEmail)).toFixed(2)} ms (${median(cpuRatios).toFixed(2)}) |`,
    );
    console.log(
      `| CPU per email in the emulator: bare loop / worker | ${mean(loops.map((l) => l.sesCpuMsPerEmail)).toFixed(2)} ms / ${mean(workers.map((w) => w.sesCpuMsPerEmail)).toFixed(2)} ms |`,
    );
    console.log(
      `| CPU per email in PostgreSQL / Redis: bare loop / worker | ${mean(loops.map((l) => l.pgCpuMsPerEmail)).toFixed(2)} / ${mean(loops.map((l) => l.redisCpuMsPerEmail)).toFixed(2)} ms; ${mean(workers.map((w) => w.pgCpuMsPerEmail)).toFixed(2)} / ${mean(workers.map((w) => w.redisCpuMsPerEmail)).toFixed(2)} ms |`,
    );
    console.log(
      `| read and write system calls per email: bare SDK loop process / worker process | ${mean(loops.map((l) => l.syscallsPerEmail)).toFixed(1)} / ${mean(workers.map((w) => w.syscallsPerEmail)).toFixed(1)} |`,
    );
    console.log(`| SENT events / messages in the SES store | ${events} / ${workers.reduce((a, w) => a + w.stored, 0)} |`);
    console.log(
      `| calls retried after a reset connection: bare loop / worker (emails with more than one attempt) | ${loopResets} / ${workers.reduce((a, w) => a + w.retried, 0)} |`,
    );
    writeResult(
      'worker',
      {
        ratioToCeiling: median(ratios),
        idleRssMb: workers[0].idleRss,
        peakRssMb: Math.max(...workers.map((w) => w.peakRss)),
        workerCpuMsPerEmail: mean(workers.map((w) => w.cpuMsPerEmail)),
        workerSyscallsPerEmail: mean(workers.map((w) => w.syscallsPerEmail)),
        loopSyscallsPerEmail: mean(loops.map((l) => l.syscallsPerEmail)),
        loopCpuMsPerEmail: mean(loops.map((l) => l.cpuMsPerEmail)),
        workerPgCpuMsPerEmail: mean(workers.map((w) => w.pgCpuMsPerEmail)),
        workerRedisCpuMsPerEmail: mean(workers.map((w) => w.redisCpuMsPerEmail)),
      },
      {
        emailsPerRound: N,
        concurrency: C,
        workerConcurrency,
        rounds: ROUNDS,
        loopRates: loops.map((l) => l.rate),
        cachedMiddlewareLoopRate: tunedLoop.rate,
        workerRates: workers.map((w) => w.rate),
      },
    );
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await deleteRedisPrefix(redis, prefix).catch(() => undefined);
    await queues.closeAll();
    redis.disconnect();
    await db.$disconnect();
    await dropDatabase(databaseUrl);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
