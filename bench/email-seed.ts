// Seeding the email log for benches: rows with production's time-ordered ids, in the day
// partitions the worker's job would have made, loaded with the secondary indexes dropped and then
// rebuilt on every partition.
import { maintainEmailPartitions } from '@mailrail/domain/email-log/email-partitions';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';

const DAY_MS = 86_400_000;

/**
 * Creates `bench_email_id_prefix(at timestamptz)` in the database: the id prefix of an instant, as
 * emailIdPrefixAt (packages/platform/src/ids.ts) computes it. Append 12 characters to make an id.
 * A plain function, not pg_temp: every connection of a pool sees it (the bench database is dropped after).
 */
export async function createEmailIdPrefixFunction(sql: SqlExecutor): Promise<void> {
  await sql.execute(`
CREATE OR REPLACE FUNCTION bench_email_id_prefix(at timestamptz) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE ms bigint := greatest(0, floor(extract(epoch FROM at) * 1000)); digits text := '';
BEGIN
  LOOP
    digits := substr('0123456789abcdefghijklmnopqrstuvwxyz', (ms % 36)::int + 1, 1) || digits;
    ms := ms / 36;
    EXIT WHEN ms = 0;
  END LOOP;
  RETURN '000' || lpad(digits, 9, '0');
END $$`);
}

/** Day partitions from `days` days ago to a week ahead, as the worker's email-partitions job makes them. */
export async function createDayPartitions(sql: TransactionalSqlExecutor, days: number): Promise<void> {
  await maintainEmailPartitions(sql, { daysAhead: days + 7, bodyRetentionDays: 0, retentionDays: 0 }, new Date(Date.now() - days * DAY_MS));
}

/**
 * Runs `load` with the secondary indexes of `tables` (in `schema`) dropped, then builds them again:
 * one bulk build per index instead of one insert per row. pg_indexes spells an index of a
 * partitioned table `CREATE INDEX … ON ONLY …`, which would build the parent's index alone (invalid,
 * and no index on any partition), so that `ONLY` is left out: the index is built on every partition.
 */
export async function withIndexesRebuilt(sql: SqlExecutor, schema: string, tables: string[], load: () => Promise<void>): Promise<void> {
  const indexes = await sql.query<{ indexname: string; indexdef: string }>(
    `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2::text[]) AND indexname NOT LIKE '%pkey'`,
    [schema, tables],
  );
  for (const i of indexes) await sql.execute(`DROP INDEX "${schema}"."${i.indexname}"`);
  await load();
  for (const i of indexes) await sql.execute(i.indexdef.replace(' ON ONLY ', ' ON '));
}
