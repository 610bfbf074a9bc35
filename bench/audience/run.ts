// Audience benchmark: bulk create of 10,000 contacts over HTTP, and page 1 of a 1,000,000-contact book.
// Runs a real API (express on a local port, in this process) against its own fresh database and
// Redis prefix. Besides wall time it reports the CPU each request cost: this process (API and
// client) plus the PostgreSQL backends of the database, read from /proc. On a machine shared with
// other work, wall time includes waiting for a core; CPU time does not.
//   npx tsx bench/audience/run.ts [--runs 10] [--list-requests 100] [--contacts 1000000] [--only bulk|list]

import http from 'node:http';
import os from 'node:os';
import { Client } from 'pg';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { writeResult } from '../report-kit';
import { cpuSeconds } from '../process-stats';
import { startBenchApi } from '../bench-api';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const RUNS = arg('runs', 10);
const LIST_REQUESTS = arg('list-requests', 100);
const BIG_BOOK = arg('contacts', 1_000_000);
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;

const fmt = (n: number) => n.toFixed(1);
const quantiles = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { min: s[0], p50: q(0.5), p95: q(0.95), max: s[s.length - 1] };
};
const stats = ({ min, p50, p95, max }: ReturnType<typeof quantiles>) =>
  `min ${fmt(min)}, p50 ${fmt(p50)}, p95 ${fmt(p95)}, max ${fmt(max)}`;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main() {
  const api = await startBenchApi({ DATABASE_POOL_SIZE: '10' });
  const { databaseUrl, deps, base } = api;
  const monitor = new Client({ connectionString: databaseUrl });
  await monitor.connect();
  const figures: Record<string, number> = {};
  try {
    const team = await createTeam(deps.db, 'bench');
    const { apiKey } = await createApiKey(deps.db, { teamId: team.id });
    const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };

    /** CPU ms so far of this process and of the database's PostgreSQL backends. */
    const cpuNow = async () => {
      const { rows } = await monitor.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      const { user, system } = process.cpuUsage();
      return {
        node: (user + system) / 1000,
        pg: rows.reduce((sum, r) => sum + (cpuSeconds(r.pid) * 1000 || 0) /* NaN: a backend that ended */, 0),
      };
    };
    // Wall time from sending to the last byte of the answer; building the body and parsing the answer
    // are not counted. node:http with keep-alive: fetch (undici) costs this process three times the
    // CPU to receive a 1.5 MB answer, which would be counted against the API.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const call = (method: string, path: string, body?: unknown) =>
      new Promise<{ text: string; ms: number }>((resolve, reject) => {
        const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
        const t = performance.now();
        const req = http.request(
          `${base}${path}`,
          { method, agent, headers: { ...headers, ...(payload ? { 'Content-Length': String(payload.length) } : {}) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const ms = performance.now() - t;
              const text = Buffer.concat(chunks).toString('utf8');
              if (res.statusCode !== 200) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
              else resolve({ text, ms });
            });
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    /** Runs `n` requests; wall time each, CPU time per request averaged over all of them. */
    const measure = async (n: number, request: (i: number) => Promise<{ ms: number }>) => {
      const wall: number[] = [];
      const before = await cpuNow();
      for (let i = 0; i < n; i++) wall.push((await request(i)).ms);
      const after = await cpuNow();
      const q = quantiles(wall);
      return {
        ...q,
        line: `wall ms ${stats(q)} | CPU ms per request: node ${fmt((after.node - before.node) / n)}, postgres ${fmt((after.pg - before.pg) / n)}`,
      };
    };
    const newBook = async () => JSON.parse((await call('POST', '/api/v1/contactBooks', { name: 'bench' })).text).id as string;

    console.log(
      `machine: nproc=${os.cpus().length}, memory=${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.cpus()[0].model}, node ${process.version}`,
    );
    console.log(`load average at start: ${load()}`);

    // ------------------------------------------------------------ bulk create, 10,000 per request
    if (ONLY !== 'list') {
      const contacts = (run: number) =>
        Array.from({ length: 10_000 }, (_, i) => ({
          email: `user${i}.run${run}@bench.example.com`,
          firstName: `First${i}`,
          lastName: `Last${i}`,
          properties: { plan: i % 2 ? 'pro' : 'free', city: 'Oslo' },
        }));
      await call('POST', `/api/v1/contactBooks/${await newBook()}/contacts/bulk`, contacts(-1)); // warm-up
      const books: string[] = [];
      for (let run = 0; run < RUNS; run++) books.push(await newBook());
      const bodies = books.map((_, run) => contacts(run));
      const bulk = await measure(RUNS, async (run) => {
        const res = await call('POST', `/api/v1/contactBooks/${books[run]}/contacts/bulk`, bodies[run]);
        if (JSON.parse(res.text).count !== 10_000) throw new Error(`unexpected answer ${res.text}`);
        return res;
      });
      console.log(`bulk create 10,000 new contacts (${RUNS} requests): ${bulk.line}`);
      Object.assign(figures, { bulkCreateP50Ms: bulk.p50, bulkCreateP95Ms: bulk.p95 });
      // The same 10,000 again: every row takes the ON CONFLICT merge path.
      console.log(
        `bulk upsert 10,000 existing contacts (${RUNS} requests): ` +
          (await measure(RUNS, (run) => call('POST', `/api/v1/contactBooks/${books[run]}/contacts/bulk`, bodies[run]))).line,
      );
      console.log(`load average after bulk: ${load()}`);
    }

    // ------------------------------------------------------------ page 1 of a 1,000,000-contact book
    if (ONLY !== 'bulk') {
      const big = await newBook();
      const t = performance.now();
      // Ids as the API makes them: time-ordered (newContactIds), here by insertion order.
      await deps.db.$executeRawUnsafe(
        `INSERT INTO "Contact" (id, "contactBookId", email, "firstName", "lastName", properties, subscribed, "createdAt", "updatedAt")
         SELECT lpad(to_hex(g), 9, '0') || substr(md5('c' || g), 1, 15), $1, 'user' || g || '@big.example.com', 'First' || g, 'Last' || g,
                jsonb_build_object('plan', CASE WHEN g % 2 = 0 THEN 'pro' ELSE 'free' END), true, now(), now()
         FROM generate_series(1, $2::int) AS g`,
        big,
        BIG_BOOK,
      );
      await deps.db.$executeRawUnsafe('VACUUM ANALYZE "Contact"');
      console.log(`seeded ${BIG_BOOK} contacts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      const listing = async (label: string, query: string) => {
        const url = `/api/v1/contactBooks/${big}/contacts${query}`;
        const check = JSON.parse((await call('GET', url)).text).length;
        for (let i = 0; i < 5; i++) await call('GET', url); // warm-up
        const listed = await measure(LIST_REQUESTS, () => call('GET', url));
        console.log(`${label} (${check} rows, ${LIST_REQUESTS} sequential requests): ${listed.line}`);
        return listed;
      };
      const page1 = await listing('list page 1, default limit', '');
      Object.assign(figures, { listPage1P50Ms: page1.p50, listPage1P95Ms: page1.p95 });
      await listing('list page 1, limit=100', '?limit=100');
      await listing('list page 100, limit=100', '?page=100&limit=100');
      await listing('list by 3 emails', '?emails=user1@big.example.com,user500000@big.example.com,user999999@big.example.com');
      console.log(`load average after list: ${load()}`);
    }
    writeResult('audience', figures, { runs: RUNS, listRequests: LIST_REQUESTS, contacts: BIG_BOOK, only: ONLY });
  } finally {
    await monitor.end();
    await api.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
