import type { Config } from '@mailrail/platform/config/schema';
import { emailIdPrefixAt } from '@mailrail/platform/ids';
import { hasSqlState } from '@mailrail/platform/db/sql/postgres-error';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';

// The email log's partitions (docs/email-log.md). "Email" is partitioned BY RANGE (id) and
// "EmailEvent" BY RANGE ("emailId"), one partition per UTC day ("Email_p20261124" holds the ids
// minted that day), beside "Email_legacy" (random ids from before ids were time-ordered) and the
// DEFAULT partition "Email_default" (a safety net: any id no day partition covers). This job
// keeps `daysAhead` days of partitions ahead, clears bodies past EMAIL_BODY_RETENTION_DAYS one
// partition at a time, and drops whole days past EMAIL_RETENTION_DAYS: rows are never deleted.
//
// Every DDL step runs in its own short transaction under a lock_timeout and is retried: creating or
// dropping a partition needs a brief lock on the parent, which must never queue the send path
// behind a long query for more than the timeout.

const PARENTS = ['Email', 'EmailEvent'] as const;
type Parent = (typeof PARENTS)[number];
const KEY: Record<Parent, string> = { Email: 'id', EmailEvent: '"emailId"' };
const DAY_MS = 86_400_000;
const BODIES_CLEARED = 'bodies cleared';
// One replica at a time runs a step (the periodic registry already runs each tick once).
const ADVISORY_LOCK = "hashtext('mailrail:email-partitions')";

export interface EmailPartitionSettings {
  /** Days of partitions kept ahead of today (UTC). */
  daysAhead: number;
  /** Days after which html, text, attachments, rawMessage and headers are cleared; 0 = kept. */
  bodyRetentionDays: number;
  /** Days after which whole days of emails and events are dropped; 0 = kept. */
  retentionDays: number;
  /** lock_timeout of each DDL statement, in milliseconds. */
  lockTimeoutMs?: number;
  /** Attempts of a DDL step that timed out on its lock (with a growing pause between them). */
  attempts?: number;
  /** Rows per UPDATE when clearing bodies. */
  batchSize?: number;
}

export interface EmailPartitionReport {
  created: string[];
  /** Day partitions not created because the DEFAULT partition already holds rows of that day. */
  blocked: string[];
  dropped: string[];
  /** Partitions kept past retention because they still hold unsent emails. */
  kept: string[];
  bodiesCleared: number;
  /** DDL steps given up after every attempt timed out on its lock (the next run tries again). */
  lockTimeouts: number;
  /** Longest wait of one successful partition drop for its locks, in milliseconds. */
  longestDropLockWaitMs: number;
  /** Longest time one successful partition drop took (lock wait, drop and commit), in milliseconds. */
  longestDropMs: number;
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

/** The UTC day partition name suffix of a date: 20261124. */
export function partitionDay(at: Date): string {
  return at.toISOString().slice(0, 10).replace(/-/g, '');
}

function dayStart(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));
}

/** The id bounds of a UTC day: [first id of the day, first id of the next). */
export function dayBounds(day: string): { from: string; to: string } {
  const start = dayStart(day);
  return { from: emailIdPrefixAt(start), to: emailIdPrefixAt(start + DAY_MS) };
}

interface PartitionRow {
  name: string;
  note: string | null;
}

