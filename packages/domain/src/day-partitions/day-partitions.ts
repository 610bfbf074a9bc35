import { hasSqlState } from '@mailrail/platform/db/sql/postgres-error';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';

// Tables partitioned by UTC day, one rule for all of them: the email log ("Email", "EmailEvent";
// email-log/email-partitions.ts) and the request log ("RequestLog"; request-log/request-log-partitions.ts).
// A family is one or more parents whose day partitions are created together and dropped together
// ("Email_p20261124" and "EmailEvent_p20261124"), beside each parent's DEFAULT partition
// ("<parent>_default", a safety net: any row no day partition covers). A job keeps `daysAhead` days
// created ahead and drops whole days past the retention: rows are never deleted one by one.
//
// Every DDL step runs in its own short transaction under a lock_timeout and is retried: creating or
// dropping a partition needs a brief lock on the parent, which must never queue the write path
// behind a long query for more than the timeout.

export const DAY_MS = 86_400_000;

export interface DayPartitionedParent {
  table: string;
  /** The partition key as written in SQL ("id", '"createdAt"'). */
  key: string;
}

export interface DayPartitionFamily {
  /** Names the family's advisory lock: one replica at a time runs a step. */
  lockName: string;
  /** Created in this order, dropped in the reverse order. */
  parents: readonly DayPartitionedParent[];
  /** The partition key bounds of a UTC day as SQL literals: [first of the day, first of the next). */
  bounds(day: string): { from: string; to: string };
}

export interface DayPartitionSettings {
  /** Days of partitions kept ahead of today (UTC). */
  daysAhead: number;
  /** Days after which whole days are dropped; 0 = kept. */
  retentionDays: number;
  /** lock_timeout of each DDL statement, in milliseconds. */
  lockTimeoutMs?: number;
  /** Attempts of a DDL step that timed out on its lock (with a growing pause between them). */
  attempts?: number;
}

export interface DayPartitionReport {
  created: string[];
  /** Day partitions not created because the DEFAULT partition already holds rows of that day. */
  blocked: string[];
  dropped: string[];
  /** Partitions kept past retention because the family's `keep` said so. */
  kept: string[];
  /** DDL steps given up after every attempt timed out on its lock (the next run tries again). */
  lockTimeouts: number;
  /** Longest wait of one successful partition drop for its locks, in milliseconds. */
  longestDropLockWaitMs: number;
  /** Longest time one successful partition drop took (lock wait, drop and commit), in milliseconds. */
  longestDropMs: number;
}

export const emptyDayPartitionReport = (): DayPartitionReport => ({
  created: [],
  blocked: [],
  dropped: [],
  kept: [],
  lockTimeouts: 0,
  longestDropLockWaitMs: 0,
  longestDropMs: 0,
});

/** The UTC day partition name suffix of a date: 20261124. */
export function partitionDay(at: Date): string {
  return at.toISOString().slice(0, 10).replace(/-/g, '');
}

/** The instant (ms) a UTC day (20261124) starts. */
export function dayStart(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));
}

export interface PartitionRow {
  name: string;
  note: string | null;
}

