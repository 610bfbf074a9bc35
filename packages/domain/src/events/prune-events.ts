import { emailIdPrefixAt } from '@mailrail/platform/ids';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

export interface PrunedEvents {
  events: number;
  keys: number;
}

/**
 * Deletes custom events and their caller-given keys older than `retentionDays`, `chunk` rows per
 * statement and at most `maxChunks` statements of each per run (the periodic worker runs one job at
 * a time: a backlog one team's volume decides is drained over several runs). Events go by id range:
 * their ids are time-ordered by createdAt (as email ids), so the primary key is the walk, the same
 * cut a later day partitioning would drop whole.
 */
export async function pruneEvents(
  sql: SqlExecutor,
  retentionDays: number,
  now: Date,
  maxChunks: number,
  chunk = 5000,
): Promise<PrunedEvents> {
  const before = now.getTime() - retentionDays * 86_400_000;
  const pruned: PrunedEvents = { events: 0, keys: 0 };
  for (let i = 0; i < maxChunks; i++) {
    const n = await sql.execute(`DELETE FROM "Event" WHERE id IN (SELECT id FROM "Event" WHERE id < $1 ORDER BY id LIMIT $2::int)`, [
      emailIdPrefixAt(before),
      chunk,
    ]);
    pruned.events += n;
    if (n < chunk) break;
  }
  for (let i = 0; i < maxChunks; i++) {
    const n = await sql.execute(
      `DELETE FROM "EventKey" WHERE ("teamId", key) IN
         (SELECT "teamId", key FROM "EventKey" WHERE "createdAt" < $1 ORDER BY "createdAt" LIMIT $2::int)`,
      [new Date(before), chunk],
    );
    pruned.keys += n;
    if (n < chunk) break;
  }
  return pruned;
}
