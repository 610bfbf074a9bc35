import { createSqlPool, prismaExecutor, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { useTestDatabase } from '@mailrail/testing/databases';
import { partitionDay } from '../day-partitions/day-partitions';
import { maintainRequestLogPartitions, pruneRequestLog } from './request-log-partitions';

// The request log's day partitions on a real PostgreSQL, run with an injected clock: days created
// ahead, whole days dropped past the retention, and the DEFAULT partition (rows from before the
// table was partitioned, and strays) pruned by deleting.

const DAY = 86_400_000;
const t = useTestDatabase();
let sql: SqlPool;

const entry = (createdAt: Date) => ({
  teamId: 1,
  source: 'api',
  method: 'GET',
  path: '/api/v1/domains',
  status: 200,
  durationMs: 1,
  createdAt,
});

async function partitionNames(): Promise<string[]> {
  const rows = await sql.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"RequestLog"'::regclass ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

async function partitionOf(createdAt: Date): Promise<string> {
  const [row] = await sql.query<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM "RequestLog" WHERE "createdAt" = $1`, [
    createdAt,
  ]);
  return row.p.replace(/"/g, '');
}

beforeAll(() => {
  sql = createSqlPool(t.url, 4, () => undefined);
});
afterAll(async () => {
  await sql?.end();
});

it('deletes the DEFAULT partition’s entries past the retention, in chunks, and keeps the rest', async () => {
  const now = new Date('2026-12-20T12:00:00Z');
  const daysAgo = (d: number) => new Date(now.getTime() - d * DAY);
  await t.db.requestLog.createMany({
    data: [...Array.from({ length: 7 }, () => entry(daysAgo(15))), entry(daysAgo(14.01)), entry(daysAgo(13.99)), entry(daysAgo(1))],
  });
  expect(await pruneRequestLog(prismaExecutor(t.db), 14, now, 3)).toBe(8);
  const left = await t.db.requestLog.findMany({ orderBy: { createdAt: 'asc' } });
  expect(left.map((r) => r.createdAt)).toEqual([daysAgo(13.99), daysAgo(1)]);
  await t.db.requestLog.deleteMany({});
});

describe('maintainRequestLogPartitions', () => {
  // Later than every row above: their days stay in the DEFAULT partition.
  const start = new Date('2027-01-10T08:00:00Z');

  it('creates today and the days ahead once, and an entry lands in the partition of its UTC day', async () => {
    const first = await maintainRequestLogPartitions(sql, { daysAhead: 2, retentionDays: 3 }, start);
    const days = [0, 1, 2].map((d) => `RequestLog_p${partitionDay(new Date(start.getTime() + d * DAY))}`);
    expect(first.created).toEqual(days);
    expect(await partitionNames()).toEqual(['RequestLog_default', ...days]);
    expect((await maintainRequestLogPartitions(sql, { daysAhead: 2, retentionDays: 3 }, start)).created).toEqual([]);

    // The last millisecond of a day and the first of the next.
    const lastOfDay = new Date('2027-01-10T23:59:59.999Z');
    const firstOfNext = new Date('2027-01-11T00:00:00.000Z');
    await t.db.requestLog.createMany({ data: [entry(lastOfDay), entry(firstOfNext)] });
    expect(await partitionOf(lastOfDay)).toBe('RequestLog_p20270110');
    expect(await partitionOf(firstOfNext)).toBe('RequestLog_p20270111');
  });

  it('leaves a day the DEFAULT partition already holds rows of there, reported as blocked', async () => {
    const stray = new Date('2027-01-14T10:00:00Z');
    await t.db.requestLog.create({ data: entry(stray) });
    const report = await maintainRequestLogPartitions(sql, { daysAhead: 5, retentionDays: 3 }, start);
    expect(report.blocked).toEqual(['RequestLog_p20270114']);
    expect(report.created).toEqual(['RequestLog_p20270113', 'RequestLog_p20270115']);
    expect(await partitionOf(stray)).toBe('RequestLog_default');
  });

  it('drops whole days past the retention as the clock moves on, deleting only the DEFAULT partition’s old rows', async () => {
    // 2027-01-10 ends at 2027-01-11T00:00Z: with 3 days of retention it goes at 2027-01-14T00:00Z, not before.
    const before = await maintainRequestLogPartitions(sql, { daysAhead: 2, retentionDays: 3 }, new Date('2027-01-13T23:59:59Z'));
    expect(before.dropped).toEqual([]);
    const after = await maintainRequestLogPartitions(sql, { daysAhead: 2, retentionDays: 3 }, new Date('2027-01-14T00:00:00Z'));
    expect(after.dropped).toEqual(['RequestLog_p20270110']);
    expect(after.deleted).toBe(0);
    const left = await t.db.requestLog.findMany({ orderBy: { createdAt: 'asc' } });
    expect(left.map((r) => r.createdAt.toISOString())).toEqual(['2027-01-11T00:00:00.000Z', '2027-01-14T10:00:00.000Z']);

    // Days later: the stray in the DEFAULT partition is deleted, every old day dropped, days ahead kept.
    const later = await maintainRequestLogPartitions(sql, { daysAhead: 2, retentionDays: 3 }, new Date('2027-01-18T12:00:00Z'));
    expect(later.dropped).toEqual(['RequestLog_p20270111', 'RequestLog_p20270112', 'RequestLog_p20270113']);
    expect(later.deleted).toBe(1);
    expect(await t.db.requestLog.count()).toBe(0);
    // 2027-01-17 was never "ahead" at a run (runs on the 14th and the 18th): a past day is not created.
    expect(await partitionNames()).toEqual([
      'RequestLog_default',
      'RequestLog_p20270115',
      'RequestLog_p20270116',
      'RequestLog_p20270118',
      'RequestLog_p20270119',
      'RequestLog_p20270120',
    ]);
  });

  it('keeps every day with a retention of 0', async () => {
    const report = await maintainRequestLogPartitions(sql, { daysAhead: 0, retentionDays: 0 }, new Date('2027-06-01T00:00:00Z'));
    expect(report.dropped).toEqual([]);
    expect(report.created).toEqual(['RequestLog_p20270601']);
  });
});
