// Segment counts on a 1,000,000-contact book (issue 20: ≤ 300 ms for an indexed field, ≤ 2 s for a
// `properties` condition), next to a floor measured in the same run: a plain count(*) of the book.
// Runs a real API (express on a local port, in this process) against its own fresh database and
// times POST /segments/preview over HTTP (the builder's live count: count + subscribedCount + the
// first 10 contacts). Also streams the CSV export of the whole book and reports this process's RSS
// growth, which stays flat if the export is bounded in memory.
//   npx tsx bench/audience/segments.ts [--contacts 1000000] [--runs 10] [--no-export]
//   (node --expose-gc --import tsx bench/audience/segments.ts ... also reports the heap retained after the export)
import http from 'node:http';
import os from 'node:os';
import { Client } from 'pg';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { segmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { writeResult } from '../report-kit';
import { seedContacts } from '@mailrail/testing/contact-seed';
import { startBenchApi } from '../bench-api';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CONTACTS = arg('contacts', 1_000_000);
const RUNS = arg('runs', 10);
const EXPORT = !process.argv.includes('--no-export');

const fmt = (n: number) => n.toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const one = (field: string, operator: string, value?: unknown): SegmentFilter =>
  segmentFilter.parse({ match: 'all', conditions: [{ field, operator, ...(value === undefined ? {} : { value }) }] });

/** The cases timed: [figure key or null, label, filter]. */
function cases(now: Date): [string | null, string, SegmentFilter][] {
  const monthAgo = new Date(now.getTime() - 30 * 86_400_000).toISOString();
  return [
    ['indexedSubscribedP50Ms', 'subscribed equals true (~90 % of the book)', one('subscribed', 'equals', true)],
    ['indexedEmailPrefixP50Ms', "email startsWith 'user123' (~11,000 rows)", one('email', 'startsWith', 'user123')],
    ['indexedCreatedAtP50Ms', 'createdAt gt 30 days ago (~4 %)', one('createdAt', 'gt', monthAgo)],
    [null, "email contains '99999' (trigram)", one('email', 'contains', '99999')],
    ['propertyEqualsP50Ms', "properties.plan equals 'pro' (50 %)", one('properties.plan', 'equals', 'pro')],
    ['propertyNumberP50Ms', 'properties.age gt 80 (numbers, ~10 %)', one('properties.age', 'gt', 80)],
    [null, "properties.city in ['Oslo', 'Lima'] (10 %)", one('properties.city', 'in', ['Oslo', 'Lima'])],
    [
      'mixedP50Ms',
      'subscribed AND (plan = pro OR city = Oslo) AND createdAt gt a year ago',
      segmentFilter.parse({
        match: 'all',
        conditions: [
          { field: 'subscribed', operator: 'equals', value: true },
          {
            match: 'any',
            conditions: [
              { field: 'properties.plan', operator: 'equals', value: 'pro' },
              { field: 'properties.city', operator: 'equals', value: 'Oslo' },
            ],
          },
          { field: 'createdAt', operator: 'gt', value: new Date(now.getTime() - 365 * 86_400_000).toISOString() },
        ],
      }),
    ],
  ];
}

async function main() {
  const api = await startBenchApi({ DATABASE_POOL_SIZE: '10' });
  const { databaseUrl, deps, base } = api;
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  const figures: Record<string, number> = {};
  try {
    const team = await createTeam(deps.db, 'bench');
    const { apiKey } = await createApiKey(deps.db, { teamId: team.id });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const call = (method: string, path: string, body?: unknown) =>
      new Promise<{ text: string; ms: number; bytes: number }>((resolve, reject) => {
        const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
        const t = performance.now();
        const req = http.request(
          `${base}${path}`,
          {
            method,
            agent,
            headers: {
              Authorization: `Bearer ${apiKey}`,
              'Content-Type': 'application/json',
              ...(payload ? { 'Content-Length': String(payload.length) } : {}),
            },
          },
          (res) => {
            let bytes = 0;
            let head = '';
            res.on('data', (c: Buffer) => {
              bytes += c.length;
              if (head.length < 100_000) head += c.toString('utf8');
            });
            res.on('end', () => {
              const ms = performance.now() - t;
              if (res.statusCode !== 200) reject(new Error(`${method} ${path}: ${res.statusCode} ${head.slice(0, 300)}`));
              else resolve({ text: head, ms, bytes });
            });
          },
        );
        req.on('error', reject);
        req.end(payload);
      });

    console.log(`machine: nproc=${os.cpus().length}, ${os.cpus()[0].model}, node ${process.version}; load at start: ${load()}`);
    const book = JSON.parse((await call('POST', '/api/v1/contactBooks', { name: 'bench' })).text).id as string;
    const now = new Date();
    let t = performance.now();
    await seedContacts((text, params) => pg.query(text, params), book, CONTACTS, now);
    console.log(`seeded ${CONTACTS} contacts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    t = performance.now();
    await pg.query('VACUUM ANALYZE "Contact"');
    console.log(`vacuum analyze in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    // The floor: the cheapest count of the whole book PostgreSQL can do (an index-only scan).
    const floor: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const s = performance.now();
      await pg.query('SELECT count(*) FROM "Contact" WHERE "contactBookId" = $1', [book]);
      if (i >= 2) floor.push(performance.now() - s);
    }
    figures.floorCountP50Ms = median(floor);
    console.log(`floor: SELECT count(*) of the book (SQL, no HTTP): p50 ${fmt(median(floor))} ms`);

    for (const [key, label, filter] of cases(now)) {
      const body = { filter };
      const first = JSON.parse((await call('POST', `/api/v1/contactBooks/${book}/segments/preview`, body)).text);
      await call('POST', `/api/v1/contactBooks/${book}/segments/preview`, body); // warm-up
      const wall: number[] = [];
      for (let i = 0; i < RUNS; i++) wall.push((await call('POST', `/api/v1/contactBooks/${book}/segments/preview`, body)).ms);
      // The plan of the count, to see which index (if any) served it.
      const params: unknown[] = [book];
      const where = segmentFilterSql(filter, 'c', { teamId: team.id, now }, params);
      const plan = await pg.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT count(*), count(*) FILTER (WHERE c.subscribed) FROM "Contact" c WHERE c."contactBookId" = $1 AND ${where}`,
        params,
      );
      const scans = plan.rows
        .map((r) => r['QUERY PLAN'])
        .filter((l) => /Scan/.test(l))
        .map((l) => l.split(' (cost=')[0].trim());
      const sorted = [...wall].sort((a, b) => a - b);
      console.log(
        `${label}: count ${first.count} (subscribed ${first.subscribedCount}); preview wall ms p50 ${fmt(median(wall))}, max ${fmt(sorted[sorted.length - 1])} | ${scans.join('; ')}`,
      );
      if (key) figures[key] = median(wall);
    }
    figures.indexedWorstP50Ms = Math.max(figures.indexedSubscribedP50Ms, figures.indexedEmailPrefixP50Ms, figures.indexedCreatedAtP50Ms);
    figures.propertyWorstP50Ms = Math.max(figures.propertyEqualsP50Ms, figures.propertyNumberP50Ms);

    // The contacts list's additions on the same book: search (contains in email, first or last
    // name) and keyset paging deep into the book.
    const lastIds = await pg.query<{ id: string }>(
      'SELECT id FROM "Contact" WHERE "contactBookId" = $1 ORDER BY id DESC OFFSET 1000 LIMIT 1',
      [book],
    );
    for (const [key, label, query] of [
      ['searchP50Ms', "contacts list search 'user12345' (limit 50)", '?search=user12345&limit=50'],
      ['searchNameP50Ms', "contacts list search 'last12345' (a last name; limit 50)", '?search=last12345&limit=50'],
      ['afterDeepP50Ms', 'contacts list after=<id 1,000 from the end> (limit 100)', `?after=${lastIds.rows[0].id}&limit=100`],
    ] as const) {
      const url = `/api/v1/contactBooks/${book}/contacts${query}`;
      const rows = JSON.parse((await call('GET', url)).text).length;
      const wall: number[] = [];
      for (let i = 0; i < RUNS; i++) wall.push((await call('GET', url)).ms);
      console.log(`${label}: ${rows} rows; wall ms p50 ${fmt(median(wall))}`);
      figures[key] = median(wall);
    }

    if (EXPORT) {
      global.gc?.();
      const before = process.memoryUsage();
      let peakRss = before.rss;
      let peakHeap = before.heapUsed;
      const sampler = setInterval(() => {
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeap = Math.max(peakHeap, m.heapUsed);
      }, 50);
      const exported = await call('GET', `/api/v1/contactBooks/${book}/contacts/export`);
      clearInterval(sampler);
      figures.exportSeconds = exported.ms / 1000;
      figures.exportRssGrowthMb = (peakRss - before.rss) / 2 ** 20;
      // With --expose-gc: what the export left behind once collected (a leak would show here).
      global.gc?.();
      const retained = global.gc
        ? `, ${fmt((process.memoryUsage().heapUsed - before.heapUsed) / 2 ** 20)} MB JS heap retained after a GC`
        : '';
      // RSS includes heap V8 has not collected yet (it grows lazily under allocation churn);
      // comparing runs of different book sizes tells bounded from proportional.
      console.log(
        `export of the whole book as CSV: ${(exported.bytes / 2 ** 20).toFixed(0)} MB in ${fmt(exported.ms / 1000)} s; ` +
          `this process (API + client) grew by ${fmt(figures.exportRssGrowthMb)} MB RSS, ${fmt((peakHeap - before.heapUsed) / 2 ** 20)} MB JS heap at peak${retained}`,
      );
    }
    console.log(`load at end: ${load()}`);
    writeResult('segments', figures, { contacts: CONTACTS, runs: RUNS });
  } finally {
    await pg.end();
    await api.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
