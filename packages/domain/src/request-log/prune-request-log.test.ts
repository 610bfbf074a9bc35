import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { useTestDatabase } from '@mailrail/testing/databases';
import { pruneRequestLog } from './prune-request-log';

const t = useTestDatabase();

it('deletes the entries past the retention, in chunks, and keeps the rest', async () => {
  const now = new Date('2026-12-20T12:00:00Z');
  const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
  const entry = (createdAt: Date) => ({
    teamId: 1,
    source: 'api',
    method: 'GET',
    path: '/api/v1/domains',
    status: 200,
    durationMs: 1,
    createdAt,
  });
  await t.db.requestLog.createMany({
    data: [...Array.from({ length: 7 }, () => entry(daysAgo(15))), entry(daysAgo(14.01)), entry(daysAgo(13.99)), entry(daysAgo(1))],
  });
  expect(await pruneRequestLog(prismaExecutor(t.db), 14, now, 3)).toBe(8);
  const left = await t.db.requestLog.findMany({ orderBy: { createdAt: 'asc' } });
  expect(left.map((r) => r.createdAt)).toEqual([daysAgo(13.99), daysAgo(1)]);
});
