import type { Config } from '@mailrail/platform/config/schema';
import { emailIdPrefixAt } from '@mailrail/platform/ids';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import {
  createDaysAhead,
  DAY_MS,
  dayOf,
  dayStart,
  dropDaysPastRetention,
  emptyDayPartitionReport,
  partitionDay,
  partitionsOf,
  type DayPartitionFamily,
  type DayPartitionReport,
  type DayPartitionSettings,
} from '../day-partitions/day-partitions';

// The email log's partitions (docs/email-log.md). "Email" is partitioned BY RANGE (id) and
// "EmailEvent" BY RANGE ("emailId"), one partition per UTC day ("Email_p20261124" holds the ids
// minted that day), beside "Email_legacy" (random ids from before ids were time-ordered) and the
// DEFAULT partition "Email_default" (a safety net: any id no day partition covers). This job
// keeps `daysAhead` days of partitions ahead, clears bodies past EMAIL_BODY_RETENTION_DAYS one
// partition at a time, and drops whole days past EMAIL_RETENTION_DAYS: rows are never deleted.
// Creating and dropping days is the rule every day-partitioned table shares
// (day-partitions/day-partitions.ts); clearing bodies and keeping unsent emails are the email log's own.

const BODIES_CLEARED = 'bodies cleared';

export interface EmailPartitionSettings extends DayPartitionSettings {
  /** Days after which html, text, attachments, rawMessage and headers are cleared; 0 = kept. */
  bodyRetentionDays: number;
  /** Rows per UPDATE when clearing bodies. */
  batchSize?: number;
}

export interface EmailPartitionReport extends DayPartitionReport {
  /** `kept`: partitions kept past retention because they still hold unsent emails. */
  bodiesCleared: number;
}

/** The job's settings from the configuration. */
export function emailPartitionSettings(
  config: Pick<Config, 'EMAIL_PARTITION_DAYS_AHEAD' | 'EMAIL_BODY_RETENTION_DAYS' | 'EMAIL_RETENTION_DAYS'>,
): EmailPartitionSettings {
  return {
    daysAhead: config.EMAIL_PARTITION_DAYS_AHEAD,
    bodyRetentionDays: config.EMAIL_BODY_RETENTION_DAYS,
    retentionDays: config.EMAIL_RETENTION_DAYS,
  };
}

/** The id bounds of a UTC day: [first id of the day, first id of the next). */
function dayBounds(day: string): { from: string; to: string } {
  const start = dayStart(day);
  return { from: emailIdPrefixAt(start), to: emailIdPrefixAt(start + DAY_MS) };
}

const FAMILY: DayPartitionFamily = {
  lockName: 'mailrail:email-partitions',
  parents: [
    { table: 'Email', key: 'id' },
    { table: 'EmailEvent', key: '"emailId"' },
  ],
  bounds: dayBounds,
};

// An email still waiting to be sent keeps its body, and its partition: a scheduled email may be
// older than the retention (its schedule lies further out).
const UNSENT = `"latestStatus" IN ('QUEUED', 'SCHEDULED') AND "sesEmailId" IS NULL`;
const HAS_BODY = `(html IS NOT NULL OR text IS NOT NULL OR attachments IS NOT NULL OR "rawMessage" IS NOT NULL OR headers IS NOT NULL)`;

/**
 * Clears the bodies of one partition's emails, in batches walked by id (each a short statement that
 * locks only its rows); `olderThan` limits it to rows created before then (legacy and default
 * partitions, which span any time). Answers the rows cleared and whether unsent emails kept theirs.
 */
async function clearBodies(sql: SqlExecutor, table: string, olderThan: Date | null, batchSize: number) {
  let after = '';
  let cleared = 0;
  const age = olderThan ? `AND "createdAt" < $3` : '';
  for (;;) {
    const [row] = await sql.query<{ last: string | null; cleared: number }>(
      `WITH batch AS (SELECT id FROM "${table}" WHERE id > $1 ORDER BY id LIMIT $2),
            cleared AS (
              UPDATE "${table}" e SET html = NULL, text = NULL, attachments = NULL, "rawMessage" = NULL, headers = NULL
                FROM batch WHERE e.id = batch.id AND ${HAS_BODY} AND NOT (${UNSENT}) ${age}
              RETURNING 1)
       SELECT (SELECT max(id) FROM batch) AS last, (SELECT count(*) FROM cleared)::int AS cleared`,
      olderThan ? [after, batchSize, olderThan] : [after, batchSize],
    );
    cleared += row.cleared;
    if (row.last === null) break;
    after = row.last;
  }
  const [unsent] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${table}" WHERE ${UNSENT} AND ${HAS_BODY} ${olderThan ? `AND "createdAt" < $1` : ''}`,
    olderThan ? [olderThan] : [],
  );
  return { cleared, unsentKept: unsent.n > 0 };
}

async function hasUnsent(sql: SqlExecutor, table: string): Promise<boolean> {
  const [found] = await sql.query<{ oid: string | null }>(`SELECT to_regclass($1)::text AS oid`, [`"${table}"`]);
  if (!found.oid) return false;
  const rows = await sql.query(`SELECT 1 FROM "${table}" WHERE ${UNSENT} LIMIT 1`);
  return rows.length > 0;
}

/**
 * One run of the job: partitions ahead, bodies past their retention, days past theirs. Safe to
 * run at any time and on several replicas (each step is conditional and takes an advisory lock).
 */
export async function maintainEmailPartitions(
  sql: TransactionalSqlExecutor,
  settings: EmailPartitionSettings,
  now: Date,
): Promise<EmailPartitionReport> {
  const report: EmailPartitionReport = { ...emptyDayPartitionReport(), bodiesCleared: 0 };

  // Ahead first: an insert must always find its day (the DEFAULT partition is only a safety net).
  await createDaysAhead(sql, FAMILY, settings, now, report);

  if (settings.bodyRetentionDays > 0) {
    // A day partition is cleared whole once its last possible email is past the retention.
    const cutoff = new Date(now.getTime() - settings.bodyRetentionDays * DAY_MS);
    // Legacy and default partitions span any time: walked once a day, for their rows past the cutoff.
    const walkedToday = `${BODIES_CLEARED} up to ${partitionDay(now)}`;
    for (const p of await partitionsOf(sql, 'Email')) {
      const day = dayOf('Email', p.name);
      if (p.note === (day ? BODIES_CLEARED : walkedToday)) continue;
      if (day && dayStart(day) + DAY_MS > cutoff.getTime()) continue;
      const { cleared, unsentKept } = await clearBodies(sql, p.name, day ? null : cutoff, settings.batchSize ?? 5000);
      report.bodiesCleared += cleared;
      if (!day) await sql.execute(`COMMENT ON TABLE "${p.name}" IS '${walkedToday}'`);
      else if (!unsentKept) await sql.execute(`COMMENT ON TABLE "${p.name}" IS '${BODIES_CLEARED}'`);
    }
  }

  await dropDaysPastRetention(sql, FAMILY, settings, now, report, async (day) =>
    (await hasUnsent(sql, `Email_p${day}`)) ? `Email_p${day}` : null,
  );
  return report;
}
