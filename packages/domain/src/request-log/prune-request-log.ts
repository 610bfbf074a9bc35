import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

/**
 * Deletes request log entries older than `retentionDays`, a chunk per statement (each short,
 * walking the createdAt index), like the webhook outbox's pruning. Answers the rows deleted.
 */
export async function pruneRequestLog(sql: SqlExecutor, retentionDays: number, now: Date, chunk = 5000): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  let total = 0;
  for (;;) {
    const n = await sql.execute(
      `DELETE FROM "RequestLog" WHERE id IN (SELECT id FROM "RequestLog" WHERE "createdAt" < $1 ORDER BY "createdAt" LIMIT $2::int)`,
      [before, chunk],
    );
    total += n;
    if (n < chunk) return total;
  }
}
