// SNS notification intake: how many signed SES events per second POST /api/ses/notifications
// accepts (verified and queued), then how fast the worker applies them.
// Run: npx tsx bench/events/ingest.ts   (BENCH_EVENTS=30000 BENCH_CONNECTIONS=32 by default)
import { writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '@mailrail/platform/db/client';
import { createQueueFactory, queueNames } from '@mailrail/platform/queue/queues';
import { createRedis } from '@mailrail/platform/redis/client';
import { newId } from '@mailrail/platform/ids';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { registerSesEventProcessing } from '../../apps/worker/src/ses-events/register';
import { foldCounterDeltas } from '@mailrail/domain/ses-events/counter-deltas';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { createTestSnsSigner, sesEventMessage, TEST_TOPIC_ARN } from '../../apps/api/src/ses-notifications/testing/sns-signer';
import { writeResult } from '../report-kit';
import { autocannon, machine, spawnTs, stop, waitForUrl } from './bench-kit';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 30_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PORT = 3918;
const PREFIX = `bench_events_ingest_${process.pid}`;
// A baseline run (BENCH_PATH=/baseline) must not pass for the intake's figures.
const RESULT_NAME = process.env.BENCH_PATH ? 'ingest-baseline' : 'ingest';

async function main() {
  await prepareTemplateDatabase();
  const url = await createTestDatabase();
  const db = createDb(url, 10);
  const redis = createRedis('redis://127.0.0.1:6379');
  const certFile = path.join(os.tmpdir(), `bench-sns-${process.pid}.pem`);
  const signer = await createTestSnsSigner();
  writeFileSync(certFile, signer.certPem);
  const server = spawnTs(
    'bench/events/ingest-server.ts',
    {
      DATABASE_URL: url,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      REDIS_PREFIX: PREFIX,
      BENCH_CERT_FILE: certFile,
      SNS_TOPIC_ARNS: TEST_TOPIC_ARN,
    },
    process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean),
  );
  try {
    // One email per event, so the processing phase has real work (status, event row, counters).
    const team = await db.team.create({ data: { name: 'bench' } });
    const ids = Array.from({ length: EVENTS }, () => newId());
    await db.$executeRawUnsafe(
      `INSERT INTO "Email" (id, "teamId", "from", "to", subject, "latestStatus", "sesEmailId", "updatedAt")
       SELECT id, $1, 'a@example.com', ARRAY['b@example.org'], 's', 'SENT', 'ses-' || id, now() FROM unnest($2::text[]) id`,
      team.id,
      ids,
    );

    let t = performance.now();
    const bodies = ids.map((id) => JSON.stringify(signer.notification(sesEventMessage('Delivery', { sesMessageId: `ses-${id}` }))));
    console.log(
      `signed ${EVENTS} SNS messages in ${((performance.now() - t) / 1000).toFixed(1)} s (client-side preparation, not measured)`,
    );
    await waitForUrl(`http://127.0.0.1:${PORT}/health`);

    const queue = createQueueFactory(redis, PREFIX).get(queueNames.sesEvents);
    const cpu = async () => ((await (await fetch(`http://127.0.0.1:${PORT}/cpu`)).json()) as { cpuMs: number }).cpuMs;
    // Warm-up (JIT, connections, certificate cache) with messages that are not part of the run.
    for (let i = 0; i < 200; i++) {
      await fetch(`http://127.0.0.1:${PORT}/api/ses/notifications`, {
        method: 'POST',
        body: JSON.stringify(signer.notification(sesEventMessage('Send', { sesMessageId: 'warm-up' }))),
      });
    }
    await queue.drain(true); // the warm-up jobs are not part of the run
    const cpuBefore = await cpu();
    let next = 0;
    // Timed here: autocannon's own duration of a fixed-count run is rounded up to its 1 s sampling tick.
    const intakeStarted = performance.now();
    const result = await autocannon({
      url: `http://127.0.0.1:${PORT}${process.env.BENCH_PATH ?? '/api/ses/notifications'}`,
      connections: CONNECTIONS,
      amount: EVENTS,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
          setupRequest: (req: Record<string, unknown>) => ({ ...req, body: bodies[next++ % bodies.length] }),
        },
      ],
    });
    const intakeSeconds = (performance.now() - intakeStarted) / 1000;
    const serverCpuMs = (await cpu()) - cpuBefore;
    const accepted = result.requests.total - result.non2xx;
    const queued = await queue.count();
    console.log(`machine: ${machine()}\n`);
    console.log('| phase | events | time | rate | latency p50 / p99 |\n|---|---|---|---|---|');
    console.log(
      `| intake (verify + enqueue), autocannon -c ${CONNECTIONS} | ${accepted} accepted, ${result.non2xx} refused, ${queued} queued | ${intakeSeconds.toFixed(2)} s | ${(accepted / intakeSeconds).toFixed(0)} events/s | ${result.latency.p50} / ${result.latency.p99} ms |`,
    );
    console.log(
      `| intake, server CPU only | ${accepted} | ${(serverCpuMs / 1000).toFixed(1)} s CPU | ${((accepted / serverCpuMs) * 1000).toFixed(0)} events per CPU-second | ${(serverCpuMs / accepted).toFixed(3)} ms CPU per event |`,
    );
    await stop(server);
    // Written now so that a run without processing has its file; processing adds its rate below.
    const figures = {
      acceptedPerSec: accepted / intakeSeconds,
      refused: result.non2xx,
      serverCpuMsPerEvent: serverCpuMs / accepted,
      eventsPerCpuSecond: (accepted / serverCpuMs) * 1000,
    };
    const details = { events: EVENTS, connections: CONNECTIONS, path: process.env.BENCH_PATH ?? '/api/ses/notifications' };
    writeResult(RESULT_NAME, figures, details);

    if (process.env.BENCH_SKIP_PROCESSING) return;
    // Processing: the worker drains the queue (status, event row, once-per-email counters).
    const workerRedis = createRedis('redis://127.0.0.1:6379', { forWorker: true });
    t = performance.now();
    const worker = registerSesEventProcessing({ connection: workerRedis, prefix: PREFIX, db, concurrency: 20 });
    while ((await queue.getJobCountByTypes('waiting', 'active', 'delayed', 'prioritized')) > 0)
      await new Promise((r) => setTimeout(r, 100));
    const took = (performance.now() - t) / 1000;
    await worker.close();
    workerRedis.disconnect();
    const delivered = await db.email.count({ where: { teamId: team.id, latestStatus: 'DELIVERED' } });
    // The counters are written in batches: the worker's periodic fold (not running here) adds them.
    await foldCounterDeltas(prismaExecutor(db), 20_000);
    const [{ counted }] = await db.$queryRawUnsafe<{ counted: bigint }[]>(
      `SELECT COALESCE(sum(delivered), 0) AS counted FROM "DailyEmailUsage" WHERE "teamId" = $1`,
      team.id,
    );
    console.log(
      `| processing (worker, concurrency 20, one process) | ${delivered} emails DELIVERED, counter ${counted} | ${took.toFixed(1)} s | ${(delivered / took).toFixed(0)} events/s | |`,
    );
    writeResult(RESULT_NAME, { ...figures, processedPerSec: delivered / took }, details);
    await queue.close();
  } finally {
    await stop(server);
    await deleteRedisPrefix(redis, PREFIX).catch(() => undefined);
    redis.disconnect();
    await db.$disconnect();
    await dropDatabase(url);
    rmSync(certFile, { force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
