import { BudgetFull, type BudgetGate } from '@mailrail/platform/budgets/budget-gate';
import type { Clock } from '@mailrail/platform/clock';
import type { Config } from '@mailrail/platform/config/schema';
import { readCommitOrdered } from '@mailrail/platform/db/sql/commit-ordered-feed';
import {
  setLocalStatementTimeout,
  withTransaction,
  type SqlExecutor,
  type TransactionalSqlExecutor,
} from '@mailrail/platform/db/sql/executor';
import { newId } from '@mailrail/platform/ids';
import type { Logger } from '@mailrail/platform/log/logger';
import {
  isSegmentGroup,
  segmentFilterCostProblem,
  storedSegmentFilter,
  type SegmentFilter,
} from '@mailrail/domain/audience/segments/segment-filter';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { dateTriggerDue, type DateTrigger } from '@mailrail/domain/automations/date-trigger';
import { activeAutomations, enroll, type ActiveAutomation } from './enroll-runs';

// The triggers that watch contacts rather than events (docs/automations.md, "Segment entry" and
// "Date trigger"). Each automation's work runs in ONE transaction that locks its state row
// (SKIP LOCKED), so what it records (memberships, schedules, cursors) and the runs it enrolls
// commit together; a crash re-does the batch. Which contacts are looked at, never the whole book
// at once:
//   - the book's changed contacts, in commit order (Contact.changedTxid, stamped on insert and on
//     every update by a database trigger), as enrollment reads events;
//   - for a segment, the contacts whose address had new email activity (the team's email.* events);
//   - a pass over the book in keyset batches by contact id: the first one records the segment's
//     members at activation without enrolling them (entering is a change) or fills the date
//     schedule; for a segment whose filter reads the email activity window (it changes with time
//     alone: "not opened within 30 days"), a new pass starts every RESCAN_EVERY_MS.
// Each team's contacts evaluated per tick are at most `perTeam` (AUTOMATION_TEAM_BUDGET), over all
// of its automations; a segment's batch takes a place of the team's segment budget (none free: the
// next tick), its filter must be within the segment cost budget and each statement stops at
// SEGMENT_QUERY_TIMEOUT_MS; a failure is logged and the next automation goes on.

/** How often a segment whose filter reads the email activity window is evaluated again over the whole book. */
export const RESCAN_EVERY_MS = 3_600_000;

export interface ContactTriggerDeps {
  sql: TransactionalSqlExecutor;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'SEGMENT_QUERY_TIMEOUT_MS'>;
  /** A segment's evaluation takes a place of the team's segment budget, as the API's previews and counts do. */
  budgets: Pick<BudgetGate, 'run'>;
}

interface TriggerState {
  triggerKey: string;
  enrollFromTxid: string;
  since: Date;
  baselineDone: boolean;
  scanAfter: string;
  passStartedAt: Date;
  contactsTxid: string;
  contactsLastId: string;
  eventsTxid: string;
  eventsLastId: string;
}

const ACTIVITY_EVENTS = new Set(['email.delivered', 'email.opened', 'email.clicked']);

