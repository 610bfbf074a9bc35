import type { Clock } from '@mailrail/platform/clock';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import { withTransaction } from '@mailrail/platform/db/sql/executor';
import { readCommitOrdered, visibleInSnapshot } from '@mailrail/platform/db/sql/commit-ordered-feed';
import { newId } from '@mailrail/platform/ids';
import { evaluateConditions, type RunContext } from '@mailrail/domain/automations/conditions';
import { definition, type Definition } from '@mailrail/domain/automations/definition';
import { loadConditionHooks, loadContact } from '@mailrail/domain/automations/run-facts';

// Enrollment reads each team's new events (and each watched book's new contacts) through a cursor
// in the order their transactions can no longer change (readCommitOrdered), so a row committed
// late can never fall behind the cursor unseen. Why a cursor
// rather than enrolling in the transaction that records the event: mailrail's built-in events are
// written by many paths (API, worker, SES events), and this reader sees them all with no change to
// any of them; enrollment also stays off the API's request path. One transaction per team and
// source: it locks the cursor row (SKIP LOCKED: another worker takes another team), inserts the
// runs (ON CONFLICT DO NOTHING on the re-entry key), wakes waiting runs, and moves the cursor. A
// crash before COMMIT re-reads the same rows; after it, they are done: each source row is read once.

export interface EnrollDeps {
  sql: TransactionalSqlExecutor;
  clock: Clock;
}

export interface ActiveAutomation {
  id: string;
  teamId: number;
  version: number;
  enrollFromTxid: bigint;
  /** The activation's snapshot: rows of transactions visible in it are from before and never enroll. */
  enrollSnapshot: string | null;
  def: Definition;
}

interface SourceRow {
  id: string;
  txid: string;
  contactId: string;
  name: string | null;
  properties: unknown;
}

/** Whether a source row of transaction `txid` was committed before the automation's activation. */
const committedBeforeActivation = (a: ActiveAutomation, txid: bigint) =>
  txid < a.enrollFromTxid || (a.enrollSnapshot !== null && visibleInSnapshot(txid, a.enrollSnapshot));

const XMIN_SQL = `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`;

export async function activeAutomations(sql: SqlExecutor): Promise<ActiveAutomation[]> {
  const rows = await sql.query<{
    id: string;
    teamId: number;
    version: number;
    enrollFromTxid: string | null;
    enrollSnapshot: string | null;
    definition: unknown;
  }>(
    `SELECT a.id, a."teamId", a."currentVersion" AS version, a."enrollFromTxid"::text AS "enrollFromTxid", a."enrollSnapshot", v.definition
       FROM "Automation" a JOIN "AutomationVersion" v ON v."automationId" = a.id AND v.version = a."currentVersion"
      WHERE a.status = 'ACTIVE'`,
  );
  return rows.map((r) => ({ ...r, enrollFromTxid: BigInt(r.enrollFromTxid ?? '0'), def: definition.parse(r.definition) }));
}

/** Enrolls from every team's sources, at most `perTeam` source rows per team and source. */
export async function enrollFromSources(deps: EnrollDeps, perTeam: number): Promise<{ read: number; enrolled: number }> {
  const all = await activeAutomations(deps.sql);
  const byTeam = new Map<number, ActiveAutomation[]>();
  for (const a of all) byTeam.set(a.teamId, [...(byTeam.get(a.teamId) ?? []), a]);
  const total = { read: 0, enrolled: 0 };
  for (const [teamId, automations] of byTeam) {
    const sources = [
      'events',
      ...new Set(automations.flatMap((a) => (a.def.trigger.type === 'contactAdded' ? [`book:${a.def.trigger.contactBookId}`] : []))),
    ];
    for (const source of sources) {
      const r = await withTransaction(deps.sql, (tx) => enrollFromSource(tx, deps.clock.now(), teamId, source, automations, perTeam));
      total.read += r.read;
      total.enrolled += r.enrolled;
    }
  }
  return total;
}

