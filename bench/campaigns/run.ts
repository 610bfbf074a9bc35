// Campaign engine benchmark: one campaign to a 100,000-contact book with no window, sent by the
// real worker process (`apps/worker/src/main.ts`) to the fake SES v2 endpoint over HTTP.
// Measures, from the campaign's start time: recipients written, all recipients enqueued (every
// Email row and send job created), all messages accepted at SES, campaign SENT; and the worker's
// peak RSS from /proc.
// Run: npx tsx bench/campaigns/run.ts [contacts=100000] [sesRatePerSecond=4000]
// BENCH_WORKER_DIST=dist: the compiled worker (built first by `npm run build`'s buildAll), as in
// production and as `npm run bench` runs it. The worker gets the flag `npm run start:worker` passes.
// BENCH_CAMPAIGN_TIMEOUT_MINUTES (default 30): a loaded machine needs more for 100,000 contacts.
import { spawn } from 'node:child_process';

import os from 'node:os';
import path from 'node:path';
import { createDb } from '@mailrail/platform/db/client';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { loadConfig } from '@mailrail/platform/config/load';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { startFakeSes } from '@mailrail/testing/fake-ses';
import { createRedis } from '@mailrail/platform/redis/client';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { writeResult } from '../report-kit';
import { procStatusMb } from '../process-stats';
import { buildAll } from '../../scripts/build';
import { setTimeout as sleep } from 'node:timers/promises';
import { youngGenerationFlag } from '@mailrail/platform/process/memory-flags';

const N = Number(process.argv[2] ?? 100_000);
const RATE = Number(process.argv[3] ?? 4000);
const root = path.resolve(__dirname, '../..');

const TIMEOUT_MS = Number(process.env.BENCH_CAMPAIGN_TIMEOUT_MINUTES ?? 30) * 60_000;

const rssMb = (pid: number) => procStatusMb(pid, 'VmRSS');

async function main() {
  if (process.env.BENCH_WORKER_DIST) await buildAll(path.join(root, process.env.BENCH_WORKER_DIST));
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, REDIS_PREFIX: prefix });
  const db = createDb(databaseUrl, 4);
  const ses = await startFakeSes();
  // The fake keeps every raw message; the benchmark only needs the count.
  let accepted = 0;
  ses.setRule(() => {
    accepted++;
    return undefined;
  });
  const team = await createTeam(db, 'Bench');
  const domain = await insertDomain(db, config.SECRET, {
    teamId: team.id,
    name: 'bench.example.com',
    region: 'us-east-1',
    dkimSelector: 'usesend',
    verified: true,
  });
  const seed0 = performance.now();
  const book = await seedContactBook(db, team.id, { subscribed: N }, { domain: 'people.example.net', variables: ['Company'] });
  await db.$executeRawUnsafe('VACUUM ANALYZE "Contact"');
  console.log(`seeded ${N} contacts in ${((performance.now() - seed0) / 1000).toFixed(1)} s`);

  // BENCH_WORKER_NODE_ARGS: V8 flags for the worker process only (heap experiments), e.g. --max-old-space-size=128
  // The young-generation flag every start path passes (docs/worker.md, "Memory").
  const workerNodeArgs = [youngGenerationFlag('worker'), ...(process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  // BENCH_WORKER_DIST=dist: the compiled worker of `npm run build` (as in production) instead of tsx.
  const entry = process.env.BENCH_WORKER_DIST
    ? [path.join(root, process.env.BENCH_WORKER_DIST, 'worker/main.js')]
    : ['--import', 'tsx', path.join(root, 'apps/worker/src/main.ts')];
  const worker = spawn(process.execPath, [...workerNodeArgs, ...entry], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_PREFIX: prefix,
      SES_ENDPOINT: ses.url,
      LOG_LEVEL: 'warn',
      // A campaign alone takes the whole region rate (the share only caps it while transactional
      // mail waits), so the campaign is limited to RATE.
      SES_RATE_LIMIT: String(RATE),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await sleep(4000); // worker start-up (tsx compile) is not campaign time
  const idleRss = rssMb(worker.pid!);

  const start = new Date();
  const id = await insertScheduledCampaign(db, {
    teamId: team.id,
    domainId: domain.id,
    contactBookId: book.id,
    from: 'News <news@bench.example.com>',
    scheduledAt: start,
    html: `<html><body><h1>Hello {{firstName,fallback=there}}</h1>${'<p>A paragraph of a typical newsletter, with a <a href="https://example.com/x">link</a>.</p>'.repeat(10)}<p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p></body></html>`,
  });
  const t0 = start.getTime();
  const marks: Record<string, number> = {};
  let peakRss = idleRss;
  let anonAtPeak = procStatusMb(worker.pid!, 'RssAnon');
  for (;;) {
    await sleep(250);
    const rss = rssMb(worker.pid!);
    if (rss > peakRss) {
      peakRss = rss;
      anonAtPeak = procStatusMb(worker.pid!, 'RssAnon');
    }
    const elapsed = Date.now() - t0;
    if (!marks.recipients || !marks.enqueued) {
      const [c] = await db.$queryRawUnsafe<{ ready: boolean; pending: number }[]>(
        `SELECT "recipientsReadyAt" IS NOT NULL AS ready,
                (SELECT count(*)::int FROM "CampaignEmail" WHERE "campaignId" = $1 AND status = 'PENDING') AS pending
           FROM "Campaign" WHERE id = $1`,
        id,
      );
      if (c.ready && !marks.recipients) marks.recipients = elapsed;
      if (c.ready && c.pending === 0 && !marks.enqueued) marks.enqueued = elapsed;
    }
    if (accepted >= N && !marks.sesAll) marks.sesAll = elapsed;
    if (marks.sesAll) {
      const c = await db.campaign.findUniqueOrThrow({ where: { id } });
      if (c.status === 'SENT') {
        marks.campaignSent = elapsed;
        console.log(`counters: total=${c.total} sent=${c.sent}`);
        break;
      }
    }
    if (elapsed > TIMEOUT_MS) throw new Error('benchmark timed out');
  }
  worker.kill('SIGTERM');
  await new Promise((r) => worker.on('exit', r));
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    JSON.stringify(
      {
        contacts: N,
        sesRateLimitForMarketing: RATE,
        recipientsWritten: s(marks.recipients),
        allEnqueued: s(marks.enqueued),
        allAcceptedAtSes: s(marks.sesAll),
        campaignSent: s(marks.campaignSent),
        sesMessagesPerSecond: Math.round(N / (marks.sesAll / 1000)),
        workerRssMb: { idle: Math.round(idleRss), peak: Math.round(peakRss) },
        fakeSesMessages: ses.messages.length,
        machine: `${os.cpus().length} x ${os.cpus()[0].model}, load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      },
      null,
      2,
    ),
  );
  writeResult(
    'campaigns',
    {
      recipientsSeconds: marks.recipients / 1000,
      enqueuedSeconds: marks.enqueued / 1000,
      allAcceptedSeconds: marks.sesAll / 1000,
      sentSeconds: marks.campaignSent / 1000,
      workerIdleRssMb: idleRss,
      workerPeakRssMb: peakRss,
      workerPeakRssAnonMb: anonAtPeak,
    },
    { contacts: N, sesRateLimitForMarketing: RATE, fakeSesMessages: ses.messages.length, worker: entry.join(' '), workerNodeArgs },
  );
  await ses.close();
  await db.$disconnect();
  const redis = createRedis(config.REDIS_URL);
  await deleteRedisPrefix(redis, prefix).catch(() => undefined);
  redis.disconnect();
  await dropDatabase(databaseUrl);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
