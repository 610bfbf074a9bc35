// Analytics time series over a large DailyEmailUsage table, measured as HTTP latency of the real
// API (spawned as its own process). Run: npx tsx bench/events/analytics-time-series.ts
// BENCH_TEAMS (100) sets the size of the table, BENCH_SECONDS (10) each concurrent run.
import { createApiKey } from '@mailrail/domain/teams/api-keys';
import { createDb } from '@mailrail/platform/db/client';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { loadConfig } from '@mailrail/platform/config/load';
import { createTestDatabase, dropDatabase, prepareTemplateDatabase } from '@mailrail/testing/databases';
import { writeResult } from '../report-kit';
import { autocannon, machine, percentile, spawnTs, stop, waitForUrl } from './bench-kit';

const TEAMS = Number(process.env.BENCH_TEAMS ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const DOMAINS = 20;
const DAYS = 365;
const PORT = 3917;

async function main() {
  await prepareTemplateDatabase();
  const url = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const db = createDb(url, 2);
  const api = spawnTs('apps/api/src/main.ts', {
    DATABASE_URL: url,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    API_RATE_LIMIT: '0',
    REDIS_PREFIX: 'bench_events_analytics',
  });
  try {
    const t0 = Date.now();
    await db.$executeRawUnsafe(`INSERT INTO "Team" (name, "updatedAt") SELECT 'bench ' || i, now() FROM generate_series(1, ${TEAMS}) i`);
    // Every team: DOMAINS domains x DAYS days x 2 types of counters ending today.
    await db.$executeRawUnsafe(`
      INSERT INTO "DailyEmailUsage" ("teamId", "domainId", date, type, sent, delivered, opened, clicked, bounced, "hardBounced", complained, "updatedAt")
      SELECT t.id, d, to_char((now() at time zone 'utc')::date - day, 'YYYY-MM-DD'), ty::"EmailUsageType",
             s, s * 9 / 10, s / 3, s / 10, s / 50, s / 100, s / 1000, now()
      FROM "Team" t, generate_series(1, ${DOMAINS}) d, generate_series(0, ${DAYS - 1}) day, unnest(ARRAY['TRANSACTIONAL', 'MARKETING']) ty,
           LATERAL (SELECT (500 + (hashtext(t.id || '-' || d || '-' || day || ty) & 1023)) AS s) x`);
    await db.$executeRawUnsafe('ANALYZE "DailyEmailUsage"');
    const [{ rows, emails }] = await db.$queryRawUnsafe<{ rows: bigint; emails: bigint }[]>(
      `SELECT count(*) AS rows, sum(sent) AS emails FROM "DailyEmailUsage" WHERE "teamId" = 1`,
    );
    const [{ total }] = await db.$queryRawUnsafe<{ total: bigint }[]>(`SELECT count(*) AS total FROM "DailyEmailUsage"`);
    const [{ window }] = await db.$queryRawUnsafe<{ window: bigint }[]>(
      `SELECT sum(sent) AS window FROM "DailyEmailUsage" WHERE "teamId" = 1 AND date >= to_char((now() at time zone 'utc')::date - 30, 'YYYY-MM-DD')`,
    );
    console.log(
      `seeded ${total} counter rows for ${TEAMS} teams in ${((Date.now() - t0) / 1000).toFixed(1)} s; team 1: ${rows} rows, ${emails} emails in the year, ${window} in the 30-day window`,
    );

    const domain = await insertDomain(db, config.SECRET, {
      teamId: 1,
      name: 'bench.example.com',
      region: 'us-east-1',
      dkimSelector: 'x',
      verified: true,
    });
    const { apiKey } = await createApiKey(db, { teamId: 1 });
    await waitForUrl(`http://127.0.0.1:${PORT}/health`);
    const headers = { Authorization: `Bearer ${apiKey}` };
    console.log(`machine: ${machine()}\n`);
    console.log('| request | mode | requests | req/s | p50 | p99 |\n|---|---|---|---|---|---|');
    const p99s: { sequential: number; concurrent: number }[] = [];
    for (const path of [
      '/api/v1/analytics/email-time-series?days=30',
      `/api/v1/analytics/email-time-series?days=30&domainId=${domain.id}`,
      '/api/v1/analytics/email-time-series?days=7',
    ]) {
      const target = `http://127.0.0.1:${PORT}${path}`;
      for (let i = 0; i < 50; i++) await (await fetch(target, { headers })).arrayBuffer(); // warm-up
      const times: number[] = [];
      const started = performance.now();
      for (let i = 0; i < 500; i++) {
        const t = performance.now();
        const res = await fetch(target, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        times.push(performance.now() - t);
      }
      const elapsed = (performance.now() - started) / 1000;
      times.sort((a, b) => a - b);
      console.log(
        `| ${path.replace('/api/v1/analytics/', '')} | sequential | 500 | ${(500 / elapsed).toFixed(0)} | ${percentile(times, 50).toFixed(1)} ms | ${percentile(times, 99).toFixed(1)} ms |`,
      );
      const load = await autocannon({ url: target, headers, connections: 8, duration: SECONDS });
      if (load.non2xx || load.errors) throw new Error(`autocannon: ${load.non2xx} non-2xx, ${load.errors} errors`);
      console.log(
        `| ${path.replace('/api/v1/analytics/', '')} | autocannon -c 8 -d ${SECONDS} | ${load.requests.total} | ${load.requests.average.toFixed(0)} | ${load.latency.p50} ms | ${load.latency.p99} ms |`,
      );
      p99s.push({ sequential: percentile(times, 99), concurrent: load.latency.p99 });
    }
    // The first path, the 30-day team-wide series, is the one the target is about.
    writeResult(
      'analytics',
      {
        timeSeries30dP99Ms: p99s[0].sequential,
        timeSeries30dP99With8ClientsMs: p99s[0].concurrent,
        worstP99With8ClientsMs: Math.max(...p99s.map((p) => p.concurrent)),
      },
      { teams: TEAMS, counterRows: Number(total), windowEmails: Number(window), autocannonSeconds: SECONDS },
    );
  } finally {
    await stop(api);
    await db.$disconnect();
    await dropDatabase(url);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
