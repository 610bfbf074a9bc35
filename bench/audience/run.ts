// Audience benchmark: bulk create of 10,000 contacts over HTTP, and page 1 of a 1,000,000-contact book.
// Runs a real API (express on a local port) against its own fresh database and Redis prefix.
//   npx tsx bench/audience/run.ts [--runs 5] [--list-requests 50] [--contacts 1000000] [--only bulk|list]
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { createApiKey, createTeam, newId } from '@mailrail/core';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/core/testing/databases';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/core/testing/redis';
import { testConfig } from '@mailrail/core/testing/config';
import { createApp } from '../../apps/api/src/app';
import { closeApiDeps, createApiDeps } from '../../apps/api/src/deps';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const RUNS = arg('runs', 5);
const LIST_REQUESTS = arg('list-requests', 50);
const BIG_BOOK = arg('contacts', 1_000_000);
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;

const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { min: s[0].toFixed(1), p50: q(0.5).toFixed(1), p95: q(0.95).toFixed(1), max: s[s.length - 1].toFixed(1) };
};

async function main() {
  await prepareTemplateDatabase();
  const databaseUrl = await createTestDatabase();
  const prefix = testRedisPrefix();
  const config = testConfig(databaseUrl, prefix, { DATABASE_POOL_SIZE: '10' });
  const deps = createApiDeps(config);
  const { app, close } = createApp(deps);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const team = await createTeam(deps.db, 'bench');
    const { apiKey } = await createApiKey(deps.db, { teamId: team.id });
    const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
    // Times one request from sending to the last byte of the answer; parsing the answer is not counted.
    const call = async (method: string, path: string, body?: unknown) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const t = performance.now();
      const res = await fetch(`${base}${path}`, { method, headers, body: payload });
      const text = await res.text();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return { text, ms };
    };
    const newBook = async () => JSON.parse((await call('POST', '/api/v1/contactBooks', { name: 'bench' })).text).id as string;

    // ------------------------------------------------------------ bulk create, 10,000 per request
    const contacts = (run: number) =>
      Array.from({ length: 10_000 }, (_, i) => ({
        email: `user${i}.run${run}@bench.example.com`,
        firstName: `First${i}`,
        lastName: `Last${i}`,
        properties: { plan: i % 2 ? 'pro' : 'free', city: 'Oslo' },
      }));
    console.log(`machine: nproc=${os.cpus().length}, memory=${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`);
    console.log(`load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    if (ONLY !== 'list') await call('POST', `/api/v1/contactBooks/${await newBook()}/contacts/bulk`, contacts(-1)); // warm-up
    const created: number[] = [];
    const updated: number[] = [];
    for (let run = 0; ONLY !== 'list' && run < RUNS; run++) {
      const book = await newBook();
      const body = contacts(run);
      const first = await call('POST', `/api/v1/contactBooks/${book}/contacts/bulk`, body);
      created.push(first.ms);
      if (JSON.parse(first.text).count !== 10_000) throw new Error(`count ${first.text}`);
      // The same 10,000 again: every row takes the ON CONFLICT merge path.
      updated.push((await call('POST', `/api/v1/contactBooks/${book}/contacts/bulk`, body)).ms);
    }
    if (ONLY !== 'list') {
      console.log(`bulk create 10,000 new contacts (HTTP, end to end, ${RUNS} runs) ms:`, stats(created));
      console.log(`bulk upsert 10,000 existing contacts (HTTP, end to end, ${RUNS} runs) ms:`, stats(updated));
      console.log(`load average after bulk: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    }
    if (ONLY === 'bulk') return;

    // ------------------------------------------------------------ page 1 of a 1,000,000-contact book
    const big = await newBook();
    const t = performance.now();
    await deps.db.$executeRawUnsafe(
      `INSERT INTO "Contact" (id, "contactBookId", email, "firstName", "lastName", properties, subscribed, "createdAt", "updatedAt")
       SELECT lpad(to_hex(g), 9, '0') || substr(md5('c' || g), 1, 15), $1, 'user' || g || '@big.example.com', 'First' || g, 'Last' || g,
              jsonb_build_object('plan', CASE WHEN g % 2 = 0 THEN 'pro' ELSE 'free' END), true, now(), now()
       FROM generate_series(1, $2::int) AS g`,
      big,
      BIG_BOOK,
    );
    await deps.db.$executeRawUnsafe('ANALYZE "Contact"');
    console.log(`seeded ${BIG_BOOK} contacts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const listing = async (query: string, n: number) => {
      for (let i = 0; i < 5; i++) await call('GET', `/api/v1/contactBooks/${big}/contacts${query}`);
      const ms: number[] = [];
      let rows = 0;
      for (let i = 0; i < n; i++) {
        const res = await call('GET', `/api/v1/contactBooks/${big}/contacts${query}`);
        ms.push(res.ms);
        rows = JSON.parse(res.text).length;
      }
      return { rows, ...stats(ms) };
    };
    console.log(`list page 1, default limit (5000 rows), ${LIST_REQUESTS} sequential requests ms:`, await listing('', LIST_REQUESTS));
    console.log(`list page 1, limit=100, ${LIST_REQUESTS} sequential requests ms:`, await listing('?limit=100', LIST_REQUESTS));
    console.log(`list page 100, limit=100 ms:`, await listing('?page=100&limit=100', LIST_REQUESTS));
    console.log(`list by 3 emails ms:`, await listing(`?emails=user1@big.example.com,user500000@big.example.com,user999999@big.example.com`, LIST_REQUESTS));
    console.log(`load average after list: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    server.close();
    close();
    await deleteRedisPrefix(deps.redis, prefix).catch(() => undefined);
    await closeApiDeps(deps);
    await dropDatabase(databaseUrl);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