/** Advances every active segment-entry and date trigger, at most `perTeam` contacts per team. */
export async function advanceContactTriggers(deps: ContactTriggerDeps, perTeam: number): Promise<{ evaluated: number; enrolled: number }> {
  const watching = (await activeAutomations(deps.sql)).filter(
    (a) => a.def.trigger.type === 'segmentEntered' || a.def.trigger.type === 'date',
  );
  if (!watching.length) return { evaluated: 0, enrolled: 0 };
  // The least recently advanced first, so a team's automations share its budget in turn.
  const touched = new Map(
    (
      await deps.sql.query<{ automationId: string; updatedAt: Date }>(
        `SELECT "automationId", "updatedAt" FROM "AutomationTriggerState" WHERE "automationId" = ANY($1::text[])`,
        [watching.map((a) => a.id)],
      )
    ).map((r) => [r.automationId, r.updatedAt.getTime()]),
  );
  watching.sort((x, y) => (touched.get(x.id) ?? 0) - (touched.get(y.id) ?? 0));
  const left = new Map<number, number>();
  const total = { evaluated: 0, enrolled: 0 };
  for (const a of watching) {
    const budget = left.get(a.teamId) ?? perTeam;
    if (budget <= 0) continue;
    try {
      const batch = () => withTransaction(deps.sql, (tx) => advanceOne(tx, deps, a, budget));
      const r = a.def.trigger.type === 'segmentEntered' ? await deps.budgets.run('segment', a.teamId, batch) : await batch();
      left.set(a.teamId, budget - r.evaluated);
      total.evaluated += r.evaluated;
      total.enrolled += r.enrolled;
    } catch (err) {
      // The team's segment budget is taken (previews, counts, campaign checks): next tick.
      if (err instanceof BudgetFull) continue;
      // The batch rolled back and is taken again next tick; other automations and teams go on.
      deps.log.error({ err, automationId: a.id }, 'automation trigger batch failed; retried next tick');
      left.set(a.teamId, 0);
    }
  }
  return total;
}

async function lockState(tx: SqlExecutor, a: ActiveAutomation, now: Date): Promise<TriggerState | null> {
  const key = JSON.stringify(a.def.trigger);
  const from = a.enrollFromTxid.toString();
  await tx.execute(
    `INSERT INTO "AutomationTriggerState" ("automationId", "teamId", "triggerKey", "enrollFromTxid", since, "passStartedAt", "contactsTxid", "eventsTxid", "updatedAt")
     VALUES ($1, $2, $3, $4::bigint, $5, $5, $4::bigint, $4::bigint, $5) ON CONFLICT DO NOTHING`,
    [a.id, a.teamId, key, from, now],
  );
  const [state] = await tx.query<TriggerState>(
    `SELECT "triggerKey", "enrollFromTxid"::text AS "enrollFromTxid", since, "baselineDone", "scanAfter", "passStartedAt",
            "contactsTxid"::text AS "contactsTxid", "contactsLastId", "eventsTxid"::text AS "eventsTxid", "eventsLastId"
       FROM "AutomationTriggerState" WHERE "automationId" = $1 FOR UPDATE SKIP LOCKED`,
    [a.id],
  );
  if (!state || (state.triggerKey === key && state.enrollFromTxid === from)) return state ?? null;
  // A new trigger, or a new activation (resume): start over from now, as a new automation would.
  if (state.triggerKey !== key) await tx.execute(`DELETE FROM "AutomationDateSchedule" WHERE "automationId" = $1`, [a.id]);
  const fresh: TriggerState = {
    triggerKey: key,
    enrollFromTxid: from,
    since: now,
    baselineDone: false,
    scanAfter: '',
    passStartedAt: now,
    contactsTxid: from,
    contactsLastId: '',
    eventsTxid: from,
    eventsLastId: '',
  };
  return fresh;
}

async function saveState(tx: SqlExecutor, automationId: string, s: TriggerState, now: Date) {
  await tx.execute(
    `UPDATE "AutomationTriggerState"
        SET "triggerKey" = $2, "enrollFromTxid" = $3::bigint, since = $4, "baselineDone" = $5, "scanAfter" = $6, "passStartedAt" = $7,
            "contactsTxid" = $8::bigint, "contactsLastId" = $9, "eventsTxid" = $10::bigint, "eventsLastId" = $11, "updatedAt" = $12
      WHERE "automationId" = $1`,
    [
      automationId,
      s.triggerKey,
      s.enrollFromTxid,
      s.since,
      s.baselineDone,
      s.scanAfter,
      s.passStartedAt,
      s.contactsTxid,
      s.contactsLastId,
      s.eventsTxid,
      s.eventsLastId,
      now,
    ],
  );
}

