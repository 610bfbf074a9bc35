import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from 'pg';
import { partitionDay } from '@mailrail/domain/day-partitions/day-partitions';
import { maintainRequestLogPartitions } from '@mailrail/domain/request-log/request-log-partitions';
import { PrismaClient } from '@mailrail/platform/db/client';
import { createSqlPool, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { explainingPool, type ExplainingPool } from '@mailrail/testing/partition-scans';
import type { ApiDeps } from '../../apps/api/src/deps';
import { listLogs, listLogsQuery } from '../../apps/api/src/request-log/list-logs';

// GET /api/v1/logs on a request log partitioned by day (docs/request-log.md): the production
// listLogs runs through connections that explain every statement (packages/testing/src/partition-scans.ts),
// and a date range or a cursor reads only the days that can hold its page; paging crosses days
// without repeating or skipping an entry.

const DAY = 86_400_000;
const TODAY = Date.UTC(2026, 11, 7);
const day = (n: number) => partitionDay(new Date(TODAY + n * DAY));
const at = (n: number, hours: number) => new Date(TODAY + n * DAY + hours * 3_600_000);

let url: string;
let seed: SqlPool;
let pool: Pool;
let db: PrismaClient;
let explaining: ExplainingPool;
const teamId = 1;

const auth = { teamId, apiKeyId: 1, permission: 'FULL' as const, domainId: null, rateLimit: 0 };
const deps = () => ({ db }) as unknown as ApiDeps;
const list = (query: Record<string, string>) => listLogs(deps(), auth, listLogsQuery.parse(query));

beforeAll(async () => {
  url = await createTestDatabase();
  seed = createSqlPool(url, 2, () => undefined);
  // Days -4 .. +1 exist; entries on days -4 .. 0, three a day (hours 9, 12, 15).
  await maintainRequestLogPartitions(seed, { daysAhead: 5, retentionDays: 0 }, new Date(TODAY - 4 * DAY));
  for (let n = -4; n <= 0; n++) {
    for (const hours of [9, 12, 15]) {
      await seed.execute(
        `INSERT INTO "RequestLog" ("teamId", "apiKeyId", source, method, path, status, "durationMs", "createdAt")
         VALUES ($1, 1, 'api', 'POST', '/api/v1/emails', 200, 3, $2)`,
        [teamId, at(n, hours)],
      );
    }
  }
  await seed.execute('ANALYZE "RequestLog"');
  explaining = explainingPool(url);
  pool = explaining.pool;
  db = new PrismaClient({ adapter: new PrismaPg(pool) });
});

afterAll(async () => {
  await db?.$disconnect();
  await pool?.end().catch(() => undefined);
  await seed?.end();
  if (url) await dropDatabase(url);
});

it('stores each entry in the partition of its day', async () => {
  const rows = await seed.query<{ p: string; n: number }>(
    `SELECT tableoid::regclass::text AS p, count(*)::int AS n FROM "RequestLog" GROUP BY 1 ORDER BY 1`,
  );
  expect(rows.map((r) => [r.p.replace(/"/g, ''), r.n])).toEqual([-4, -3, -2, -1, 0].map((n) => [`RequestLog_p${day(n)}`, 3]));
});

it('a date range reads only its days', async () => {
  const q = { startDate: at(-3, 0).toISOString(), endDate: at(-2, 23).toISOString() };
  const read = await explaining.partitionsRead(() => list(q));
  // The DEFAULT partition may be planned too (it can hold any day); no other day is.
  expect(read.filter((p) => p !== 'RequestLog_default')).toEqual([`RequestLog_p${day(-3)}`, `RequestLog_p${day(-2)}`]);
  expect((await list(q)).data.map((e) => e.createdAt)).toEqual(
    [15, 12, 9]
      .flatMap((h) => [-2, -3].map((n) => at(n, h)))
      .sort((a, b) => b.getTime() - a.getTime())
      .map((d) => d.toISOString()),
  );
});

it('pages across days by cursor without repeating or skipping, a cursor never reading newer days', async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: Record<string, string> = { limit: '4', ...(cursor ? { cursor } : {}) };
    const page: Awaited<ReturnType<typeof listLogs>> = await list(query);
    seen.push(...page.data.map((e) => e.createdAt));
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 10);
  const expected = [0, -1, -2, -3, -4].flatMap((n) => [15, 12, 9].map((h) => at(n, h).toISOString()));
  expect(seen).toEqual(expected);

  // The page after day -2's 12:00 entry: day -2 and older, never days -1 and 0.
  const first = await list({ limit: '8' });
  expect(first.data.at(-1)?.createdAt).toBe(at(-2, 12).toISOString());
  const read = await explaining.partitionsRead(() => list({ limit: '2', cursor: first.nextCursor! }));
  expect(read).not.toContain(`RequestLog_p${day(-1)}`);
  expect(read).not.toContain(`RequestLog_p${day(0)}`);
  expect(read).toContain(`RequestLog_p${day(-2)}`);
});
