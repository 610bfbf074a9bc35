import { newEmailId } from '@mailrail/platform/ids';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { useTestDatabase } from '@mailrail/testing/databases';
import { pruneEvents } from './prune-events';

const t = useTestDatabase();

it('deletes the events and keys past the retention, in capped chunks, and keeps the rest', async () => {
  const now = new Date('2026-12-20T12:00:00Z');
  const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
  // Ids are minted at createdAt (time-ordered), as the API does; occurredAt does not decide retention.
  const event = (createdAt: Date, key: string | null) => ({
    id: newEmailId(createdAt),
    teamId: 1,
    name: 'seen',
    contactId: 'c',
    contactBookId: 'b',
    externalId: key,
    source: 'api',
    occurredAt: daysAgo(0),
    createdAt,
  });
  const rows = [
    ...Array.from({ length: 7 }, (_, i) => event(daysAgo(31 + i), `old-${i}`)),
    event(daysAgo(30.01), null),
    event(daysAgo(29.99), 'kept-1'),
    event(daysAgo(1), 'kept-2'),
  ];
  await t.db.event.createMany({ data: rows });
  await t.db.eventKey.createMany({
    data: rows.flatMap((r) =>
      r.externalId ? [{ teamId: 1, key: r.externalId, eventId: r.id, bodyHash: 'h', createdAt: r.createdAt }] : [],
    ),
  });
  const sql = prismaExecutor(t.db);

  // At most 2 chunks of 3 per run: a backlog is drained over several runs.
  expect(await pruneEvents(sql, 30, now, 2, 3)).toEqual({ events: 6, keys: 6 });
  expect(await pruneEvents(sql, 30, now, 2, 3)).toEqual({ events: 2, keys: 1 });
  expect(await pruneEvents(sql, 30, now, 2, 3)).toEqual({ events: 0, keys: 0 });
  const left = await t.db.event.findMany({ orderBy: { createdAt: 'asc' } });
  expect(left.map((r) => r.createdAt)).toEqual([daysAgo(29.99), daysAgo(1)]);
  expect((await t.db.eventKey.findMany({ orderBy: { key: 'asc' } })).map((k) => k.key)).toEqual(['kept-1', 'kept-2']);
});
