import type { Config } from '@mailrail/platform/config/schema';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import {
  createDaysAhead,
  DAY_MS,
  dayStart,
  dropDaysPastRetention,
  emptyDayPartitionReport,
  type DayPartitionFamily,
  type DayPartitionReport,
  type DayPartitionSettings,
} from '../day-partitions/day-partitions';

// The request log's partitions (docs/request-log.md): "RequestLog" is partitioned BY RANGE
// ("createdAt"), one partition per UTC day ("RequestLog_p20261207"), beside the DEFAULT partition
// "RequestLog_default" (the rows logged before the table was partitioned, and any row whose day has
// no partition yet). The job keeps days created ahead and drops whole days past
// REQUEST_LOG_RETENTION_DAYS with the email log's code; the DEFAULT partition, which spans any
// time, is the one place rows are deleted, a chunk per statement.

const FAMILY: DayPartitionFamily = {
  lockName: 'mailrail:request-log-partitions',
  parents: [{ table: 'RequestLog', key: '"createdAt"' }],
  bounds: (day) => {
    const start = dayStart(day);
    return { from: new Date(start).toISOString(), to: new Date(start + DAY_MS).toISOString() };
  },
};

export interface RequestLogPartitionReport extends DayPartitionReport {
  /** Rows deleted from the DEFAULT partition past the retention. */
  deleted: number;
}

/** The job's settings from the configuration (days ahead as the email log's). */
export function requestLogPartitionSettings(
  config: Pick<Config, 'EMAIL_PARTITION_DAYS_AHEAD' | 'REQUEST_LOG_RETENTION_DAYS'>,
): DayPartitionSettings {
  return { daysAhead: config.EMAIL_PARTITION_DAYS_AHEAD, retentionDays: config.REQUEST_LOG_RETENTION_DAYS };
}

/**
 * Deletes the DEFAULT partition's entries older than `retentionDays`, a chunk per statement (each
 * short). Day partitions are dropped whole instead; this partition only holds the rows logged before
 * partitioning and strays. Answers the rows deleted.
 */
export async function pruneRequestLog(sql: SqlExecutor, retentionDays: number, now: Date, chunk = 5000): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * DAY_MS);
  let total = 0;
  for (;;) {
    const n = await sql.execute(
      `DELETE FROM "RequestLog_default" WHERE ctid IN (SELECT ctid FROM "RequestLog_default" WHERE "createdAt" < $1 LIMIT $2::int)`,
      [before, chunk],
    );
    total += n;
    if (n < chunk) return total;
  }
}

/**
 * One run of the job: days ahead, days past the retention dropped, the DEFAULT partition's old
 * rows deleted. Safe to run at any time and on several replicas (each DDL step takes an advisory lock).
 */
export async function maintainRequestLogPartitions(
  sql: TransactionalSqlExecutor,
  settings: DayPartitionSettings,
  now: Date,
): Promise<RequestLogPartitionReport> {
  const report: RequestLogPartitionReport = { ...emptyDayPartitionReport(), deleted: 0 };
  await createDaysAhead(sql, FAMILY, settings, now, report);
  await dropDaysPastRetention(sql, FAMILY, settings, now, report);
  if (settings.retentionDays > 0) report.deleted = await pruneRequestLog(sql, settings.retentionDays, now);
  return report;
}
