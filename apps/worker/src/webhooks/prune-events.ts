import { type SqlExecutor } from '@mailrail/platform/db/sql/executor';

/**
 * Deletes dispatched events older than the retention (their deliveries go with them), a chunk
 * at a time so a large backlog never holds long locks. Undispatched events are never deleted.
 */
export async function pruneWebhookEvents(sql: SqlExecutor, retentionDays: number, now = new Date(), chunk = 5000): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  let total = 0;
  for (;;) {
    const n = await sql.execute(
      `DELETE FROM "WebhookEvent" WHERE "id" IN (
         SELECT "id" FROM "WebhookEvent" WHERE "dispatchedAt" < $1 LIMIT $2::int
       )`,
      [before, chunk],
    );
    total += n;
    if (n < chunk) return total;
  }
}