/** Whether the filter reads the email activity window: its truth then changes with time, no row changing. */
function readsActivityWindow(filter: SegmentFilter): boolean {
  return filter.conditions
    .flatMap((item) => (isSegmentGroup(item) ? item.conditions : [item]))
    .some((c) => c.field === 'emailActivity' && c.operator.endsWith('Within'));
}

interface Watcher {
  bookId: string;
  /** Evaluates these contacts of the book; `mayEnroll` false records only (the baseline). Answers the runs enrolled. */
  evaluate(ids: string[], mayEnroll: boolean): Promise<number>;
  /** Whether a pass over the book is due beyond the first. */
  rescan: boolean;
  /** Reads the team's email activity events (segments). */
  watchesActivity: boolean;
  /** Changes count only after the first pass (a segment's baseline). */
  changesAfterBaseline: boolean;
}

async function advanceOne(tx: SqlExecutor, deps: ContactTriggerDeps, a: ActiveAutomation, limit: number) {
  const now = deps.clock.now();
  const state = await lockState(tx, a, now);
  if (!state) return { evaluated: 0, enrolled: 0 };
  const watcher = await watcherFor(tx, deps, a, state, now);
  let evaluated = 0;
  let enrolled = 0;
  if (!watcher) {
    await saveState(tx, a.id, state, now);
    return { evaluated, enrolled };
  }
  const t = a.def.trigger;
  if (t.type === 'date') enrolled += await fireDue(tx, a, now, limit);

  // 1. What changed since the cursor: the book's contacts, and (segments) addresses with new activity.
  if (state.baselineDone || !watcher.changesAfterBaseline) {
    const changed = await readCommitOrdered<{ contactBookId: string }>(tx, {
      table: `(SELECT id, "changedTxid" AS txid, "contactBookId" FROM "Contact") c`,
      where: `"contactBookId" = $1`,
      params: [watcher.bookId],
      columns: '"contactBookId"',
      after: { txid: state.contactsTxid, id: state.contactsLastId },
      limit,
    });
    if (changed.length) {
      enrolled += await watcher.evaluate(
        changed.map((r) => r.id),
        true,
      );
      evaluated += changed.length;
      [state.contactsTxid, state.contactsLastId] = [changed[changed.length - 1].txid, changed[changed.length - 1].id];
    }
    if (watcher.watchesActivity && evaluated < limit) {
      const events = await readCommitOrdered<{ contactId: string; name: string }>(tx, {
        table: '"Event"',
        where: '"teamId" = $1',
        params: [a.teamId],
        columns: '"contactId", name',
        after: { txid: state.eventsTxid, id: state.eventsLastId },
        limit: limit - evaluated,
      });
      if (events.length) {
        const contacts = [...new Set(events.filter((e) => ACTIVITY_EVENTS.has(e.name)).map((e) => e.contactId))];
        // Activity is per address: the book's contact of the same address as the event's contact.
        const ids = contacts.length
          ? (
              await tx.query<{ id: string }>(
                `SELECT c.id FROM "Contact" c WHERE c."contactBookId" = $1 AND c.email IN (SELECT email FROM "Contact" WHERE id = ANY($2::text[]))`,
                [watcher.bookId, contacts],
              )
            ).map((r) => r.id)
          : [];
        if (ids.length) enrolled += await watcher.evaluate(ids, true);
        evaluated += events.length;
        [state.eventsTxid, state.eventsLastId] = [events[events.length - 1].txid, events[events.length - 1].id];
      }
    }
  }

  // 2. The pass over the book: the first one (baseline, fill), then again every RESCAN_EVERY_MS when due.
  const newPass =
    state.baselineDone && state.scanAfter === '' && watcher.rescan && now.getTime() - state.passStartedAt.getTime() >= RESCAN_EVERY_MS;
  if (newPass) state.passStartedAt = now;
  if ((!state.baselineDone || state.scanAfter !== '' || newPass) && evaluated < limit) {
    const batch = limit - evaluated;
    const ids = (
      await tx.query<{ id: string }>(`SELECT id FROM "Contact" WHERE "contactBookId" = $1 AND id > $2 ORDER BY id LIMIT $3`, [
        watcher.bookId,
        state.scanAfter,
        batch,
      ])
    ).map((r) => r.id);
    if (ids.length) enrolled += await watcher.evaluate(ids, state.baselineDone);
    evaluated += ids.length;
    if (ids.length < batch) [state.baselineDone, state.scanAfter] = [true, ''];
    else state.scanAfter = ids[ids.length - 1];
  }
  await saveState(tx, a.id, state, now);
  return { evaluated, enrolled };
}