async function partitionsOf(sql: SqlExecutor, parent: Parent): Promise<PartitionRow[]> {
  return sql.query<PartitionRow>(
    `SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS note
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
    [`"${parent}"`],
  );
}

const dayOf = (parent: Parent, name: string): string | null => name.match(new RegExp(`^${parent}_p(\\d{8})$`))?.[1] ?? null;

/** Runs `step` in a transaction under the lock timeout, retrying lock timeouts; false when every attempt timed out. */
async function ddlStep(
  sql: TransactionalSqlExecutor,
  settings: EmailPartitionSettings,
  report: EmailPartitionReport,
  step: (tx: SqlExecutor) => Promise<void>,
  onDone?: (ms: number) => void,
): Promise<boolean> {
  const attempts = settings.attempts ?? 10;
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    try {
      const ran = await sql.transaction(async (tx) => {
        const [lock] = await tx.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(${ADVISORY_LOCK}) AS ok`);
        if (!lock.ok) return false;
        await tx.execute(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(settings.lockTimeoutMs ?? 50))}`);
        await step(tx);
        return true;
      });
      if (ran) onDone?.(performance.now() - started);
      return ran;
    } catch (err) {
      if (!hasSqlState(err, '55P03')) throw err;
      if (attempt >= attempts) {
        report.lockTimeouts++;
        return false;
      }
      await new Promise((r) => setTimeout(r, Math.min(2000, 100 * attempt) + Math.random() * 100));
    }
  }
}

/**
 * Creates the day's partition of both tables: an empty table attached in one short transaction.
 * ATTACH alone takes only a SHARE UPDATE EXCLUSIVE lock on the parent, but then an insert that
 * routed its row to the DEFAULT partition before the attach committed fails its partition check
 * after it (23514, seen behind PgBouncer in test/scale/pgbouncer.test.ts). So the parent is locked
 * against writes first (SHARE ROW EXCLUSIVE, under the step's lock_timeout): running inserts finish,
 * new ones wait the few milliseconds of the attach, and the check that the DEFAULT partition holds
 * nothing of that day cannot be raced. A day whose rows the DEFAULT partition already
 * caught is left there: moving live rows between partitions could hide them from a statement that
 * planned before the move, so that day stays in the DEFAULT partition (reported as `blocked`).
 */
async function createDay(sql: TransactionalSqlExecutor, settings: EmailPartitionSettings, report: EmailPartitionReport, day: string) {
  const { from, to } = dayBounds(day);
  for (const parent of PARENTS) {
    const name = `${parent}_p${day}`;
    const inDay = `${KEY[parent]} >= '${from}' AND ${KEY[parent]} < '${to}'`;
    try {
      await ddlStep(sql, settings, report, async (tx) => {
        const [exists] = await tx.query(`SELECT 1 FROM pg_class WHERE relname = $1 AND relkind = 'r'`, [name]);
        if (exists) return;
        await tx.execute(`LOCK TABLE ONLY "${parent}" IN SHARE ROW EXCLUSIVE MODE`);
        if ((await tx.query(`SELECT 1 FROM "${parent}_default" WHERE ${inDay} LIMIT 1`)).length) return void report.blocked.push(name);
        await tx.execute(`CREATE TABLE "${name}" (LIKE "${parent}" INCLUDING DEFAULTS)`);
        await tx.execute(`ALTER TABLE "${parent}" ATTACH PARTITION "${name}" FOR VALUES FROM ('${from}') TO ('${to}')`);
        report.created.push(name);
      });
    } catch (err) {
      // A row of that day reached the DEFAULT partition meanwhile: the day stays there.
      if (!hasSqlState(err, '23514')) throw err;
      report.blocked.push(name);
    }
  }
}

/**
 * Drops a day of emails and their events (events first: an email never outlives its events'
 * partition). Dropping a partition takes an ACCESS EXCLUSIVE lock on its parent: taken first and
 * explicitly (parent, then partition, the order every query takes them in), so its wait is measured.
 */
async function dropDay(sql: TransactionalSqlExecutor, settings: EmailPartitionSettings, report: EmailPartitionReport, day: string) {
  for (const parent of ['EmailEvent', 'Email'] as const) {
    const name = `${parent}_p${day}`;
    await ddlStep(
      sql,
      settings,
      report,
      async (tx) => {
        const [found] = await tx.query<{ oid: string | null }>(`SELECT to_regclass($1)::text AS oid`, [`"${name}"`]);
        if (!found.oid) return;
        const started = performance.now();
        await tx.execute(`LOCK TABLE ONLY "${parent}" IN ACCESS EXCLUSIVE MODE`);
        await tx.execute(`LOCK TABLE "${name}" IN ACCESS EXCLUSIVE MODE`);
        report.longestDropLockWaitMs = Math.max(report.longestDropLockWaitMs, performance.now() - started);
        await tx.execute(`DROP TABLE "${name}"`);
        report.dropped.push(name);
      },
      (ms) => (report.longestDropMs = Math.max(report.longestDropMs, ms)),
    );
  }
}

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
  const report: EmailPartitionReport = {
    created: [],
    blocked: [],
    dropped: [],
    kept: [],
    bodiesCleared: 0,
    lockTimeouts: 0,
    longestDropLockWaitMs: 0,
    longestDropMs: 0,
  };
  const today = dayStart(partitionDay(now));

  // Ahead first: an insert must always find its day (the DEFAULT partition is only a safety net).
  const existing = new Set((await partitionsOf(sql, 'Email')).map((p) => dayOf('Email', p.name)).filter(Boolean));
  const events = new Set((await partitionsOf(sql, 'EmailEvent')).map((p) => dayOf('EmailEvent', p.name)).filter(Boolean));
  for (let d = 0; d <= settings.daysAhead; d++) {
    const day = partitionDay(new Date(today + d * DAY_MS));
    if (!existing.has(day) || !events.has(day)) await createDay(sql, settings, report, day);
  }

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

  if (settings.retentionDays > 0) {
    const cutoff = now.getTime() - settings.retentionDays * DAY_MS;
    const days = new Set<string>();
    for (const parent of PARENTS) {
      for (const p of await partitionsOf(sql, parent)) {
        const day = dayOf(parent, p.name);
        if (day && dayStart(day) + DAY_MS <= cutoff) days.add(day);
      }
    }
    for (const day of [...days].sort()) {
      if (await hasUnsent(sql, `Email_p${day}`)) {
        report.kept.push(`Email_p${day}`);
        continue;
      }
      await dropDay(sql, settings, report, day);
    }
  }
  return report;
}