async function enrollFromSource(
  tx: SqlExecutor,
  now: Date,
  teamId: number,
  source: string,
  automations: ActiveAutomation[],
  limit: number,
): Promise<{ read: number; enrolled: number }> {
  const [{ xmin }] = await tx.query<{ xmin: string }>(XMIN_SQL);
  // Nothing below the earliest activation of this source's automations can enroll: a new cursor
  // starts there, and an old one (a team that had no automation running for a while) jumps there
  // instead of reading its backlog. Waiting runs of automations not running then lose only their
  // wake-up hint: their step still reads the Event table at its timeout.
  const readers = automations.filter(
    (a) => source === 'events' || (a.def.trigger.type === 'contactAdded' && source === `book:${a.def.trigger.contactBookId}`),
  );
  const start = readers.reduce((min, a) => (a.enrollFromTxid < min ? a.enrollFromTxid : min), BigInt(xmin));
  await tx.execute(
    `INSERT INTO "AutomationCursor" ("teamId", source, txid, "lastId", "updatedAt") VALUES ($1, $2, $3::bigint, '', $4) ON CONFLICT DO NOTHING`,
    [teamId, source, start.toString(), now],
  );
  const [locked] = await tx.query<{ txid: string; lastId: string }>(
    `SELECT txid::text, "lastId" FROM "AutomationCursor" WHERE "teamId" = $1 AND source = $2 FOR UPDATE SKIP LOCKED`,
    [teamId, source],
  );
  if (!locked) return { read: 0, enrolled: 0 };
  const cursor = BigInt(locked.txid) < start ? { txid: start.toString(), lastId: '' } : locked;
  const after = { txid: cursor.txid, id: cursor.lastId };
  const rows = source.startsWith('book:')
    ? await readCommitOrdered<Omit<SourceRow, 'id' | 'txid'>>(tx, {
        table: '"Contact"',
        where: '"contactBookId" = $1',
        params: [source.slice('book:'.length)],
        columns: 'id AS "contactId", NULL AS name, NULL AS properties',
        after,
        limit,
      })
    : await readCommitOrdered<Omit<SourceRow, 'id' | 'txid'>>(tx, {
        table: '"Event"',
        where: '"teamId" = $1',
        params: [teamId],
        columns: '"contactId", name, properties',
        after,
        limit,
      });
  if (!rows.length) return { read: 0, enrolled: 0 };
  let enrolled = 0;
  for (const a of automations) {
    const t = a.def.trigger;
    const entries: EntryWithContext[] = [];
    for (const row of rows) {
      const matches = t.type === 'event' ? row.name === t.event : t.type === 'contactAdded' && source === `book:${t.contactBookId}`;
      if (!matches || committedBeforeActivation(a, BigInt(row.txid))) continue;
      const context: RunContext =
        row.name === null ? {} : { event: { id: row.id, name: row.name, properties: (row.properties as Record<string, unknown>) ?? {} } };
      if (t.type === 'event' && t.filter) {
        const contact = await loadContact(tx, teamId, row.contactId);
        if (!contact) continue;
        const hooks = await loadConditionHooks(tx, { teamId, now }, contact.id, t.filter);
        if (!evaluateConditions(t.filter, contact, context, hooks).result) continue;
      }
      entries.push({ entry: { contactId: row.contactId, entryKey: row.id, sourceId: row.id }, context });
    }
    enrolled += await enroll(tx, now, a, entries);
  }
  if (source === 'events') await wakeWaitingRuns(tx, now, teamId, rows, automations);
  const last = rows[rows.length - 1];
  await tx.execute(`UPDATE "AutomationCursor" SET txid = $3::bigint, "lastId" = $4, "updatedAt" = $5 WHERE "teamId" = $1 AND source = $2`, [
    teamId,
    source,
    last.txid,
    last.id,
    now,
  ]);
  return { read: rows.length, enrolled };
}

/** What enrolls: the contact, the entry's key under a re-entry rule other than once, and the source row it came from. */
export interface Entry {
  contactId: string;
  entryKey: string;
  sourceId: string;
}

export interface EntryWithContext {
  entry: Entry;
  context: RunContext;
}