async function watcherFor(
  tx: SqlExecutor,
  deps: ContactTriggerDeps,
  a: ActiveAutomation,
  state: TriggerState,
  now: Date,
): Promise<Watcher | null> {
  const t = a.def.trigger;
  if (t.type === 'date')
    return {
      bookId: t.contactBookId,
      evaluate: (ids) => scheduleContacts(tx, a.id, t, ids, state.since),
      rescan: false,
      watchesActivity: false,
      changesAfterBaseline: false,
    };
  if (t.type !== 'segmentEntered') return null;
  const [segment] = await tx.query<{ contactBookId: string; filter: unknown }>(
    `SELECT "contactBookId", filter FROM "Segment" WHERE id = $1 AND "teamId" = $2`,
    [t.segmentId, a.teamId],
  );
  if (!segment) return null; // deleted: nobody enters it
  const filter = storedSegmentFilter(segment.filter);
  const problem = segmentFilterCostProblem(filter);
  if (problem) {
    deps.log.warn({ automationId: a.id, segmentId: t.segmentId, problem }, 'segment over the cost budget: its entry trigger waits');
    return null;
  }
  await setLocalStatementTimeout(tx, deps.config.SEGMENT_QUERY_TIMEOUT_MS);
  return {
    bookId: segment.contactBookId,
    evaluate: (ids, mayEnroll) => evaluateMembers(tx, a, segment.contactBookId, filter, ids, mayEnroll, now),
    rescan: readsActivityWindow(filter),
    watchesActivity: filter.conditions
      .flatMap((item) => (isSegmentGroup(item) ? item.conditions : [item]))
      .some((c) => c.field === 'emailActivity'),
    changesAfterBaseline: true,
  };
}

/**
 * The segment's filter on these contacts, through the segment compiler (one rule with segments and
 * campaigns), against the recorded membership: a contact matching now and not recorded entered
 * (enrolled unless this is the baseline); one recorded and not matching left.
 */
async function evaluateMembers(
  tx: SqlExecutor,
  a: ActiveAutomation,
  bookId: string,
  filter: SegmentFilter,
  ids: string[],
  mayEnroll: boolean,
  now: Date,
): Promise<number> {
  const params: unknown[] = [bookId, ids, a.id];
  const matches = segmentFilterSql(filter, 'c', { teamId: a.teamId, now }, params);
  const rows = await tx.query<{ id: string; matches: boolean | null; member: boolean }>(
    `SELECT c.id, ${matches} AS matches,
            EXISTS (SELECT 1 FROM "AutomationSegmentMember" m WHERE m."automationId" = $3 AND m."contactId" = c.id) AS member
       FROM "Contact" c WHERE c."contactBookId" = $1 AND c.id = ANY($2::text[]) ORDER BY c.id`,
    params,
  );
  const entered = rows.filter((r) => r.matches === true && !r.member).map((r) => r.id);
  const left = rows.filter((r) => r.matches !== true && r.member).map((r) => r.id);
  if (entered.length)
    await tx.execute(
      `INSERT INTO "AutomationSegmentMember" ("automationId", "contactId", since) SELECT $1, c, $3 FROM unnest($2::text[]) AS c ON CONFLICT DO NOTHING`,
      [a.id, entered, now],
    );
  if (left.length)
    await tx.execute(`DELETE FROM "AutomationSegmentMember" WHERE "automationId" = $1 AND "contactId" = ANY($2::text[])`, [a.id, left]);
  if (!mayEnroll) return 0;
  const t = a.def.trigger;
  const source = t.type === 'segmentEntered' ? `segment:${t.segmentId}` : 'segment';
  // Each entry its own key: under everyTime, leaving and entering again is a new run.
  return enroll(
    tx,
    now,
    a,
    entered.map((contactId) => ({ entry: { contactId, entryKey: `segment:${newId()}`, sourceId: source }, context: {} })),
  );
}

