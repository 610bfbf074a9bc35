// The partitioned email log (issue 22, docs/email-log.md) on ~5M emails across 30 days:
//   1. EXPLAIN of every hot query (the production functions, explained by auto_explain with
//      log_analyze): the partitions each one read, and its time;
//   2. sends/s with partitioning against without, in one run: the same database holds an
//      unpartitioned copy of "Email" and "EmailEvent" in schema `plain` (same rows, same indexes),
//      reached through search_path; one send = the hot path's statements for one email (insert
//      with its event, worker claim, SES acceptance, one SES Delivery event), C sends at once,
//      rounds alternating the two layouts;
//   3. dropping the oldest day (both tables) while sends run: errors seen by the senders, the
//      drop's longest lock wait + run time, lock timeouts.
//   npx tsx bench/partitions/run.ts [--emails 5000000] [--days 30] [--sends 1500] [--rounds 3] [--concurrency 8] [--keep]
import os from 'node:os';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { insertEmailRows, prepareEmails } from '@mailrail/domain/emails/create-emails';
import { EMAIL_ID_HEADER } from '@mailrail/domain/emails/headers';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { emailSearchTextSql } from '@mailrail/domain/sql/email-search';
import { recordSesAcceptances } from '@mailrail/domain/sql/ses-acceptance';
import { loadConfig } from '@mailrail/platform/config/load';
import { PLAN_EACH_RUN_SESSION_OPTIONS, PrismaClient, UTC_SESSION_OPTIONS } from '@mailrail/platform/db/client';
import { createSqlPool, poolExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { explainingPool } from '@mailrail/testing/partition-scans';
import type { ApiDeps } from '../../apps/api/src/deps';
import { emailLogPage } from '../../apps/api/src/dashboard/email-log/email-log';
import { getEmail } from '../../apps/api/src/emails/get-email';
import { listEmailsQuery, streamEmailList } from '../../apps/api/src/emails/list-emails';
import { countEmailsSince } from '../../apps/worker/src/campaigns/run-campaign-window';
import { maintainEmailPartitions } from '@mailrail/domain/email-log/email-partitions';
import { createDayPartitions, createEmailIdPrefixFunction, withIndexesRebuilt } from '../email-seed';
import { claimEmailForSending } from '../../apps/worker/src/send/send-email';
import { writeResult } from '../report-kit';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const EMAILS = arg('emails', 5_000_000);
const DAYS = arg('days', 30);
const SENDS = arg('sends', 1500);
const ROUNDS = arg('rounds', 3);
const CONCURRENCY = arg('concurrency', 8);
const KEEP = process.argv.includes('--keep');
const DAY = 86_400_000;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const secs = (t0: number) => ((performance.now() - t0) / 1000).toFixed(0);

async function main() {
  console.log(`machine: nproc=${os.cpus().length}, node ${process.version}; load average at start: ${load()}`);
  console.log(`emails=${EMAILS} days=${DAYS} sends=${SENDS}/round rounds=${ROUNDS} concurrency=${CONCURRENCY}`);
  await prepareTemplateDatabase();
  const url = await createTestDatabase();
  console.log(`database ${url.replace(/^.*\//, '')}`);
  const admin = new Pool({
    connectionString: url,
    max: 1,
    options: `${UTC_SESSION_OPTIONS} -c maintenance_work_mem=256MB`,
    idleTimeoutMillis: 0,
  });
  const sql = createSqlPool(url, CONCURRENCY + 2, () => undefined);
  const now = new Date();
  const figures: Record<string, number> = {};
  try {
    // Partitions for the seeded days and a week ahead, as the worker's job makes them.
    await createDayPartitions(sql, DAYS);
    const [{ id: teamId }] = await sql.query<{ id: number }>(`INSERT INTO "Team" (name, "updatedAt") VALUES ('bench', now()) RETURNING id`);

    let t0 = performance.now();
    await createEmailIdPrefixFunction(sql);
    await withIndexesRebuilt(poolExecutor(admin), 'public', ['Email', 'EmailEvent'], async () => {
      // Delivered emails spread evenly over the last DAYS days (the newest a minute ago), one event each.
      await admin.query(
        `INSERT INTO "Email" (id, "teamId", "from", "to", subject, text, "latestStatus", "sesEmailId", "sentAt", "createdAt", "updatedAt", "searchText", "toAddresses")
         SELECT bench_email_id_prefix(at) || lpad(to_hex(g), 12, '0'), $1, 'shop@example.com', s."to", s.subject, 'Thanks for your order.',
                'DELIVERED', 'ses-' || g, at, at, at, ${emailSearchTextSql('s.')}, s."to"
           FROM (SELECT g, 'Order #' || g AS subject, ARRAY['c' || g % 200000 || '@example.org'] AS "to",
                        now() - interval '1 minute' - make_interval(secs => ($2::int - g) * ($3::float8 * 86400 / $2::int)) AS at
                   FROM generate_series(1, $2::int) g) s`,
        [teamId, EMAILS, DAYS],
      );
      await admin.query(`INSERT INTO "EmailEvent" ("emailId", status, "createdAt") SELECT id, 'DELIVERED', "createdAt" FROM "Email"`);
    });
    console.log(`seeded ${EMAILS} emails and events (partitioned) in ${secs(t0)} s; load ${load()}`);

    t0 = performance.now();
    await admin.query(`CREATE SCHEMA plain`);
    await admin.query(`CREATE TABLE plain."Email" (LIKE public."Email" INCLUDING DEFAULTS)`);
    await admin.query(`CREATE TABLE plain."EmailEvent" (LIKE public."EmailEvent" INCLUDING DEFAULTS)`);
    await admin.query(`INSERT INTO plain."Email" SELECT * FROM public."Email"`);
    await admin.query(`INSERT INTO plain."EmailEvent" SELECT * FROM public."EmailEvent"`);
    const { rows: defs } = await admin.query<{ def: string }>(
      `SELECT replace(replace(pg_get_indexdef(indexrelid), 'ON ONLY public.', 'ON plain.'), 'ON public.', 'ON plain.') AS def FROM pg_index
        WHERE indrelid IN ('public."Email"'::regclass, 'public."EmailEvent"'::regclass)`,
    );
    for (const d of defs) await admin.query(d.def);
    await admin.query('VACUUM ANALYZE public."Email", public."EmailEvent", plain."Email", plain."EmailEvent"');
    console.log(`copied them into unpartitioned plain."Email"/"EmailEvent" with the same indexes in ${secs(t0)} s; load ${load()}`);

    // 1. Pruning of the hot queries.
    const explaining = explainingPool(url);
    const db = new PrismaClient({ adapter: new PrismaPg(explaining.pool) });
    // The defaults of the API's settings (the list counts up to EMAIL_LIST_COUNT_CAP).
    const deps = { db, config: loadConfig({}) } as unknown as ApiDeps;
    const auth = { teamId, apiKeyId: null, permission: 'FULL' as const, domainId: null, rateLimit: 0 };
    const dayStart = (n: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - n * DAY);
    const [{ id: emailId }] = await sql.query<{ id: string }>(
      `SELECT id FROM "Email" WHERE "createdAt" >= $1 AND "createdAt" < $2 AND "teamId" = $3 LIMIT 1`,
      [dayStart(10), dayStart(9), teamId],
    );
    const firstPage = await emailLogPage(deps, auth, { limit: 50, startDate: dayStart(3), endDate: dayStart(1) });
    const hot: [string, () => Promise<unknown>][] = [
      ['GET /emails/:id (email + events)', () => getEmail(deps, auth, emailId)],
      [
        'GET /emails, 2-day range',
        () =>
          streamEmailList(deps, auth, listEmailsQuery.parse({ startDate: dayStart(3).toISOString(), endDate: dayStart(1).toISOString() }), {
            destroyed: false,
            statusCode: 0,
            write: () => true,
            end: () => undefined,
            once: () => undefined,
            setHeader: () => undefined,
          } as never),
      ],
      ['dashboard log, 2-day range', () => emailLogPage(deps, auth, { limit: 50, startDate: dayStart(3), endDate: dayStart(1) })],
      ['dashboard log, next page (cursor)', () => emailLogPage(deps, auth, { limit: 50, cursor: firstPage.nextCursor! })],
      [
        'worker claim',
        () =>
          claimEmailForSending(poolExecutor(explaining.pool), emailId, {
            leaseSeconds: 1,
            inDoubtWaitSeconds: { marketing: 0, transactional: 0 },
          }),
      ],
      ['SES acceptance', () => recordSesAcceptances(poolExecutor(explaining.pool), [{ emailId, messageId: 'bench-accept' }])],
      [
        'SES Delivery event (header id)',
        () =>
          processSesEventJob(
            { db },
            {
              snsMessageId: 'bench-sns',
              topicArn: 't',
              message: JSON.stringify({
                eventType: 'Delivery',
                mail: { messageId: 'bench-accept', timestamp: now.toISOString(), headers: [{ name: EMAIL_ID_HEADER, value: emailId }] },
                delivery: { timestamp: now.toISOString(), recipients: ['c@example.org'] },
              }),
            },
          ),
      ],
      [
        'campaign window count since 1 h',
        () => countEmailsSince(poolExecutor(explaining.pool), 'none', new Date(now.getTime() - 3_600_000)),
      ],
    ];
    console.log('\nEXPLAIN (auto_explain, analyze): partitions read by each hot query');
    const partitions = (
      await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = '"Email"'::regclass`)
    )[0].n;
    const pruning: Record<string, string[]> = {};
    for (const [name, work] of hot) {
      try {
        await work(); // warm
        const t = performance.now();
        const read = await explaining.partitionsRead(work);
        pruning[name] = read;
        console.log(
          `  ${name}: ${read.length} of ${partitions} Email partitions (+ events) read, ${(performance.now() - t).toFixed(1)} ms: ${read.join(', ')}`,
        );
      } catch (err) {
        // On a loaded machine an explained transaction may outlive Prisma's 5 s: reported, not fatal.
        console.log(`  ${name}: failed: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    figures.emailPartitions = partitions;
    figures.mostPartitionsReadByAHotQuery = Math.max(...Object.values(pruning).map((r) => r.filter((n) => n.startsWith('Email_')).length));
    await db.$disconnect();
    await explaining.pool.end();

    // 2. Sends/s, partitioned against plain, alternating.
    // Both on sessions that plan each run, as the worker's pool is (apps/worker/src/deps.ts): a
    // generic plan of a named statement would lock and open every partition on each run.
    const layouts = {
      partitioned: { sql: createSqlPool(url, CONCURRENCY, () => undefined, { planEachRun: true }) },
      plain: {
        sql: poolExecutor(
          new Pool({ connectionString: url, max: CONCURRENCY, options: `${PLAN_EACH_RUN_SESSION_OPTIONS} -c search_path=plain,public` }),
        ),
      },
    };
    const prisma = {
      partitioned: new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: CONCURRENCY, options: UTC_SESSION_OPTIONS }) }),
      plain: new PrismaClient({
        adapter: new PrismaPg({ connectionString: url, max: CONCURRENCY, options: `${UTC_SESSION_OPTIONS} -c search_path=plain,public` }),
      }),
    };
    let seq = 0;
    // Milliseconds spent in each step, per layout: where a partitioned send loses its time.
    const STEPS = ['insert', 'claim', 'acceptance', 'sesEvent'] as const;
    const stepMs = { partitioned: new Map<string, number>(), plain: new Map<string, number>() };
    const timed = async <T>(layout: keyof typeof layouts, step: (typeof STEPS)[number], work: Promise<T>): Promise<T> => {
      const t = performance.now();
      const out = await work;
      stepMs[layout].set(step, (stepMs[layout].get(step) ?? 0) + performance.now() - t);
      return out;
    };
    async function oneSend(layout: keyof typeof layouts): Promise<void> {
      const exec: SqlExecutor = layouts[layout].sql;
      const at = new Date();
      const prepared = prepareEmails(
        [
          {
            teamId,
            domainId: null,
            region: 'us-east-1',
            source: 'API',
            from: 'a@example.com',
            to: ['b@example.org'],
            subject: 'hi',
            html: '<p>hi</p>',
          },
        ],
        at,
      );
      const id = prepared[0].created.id;
      await timed(layout, 'insert', insertEmailRows(exec, prepared, at));
      await timed(
        layout,
        'claim',
        claimEmailForSending(exec, id, { leaseSeconds: 60, inDoubtWaitSeconds: { marketing: 0, transactional: 0 } }),
      );
      const messageId = `bench-${layout}-${++seq}`;
      await timed(layout, 'acceptance', recordSesAcceptances(exec, [{ emailId: id, messageId }]));
      const message = JSON.stringify({
        eventType: 'Delivery',
        mail: { messageId, timestamp: at.toISOString(), headers: [{ name: EMAIL_ID_HEADER, value: id }] },
        delivery: { timestamp: at.toISOString(), recipients: ['b@example.org'] },
      });
      const outcome = await timed(
        layout,
        'sesEvent',
        processSesEventJob({ db: prisma[layout] }, { snsMessageId: `sns-${messageId}`, topicArn: 't', message }),
      );
      if (outcome !== 'processed') throw new Error(`SES event ${outcome}`);
    }
    const errors: unknown[] = [];
    async function sendsPerSecond(layout: keyof typeof layouts, n: number, during?: () => Promise<void>): Promise<number> {
      let left = n;
      const t = performance.now();
      const loops = Array.from({ length: CONCURRENCY }, async () => {
        while (left-- > 0) await oneSend(layout).catch((err: unknown) => void errors.push(err));
      });
      await Promise.all([...loops, during?.()]);
      return n / ((performance.now() - t) / 1000);
    }
    await sendsPerSecond('partitioned', 200);
    await sendsPerSecond('plain', 200);
    const ratios: number[] = [];
    console.log('\nsends/s (insert + claim + acceptance + SES event per email)');
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 ? (['plain', 'partitioned'] as const) : (['partitioned', 'plain'] as const);
      const rate: Record<string, number> = {};
      for (const layout of order) rate[layout] = await sendsPerSecond(layout, SENDS);
      ratios.push(rate.partitioned / rate.plain);
      console.log(
        `  round ${r + 1}: partitioned ${rate.partitioned.toFixed(0)}/s, plain ${rate.plain.toFixed(0)}/s, ratio ${(rate.partitioned / rate.plain).toFixed(3)}; load ${load()}`,
      );
    }
    // Per step, the mean ms per send over all rounds (each step waits on its connection, so with C
    // sends at once these are latencies, not CPU).
    const perStep = STEPS.map((step) => {
      const [a, b] = (['partitioned', 'plain'] as const).map((l) => (stepMs[l].get(step) ?? 0) / (SENDS * ROUNDS + 200));
      return `${step} ${a.toFixed(2)} / ${b.toFixed(2)} ms`;
    });
    console.log(`  mean per send, partitioned / plain: ${perStep.join('; ')}`);
    const sorted = [...ratios].sort((a, b) => a - b);
    figures.sendsRatioMedian = sorted[Math.floor(sorted.length / 2)];
    figures.sendErrors = errors.length;

    // 3. Drop the oldest day while sends run.
    const before = errors.length;
    let report: Awaited<ReturnType<typeof maintainEmailPartitions>> | undefined;
    const rate = await sendsPerSecond('partitioned', SENDS, async () => {
      await new Promise((r) => setTimeout(r, 500));
      report = await maintainEmailPartitions(sql, { daysAhead: 7, bodyRetentionDays: 0, retentionDays: DAYS - 1 }, now);
    });
    figures.dropDuringSendsErrors = errors.length - before;
    figures.dropLongestLockWaitMs = report!.longestDropLockWaitMs;
    figures.dropLongestTotalMs = report!.longestDropMs;
    figures.dropLockTimeouts = report!.lockTimeouts;
    figures.partitionsDropped = report!.dropped.length;
    console.log(
      `\ndrop under load: dropped ${report!.dropped.join(', ')}; longest lock wait ${report!.longestDropLockWaitMs.toFixed(1)} ms, ` +
        `longest drop (lock wait + drop + commit) ${report!.longestDropMs.toFixed(1)} ms; ` +
        `lock timeouts ${report!.lockTimeouts}; send errors during the run ${figures.dropDuringSendsErrors}; ${rate.toFixed(0)} sends/s; load ${load()}`,
    );
    if (errors.length) console.log('first error:', errors[0]);
    for (const p of Object.values(prisma)) await p.$disconnect();
    for (const l of Object.values(layouts)) await l.sql.end();
    console.log('\nfigures', figures);
    writeResult('partitions', figures, {
      emails: EMAILS,
      days: DAYS,
      sends: SENDS,
      rounds: ROUNDS,
      concurrency: CONCURRENCY,
      ratios,
      pruning,
      load: load(),
    });
  } finally {
    await admin.end();
    await sql.end();
    if (KEEP) console.log(`kept ${url}`);
    else await dropDatabase(url);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
