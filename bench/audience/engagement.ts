// Engagement segment conditions (docs/audience.md, "Email activity") on a team of 100,000 contacts
// and 1,000,000 emails over 60 days: the builder's live count (POST /segments/preview over HTTP,
// under SEGMENT_PREVIEW_TIMEOUT_MS) for each kind of condition, the count's plan (EXPLAIN ANALYZE),
// and the one-contact evaluator automations use (contactMatchesFilter), next to a floor measured in
// the same run: the count of the book with no condition. The activity rows are what the SES event
// path writes for those emails (one per address, the latest delivery, open and click), built here
// in one statement from the seeded emails.
//   npx tsx bench/audience/engagement.ts [--contacts 100000] [--emails 1000000] [--runs 10]
import http from 'node:http';
import os from 'node:os';
import { Client } from 'pg';
import { contactMatchesFilter, segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { segmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { seedContacts } from '@mailrail/testing/contact-seed';
import { startBenchApi } from '../bench-api';
import { createDayPartitions, createEmailIdPrefixFunction, withIndexesRebuilt } from '../email-seed';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CONTACTS = arg('contacts', 100_000);
const EMAILS = arg('emails', 1_000_000);
const RUNS = arg('runs', 10);
const DAYS = 60;

const fmt = (n: number) => n.toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const one = (operator: string, value: unknown): SegmentFilter =>
  segmentFilter.parse({ match: 'all', conditions: [{ field: 'emailActivity', operator, value }] });

async function main() {
  const api = await startBenchApi({ DATABASE_POOL_SIZE: '10', API_RATE_LIMIT: '0' });
  const { databaseUrl, deps, base, config } = api;
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    console.log(`machine: nproc=${os.cpus().length}, ${os.cpus()[0].model}, node ${process.version}; load at start: ${load()}`);
    const team = await createTeam(deps.db, 'bench');
    const { apiKey } = await createApiKey(deps.db, { teamId: team.id });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = (path: string, body: unknown) =>
      new Promise<{ text: string; ms: number }>((resolve, reject) => {
        const payload = Buffer.from(JSON.stringify(body));
        const t = performance.now();
        const req = http.request(
          `${base}${path}`,
          {
            method: 'POST',
            agent,
            headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Content-Length': String(payload.length) },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString('utf8')));
            res.on('end', () =>
              res.statusCode === 200
                ? resolve({ text, ms: performance.now() - t })
                : reject(new Error(`${path}: ${res.statusCode} ${text}`)),
            );
          },
        );
        req.on('error', reject);
        req.end(payload);
      });

    const book = JSON.parse((await post('/api/v1/contactBooks', { name: 'bench' })).text).id as string;
    const now = new Date();
    const t = performance.now();
    await seedContacts((text, params) => pg.query(text, params), book, CONTACTS, now);
    // Emails to user<k>@d<k % 10>.example.com, k in 1..1.5 × CONTACTS (a third of the addresses are
    // no contact of the book), spread over DAYS days; one in three opened, one in twenty clicked, one
    // in fifty bounced (no activity), the rest delivered.
    await createDayPartitions(deps.sql, DAYS);
    await createEmailIdPrefixFunction(deps.sql);
    const spread = Math.round(CONTACTS * 1.5);
    await withIndexesRebuilt(deps.sql, 'public', ['Email'], async () => {
      await deps.sql.execute(
        `INSERT INTO "Email" (id, "teamId", "from", "to", "toAddresses", "recipientAddresses", subject, text, "latestStatus", "countedFlags", "createdAt", "updatedAt")
         SELECT bench_email_id_prefix(at) || 'e' || lpad(to_hex(g), 11, '0'), $1, 'a@bench.test', ARRAY[addr], ARRAY[addr], ARRAY[addr], 'Hi', 'x',
                (CASE WHEN g % 50 = 0 THEN 'BOUNCED' WHEN g % 20 = 0 THEN 'CLICKED' WHEN g % 3 = 0 THEN 'OPENED' ELSE 'DELIVERED' END)::"EmailStatus",
                CASE WHEN g % 50 = 0 THEN 17 WHEN g % 20 = 0 THEN 15 WHEN g % 3 = 0 THEN 7 ELSE 3 END, at, at
           FROM generate_series(1, $2::int) AS g,
                LATERAL (SELECT 1 + (g::bigint * 7919 % $3::int) AS k) kk,
                LATERAL (SELECT 'user' || k || '@d' || (k % 10) || '.example.com' AS addr,
                                $4::timestamptz - make_interval(secs => ($2::int - g) * ($5::float8 * 86400 / $2::int)) AS at) t`,
        [team.id, EMAILS, spread, now, DAYS],
      );
    });
    await pg.query(
      `INSERT INTO "EmailActivity" ("teamId", address, "lastDeliveredAt", "lastOpenedAt", "lastClickedAt")
       SELECT "teamId", "toAddresses"[1], max("createdAt") FILTER (WHERE "countedFlags" & 2 <> 0),
              max("createdAt") FILTER (WHERE "countedFlags" & 12 <> 0), max("createdAt") FILTER (WHERE "countedFlags" & 8 <> 0)
         FROM "Email" WHERE "teamId" = $1 AND "countedFlags" & 14 <> 0 GROUP BY 1, 2`,
      [team.id],
    );
    // One campaign sent to the whole book, opened by one recipient in three, clicked by one in twenty.
    const campaign = (
      await deps.db.campaign.create({ data: { id: 'bench-campaign', teamId: team.id, name: 'C', from: 'a@bench.test', subject: 'S' } })
    ).id;
    await pg.query(
      `INSERT INTO "CampaignEmail" ("campaignId", "contactId", email, status, "createdAt", "updatedAt", "openedAt", "clickedAt")
       SELECT $1, id, email, 'SENT', $2, $2, CASE WHEN n % 3 = 0 OR n % 20 = 0 THEN $2::timestamptz END, CASE WHEN n % 20 = 0 THEN $2::timestamptz END
         FROM (SELECT id, email, row_number() OVER (ORDER BY id) AS n FROM "Contact" WHERE "contactBookId" = $3) c`,
      [campaign, now, book],
    );
    await pg.query('VACUUM ANALYZE "Contact", "EmailActivity", "CampaignEmail"');
    await pg.query('ANALYZE "Email"');
    const [{ activity }] = (await pg.query('SELECT count(*)::int AS activity FROM "EmailActivity"')).rows;
    console.log(
      `seeded ${CONTACTS} contacts, ${EMAILS} emails over ${DAYS} days, ${activity} activity rows in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );

    const floor: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const s = performance.now();
      await pg.query('SELECT count(*) FROM "Contact" WHERE "contactBookId" = $1', [book]);
      if (i >= 2) floor.push(performance.now() - s);
    }
    console.log(`floor: count(*) of the book (SQL): p50 ${fmt(median(floor))} ms`);

    const cases: [string, SegmentFilter][] = [
      ['openedWithin 30', one('openedWithin', 30)],
      ['notOpenedWithin 30 (win-back)', one('notOpenedWithin', 30)],
      ['clickedWithin 7', one('clickedWithin', 7)],
      ['deliveredWithin 365', one('deliveredWithin', 365)],
      ['openedCampaign', one('openedCampaign', campaign)],
      [
        'subscribed AND openedWithin 30 AND NOT clickedCampaign',
        segmentFilter.parse({
          match: 'all',
          conditions: [
            { field: 'subscribed', operator: 'equals', value: true },
            { field: 'emailActivity', operator: 'openedWithin', value: 30 },
            { field: 'emailActivity', operator: 'notClickedCampaign', value: campaign },
          ],
        }),
      ],
    ];
    const scope = { teamId: team.id, now };
    let worst = 0;
    for (const [label, filter] of cases) {
      const body = { filter };
      const first = JSON.parse((await post(`/api/v1/contactBooks/${book}/segments/preview`, body)).text);
      const wall: number[] = [];
      for (let i = 0; i < RUNS; i++) wall.push((await post(`/api/v1/contactBooks/${book}/segments/preview`, body)).ms);
      const params: unknown[] = [book];
      const where = segmentFilterSql(filter, 'c', scope, params);
      const plan = await pg.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS OFF) SELECT count(*), count(*) FILTER (WHERE c.subscribed) FROM "Contact" c WHERE c."contactBookId" = $1 AND ${where}`,
        params,
      );
      const lines = plan.rows.map((r) => r['QUERY PLAN']);
      const nodes = lines.filter((l) => /Join|Scan/.test(l)).map((l) => l.split(' (cost=')[0].trim());
      worst = Math.max(worst, median(wall));
      console.log(
        `${label}: ${first.count} contacts; preview p50 ${fmt(median(wall))} ms, max ${fmt(Math.max(...wall))} ms; ${lines.at(-1)}\n    ${nodes.join(' | ')}`,
      );
    }
    console.log(`worst preview p50 ${fmt(worst)} ms against SEGMENT_PREVIEW_TIMEOUT_MS ${config.SEGMENT_PREVIEW_TIMEOUT_MS} ms`);

    // The one-contact evaluator (automation branches): 200 contacts spread over the book.
    const ids = (await pg.query<{ id: string }>(`SELECT id FROM "Contact" WHERE "contactBookId" = $1 ORDER BY md5(id) LIMIT 200`, [book]))
      .rows;
    const filter = cases[5][1];
    const each: number[] = [];
    for (const { id } of ids) {
      const s = performance.now();
      await contactMatchesFilter(deps.sql, scope, id, filter);
      each.push(performance.now() - s);
    }
    console.log(
      `contactMatchesFilter (the three-condition filter), 200 contacts: p50 ${fmt(median(each))} ms, max ${fmt(Math.max(...each))} ms`,
    );
    console.log(`load at end: ${load()}`);
  } finally {
    await pg.end();
    await api.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