/**
 * The date trigger's due time for these contacts of the book, from the contact as stored now. A
 * due time before the trigger's state began (activation) never fires; nor a day it fired for already.
 */
async function scheduleContacts(tx: SqlExecutor, automationId: string, t: DateTrigger, ids: string[], since: Date): Promise<number> {
  const contacts = await tx.query<{
    id: string;
    createdAt: Date;
    properties: unknown;
    dateValue: string | null;
    firedValue: string | null;
    known: boolean;
  }>(
    `SELECT c.id, c."createdAt", c.properties, s."dateValue", s."firedValue", s."contactId" IS NOT NULL AS known
       FROM "Contact" c LEFT JOIN "AutomationDateSchedule" s ON s."automationId" = $3 AND s."contactId" = c.id
      WHERE c."contactBookId" = $1 AND c.id = ANY($2::text[]) ORDER BY c.id`,
    [t.contactBookId, ids, automationId],
  );
  const upserts = contacts.flatMap((c) => {
    const properties =
      c.properties && typeof c.properties === 'object' && !Array.isArray(c.properties) ? (c.properties as Record<string, unknown>) : {};
    const due = dateTriggerDue(t, { createdAt: c.createdAt, properties });
    if (!due && !c.known) return [];
    const dueAt = due && due.dueAt >= since && due.dateValue !== c.firedValue ? due.dueAt : null;
    return [{ id: c.id, dateValue: due?.dateValue ?? null, dueAt }];
  });
  if (upserts.length)
    await tx.execute(
      `INSERT INTO "AutomationDateSchedule" ("automationId", "contactId", "dateValue", "dueAt")
       SELECT $1, u.id, u.day, u.due FROM unnest($2::text[], $3::text[], $4::timestamptz[]) AS u(id, day, due)
       ON CONFLICT ("automationId", "contactId") DO UPDATE SET "dateValue" = EXCLUDED."dateValue", "dueAt" = EXCLUDED."dueAt"`,
      [automationId, upserts.map((u) => u.id), upserts.map((u) => u.dateValue), upserts.map((u) => u.dueAt)],
    );
  return 0;
}

/** Enrolls the contacts whose due time has come (earliest first, at most `limit`), once per date value. */
async function fireDue(tx: SqlExecutor, a: ActiveAutomation, now: Date, limit: number): Promise<number> {
  const due = await tx.query<{ contactId: string; dateValue: string }>(
    `SELECT "contactId", "dateValue" FROM "AutomationDateSchedule" WHERE "automationId" = $1 AND "dueAt" <= $2 ORDER BY "dueAt", "contactId" LIMIT $3`,
    [a.id, now, limit],
  );
  const enrolled = await enroll(
    tx,
    now,
    a,
    due.map((d) => ({ entry: { contactId: d.contactId, entryKey: `date:${d.dateValue}`, sourceId: `date:${d.dateValue}` }, context: {} })),
  );
  if (due.length)
    await tx.execute(
      `UPDATE "AutomationDateSchedule" SET "dueAt" = NULL, "firedValue" = "dateValue" WHERE "automationId" = $1 AND "contactId" = ANY($2::text[])`,
      [a.id, due.map((d) => d.contactId)],
    );
  return enrolled;
}