/**
 * The runs of these entries, in source order, but where the re-entry rule's key (or, once per
 * period, a recent run) says the contact is in already. One INSERT for the whole batch, not one per
 * event: a burst of events would otherwise be as many single-row INSERTs.
 */
export async function enroll(
  tx: SqlExecutor,
  now: Date,
  a: Pick<ActiveAutomation, 'id' | 'teamId' | 'version' | 'def'>,
  entries: EntryWithContext[],
): Promise<number> {
  const rule = a.def.reEntry;
  if (rule.mode === 'oncePerPeriod') {
    // One at a time: an entry must see the run the one before it in this batch inserted.
    let n = 0;
    for (const e of entries) {
      const [recent] = await tx.query(
        `SELECT 1 FROM "AutomationRun" WHERE "automationId" = $1 AND "contactId" = $2 AND "enteredAt" > $3 LIMIT 1`,
        [a.id, e.entry.contactId, new Date(now.getTime() - rule.periodSeconds * 1000)],
      );
      if (!recent) n += await insertRuns(tx, now, a, [e]);
    }
    return n;
  }
  return entries.length ? insertRuns(tx, now, a, entries) : 0;
}

async function insertRuns(
  tx: SqlExecutor,
  now: Date,
  a: Pick<ActiveAutomation, 'id' | 'teamId' | 'version' | 'def'>,
  entries: EntryWithContext[],
) {
  // WITH ORDINALITY keeps the source order, so of two entries with the same key the first one wins.
  return tx.execute(
    `INSERT INTO "AutomationRun" (id, "teamId", "automationId", version, "contactId", "entryKey", "sourceId", context, status, "stepId", "dueAt",
                                  "enteredAt", "updatedAt")
     SELECT e.id, $1, $2, $3, e.contact, e.key, e.source, e.context::jsonb, 'ACTIVE', $4, $5, $5, $5
       FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::text[]) WITH ORDINALITY AS e(id, contact, key, source, context, n)
      ORDER BY e.n
     ON CONFLICT ("automationId", "contactId", "entryKey") DO NOTHING`,
    [
      a.teamId,
      a.id,
      a.version,
      a.def.steps[0].id,
      now,
      entries.map(() => newId()),
      entries.map((e) => e.entry.contactId),
      entries.map((e) => (a.def.reEntry.mode === 'once' ? 'once' : e.entry.entryKey)),
      entries.map((e) => e.entry.sourceId),
      entries.map((e) => JSON.stringify(e.context)),
    ],
  );
}

/**
 * Runs of these contacts waiting for one of these events, or whose automation's goal is one, are
 * made due now: their step re-reads the Event table and decides (an early wake-up that finds
 * nothing goes back to sleep until its timeout).
 */
async function wakeWaitingRuns(tx: SqlExecutor, now: Date, teamId: number, rows: SourceRow[], automations: ActiveAutomation[]) {
  const contacts = rows.map((r) => r.contactId);
  const names = rows.map((r) => r.name ?? '');
  await tx.execute(
    `UPDATE "AutomationRun" r SET "dueAt" = $2
       FROM unnest($3::text[], $4::text[]) AS e(contact, name)
      WHERE r."teamId" = $1 AND r.status = 'ACTIVE' AND r."contactId" = e.contact AND r."waitEvent" = e.name AND r."dueAt" > $2`,
    [teamId, now, contacts, names],
  );
  const goalPairs = rows.flatMap((r) => automations.filter((a) => a.def.goal?.event === r.name).map((a) => [r.contactId, a.id]));
  if (goalPairs.length)
    await tx.execute(
      `UPDATE "AutomationRun" r SET "dueAt" = $2
         FROM unnest($3::text[], $4::text[]) AS g(contact, automation)
        WHERE r."teamId" = $1 AND r.status = 'ACTIVE' AND r."contactId" = g.contact AND r."automationId" = g.automation AND r."dueAt" > $2`,
      [teamId, now, goalPairs.map((p) => p[0]), goalPairs.map((p) => p[1])],
    );
}