/** The partitions of a parent, by name, with their table comment (the email log notes cleared bodies there). */
export async function partitionsOf(sql: SqlExecutor, parent: string): Promise<PartitionRow[]> {
  return sql.query<PartitionRow>(
    `SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS note
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
    [`"${parent}"`],
  );
}

/** The day of a day partition's name ("Email_p20261124" -> 20261124); null for any other partition. */
export const dayOf = (parent: string, name: string): string | null =>
  name.startsWith(`${parent}_p`) && /^\d{8}$/.test(name.slice(parent.length + 2)) ? name.slice(parent.length + 2) : null;

/** Runs `step` in a transaction under the lock timeout, retrying lock timeouts; false when every attempt timed out. */
async function ddlStep(
  sql: TransactionalSqlExecutor,
  family: DayPartitionFamily,
  settings: DayPartitionSettings,
  report: DayPartitionReport,
  step: (tx: SqlExecutor) => Promise<void>,
  onDone?: (ms: number) => void,
): Promise<boolean> {
  const attempts = settings.attempts ?? 10;
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    try {
      const ran = await sql.transaction(async (tx) => {
        const [lock] = await tx.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok`, [family.lockName]);
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
 * Creates the day's partition of every parent: an empty table attached in one short transaction.
 * ATTACH alone takes only a SHARE UPDATE EXCLUSIVE lock on the parent, but then an insert that
 * routed its row to the DEFAULT partition before the attach committed fails its partition check
 * after it (23514, seen behind PgBouncer in test/scale/pgbouncer.test.ts). So the parent is locked
 * against writes first (SHARE ROW EXCLUSIVE, under the step's lock_timeout): running inserts finish,
 * new ones wait the few milliseconds of the attach, and the check that the DEFAULT partition holds
 * nothing of that day cannot be raced. A day whose rows the DEFAULT partition already
 * caught is left there: moving live rows between partitions could hide them from a statement that
 * planned before the move, so that day stays in the DEFAULT partition (reported as `blocked`).
 */
async function createDay(
  sql: TransactionalSqlExecutor,
  family: DayPartitionFamily,
  settings: DayPartitionSettings,
  report: DayPartitionReport,
  day: string,
) {
  const { from, to } = family.bounds(day);
  for (const { table, key } of family.parents) {
    const name = `${table}_p${day}`;
    const inDay = `${key} >= '${from}' AND ${key} < '${to}'`;
    try {
      await ddlStep(sql, family, settings, report, async (tx) => {
        const [exists] = await tx.query(`SELECT 1 FROM pg_class WHERE relname = $1 AND relkind = 'r'`, [name]);
        if (exists) return;
        await tx.execute(`LOCK TABLE ONLY "${table}" IN SHARE ROW EXCLUSIVE MODE`);
        if ((await tx.query(`SELECT 1 FROM "${table}_default" WHERE ${inDay} LIMIT 1`)).length) return void report.blocked.push(name);
        await tx.execute(`CREATE TABLE "${name}" (LIKE "${table}" INCLUDING DEFAULTS)`);
        await tx.execute(`ALTER TABLE "${table}" ATTACH PARTITION "${name}" FOR VALUES FROM ('${from}') TO ('${to}')`);
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
 * Drops a day of every parent, in the reverse order of creation (the email log's events before
 * their emails). Dropping a partition takes an ACCESS EXCLUSIVE lock on its parent: taken first and
 * explicitly (parent, then partition, the order every query takes them in), so its wait is measured.
 */
async function dropDay(
  sql: TransactionalSqlExecutor,
  family: DayPartitionFamily,
  settings: DayPartitionSettings,
  report: DayPartitionReport,
  day: string,
) {
  for (const { table } of [...family.parents].reverse()) {
    const name = `${table}_p${day}`;
    await ddlStep(
      sql,
      family,
      settings,
      report,
      async (tx) => {
        const [found] = await tx.query<{ oid: string | null }>(`SELECT to_regclass($1)::text AS oid`, [`"${name}"`]);
        if (!found.oid) return;
        const started = performance.now();
        await tx.execute(`LOCK TABLE ONLY "${table}" IN ACCESS EXCLUSIVE MODE`);
        await tx.execute(`LOCK TABLE "${name}" IN ACCESS EXCLUSIVE MODE`);
        report.longestDropLockWaitMs = Math.max(report.longestDropLockWaitMs, performance.now() - started);
        await tx.execute(`DROP TABLE "${name}"`);
        report.dropped.push(name);
      },
      (ms) => (report.longestDropMs = Math.max(report.longestDropMs, ms)),
    );
  }
}

/** Creates today's and the next `daysAhead` days' partitions that are missing. */
export async function createDaysAhead(
  sql: TransactionalSqlExecutor,
  family: DayPartitionFamily,
  settings: DayPartitionSettings,
  now: Date,
  report: DayPartitionReport,
): Promise<void> {
  const today = dayStart(partitionDay(now));
  const existing = [];
  for (const { table } of family.parents) existing.push(new Set((await partitionsOf(sql, table)).map((p) => dayOf(table, p.name))));
  for (let d = 0; d <= settings.daysAhead; d++) {
    const day = partitionDay(new Date(today + d * DAY_MS));
    if (existing.some((days) => !days.has(day))) await createDay(sql, family, settings, report, day);
  }
}

/**
 * Drops the days whose last instant is past the retention (none when it is 0); a day `keep`
 * answers a partition name for stays, that name reported in `kept`.
 */
export async function dropDaysPastRetention(
  sql: TransactionalSqlExecutor,
  family: DayPartitionFamily,
  settings: DayPartitionSettings,
  now: Date,
  report: DayPartitionReport,
  keep: (day: string) => Promise<string | null> = async () => null,
): Promise<void> {
  if (settings.retentionDays <= 0) return;
  const cutoff = now.getTime() - settings.retentionDays * DAY_MS;
  const days = new Set<string>();
  for (const { table } of family.parents) {
    for (const p of await partitionsOf(sql, table)) {
      const day = dayOf(table, p.name);
      if (day && dayStart(day) + DAY_MS <= cutoff) days.add(day);
    }
  }
  for (const day of [...days].sort()) {
    const kept = await keep(day);
    if (kept) report.kept.push(kept);
    else await dropDay(sql, family, settings, report, day);
  }
}
