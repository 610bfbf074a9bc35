import { badRequest, forbidden, notFound, type Issue } from '@mailrail/domain/errors/api-error';
import { evaluateConditions, type RunContext } from '@mailrail/domain/automations/conditions';
import { definition, queryConditions, type Definition } from '@mailrail/domain/automations/definition';
import { loadConditionHooks, loadContact, loadVersion } from '@mailrail/domain/automations/run-facts';
import { segmentFilterCostProblem, storedSegmentFilter, type SegmentCondition } from '@mailrail/domain/audience/segments/segment-filter';
import { decideStep, type StepFacts } from '@mailrail/domain/automations/step-decision';
import { parseAddress } from '@mailrail/domain/emails/address';
import { prismaExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { newId } from '@mailrail/platform/ids';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from '../http/created-at-cursor';
import { parseOrThrow } from '../http/validate';
import type { z } from 'zod';
import type { createAutomationBody, dryRunBody, listAutomationsQuery, listRunsQuery, UpdateAutomationBody } from './schemas';

// The service behind /api/v1/automations (docs/automations.md): definitions are checked whole
// (graph and references to the team's books, templates and domains) and stored as immutable
// versions; status moves (activate, pause, resume) set where enrollment starts reading.

type Deps = Pick<ApiDeps, 'db' | 'clock'>;

const notFoundError = () => notFound('Automation not found');

/** Automations send from any of the team's domains: a key bound to one domain may not manage them. */
function assertTeamWideKey(auth: AuthContext) {
  if (auth.domainId !== null) throw forbidden('Automations are team-wide: use a key that is not bound to a domain');
}

interface AutomationRow {
  id: string;
  name: string;
  status: 'DRAFT' | 'ACTIVE' | 'PAUSED';
  currentVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The team's books, templates and domains a definition names, each missing one an issue. */
async function referenceIssues(sql: SqlExecutor, teamId: number, def: Definition): Promise<Issue[]> {
  const issues: Issue[] = [];
  const books = new Set<string>();
  if (def.trigger.type === 'contactAdded' || def.trigger.type === 'date') books.add(def.trigger.contactBookId);
  def.steps.forEach((s) => (s.type === 'addToBook' || s.type === 'removeFromBook' ? books.add(s.contactBookId) : undefined));
  const templates = def.steps.flatMap((s) => (s.type === 'sendEmail' && s.templateId ? [s.templateId] : []));
  const knownBooks = new Set(
    (
      await sql.query<{ id: string }>(`SELECT id FROM "ContactBook" WHERE "teamId" = $1 AND id = ANY($2::text[])`, [teamId, [...books]])
    ).map((r) => r.id),
  );
  const knownTemplates = new Set(
    (await sql.query<{ id: string }>(`SELECT id FROM "Template" WHERE "teamId" = $1 AND id = ANY($2::text[])`, [teamId, templates])).map(
      (r) => r.id,
    ),
  );
  const domains = new Set(
    (await sql.query<{ name: string }>(`SELECT name FROM "Domain" WHERE "teamId" = $1`, [teamId])).map((r) => r.name),
  );
  if ((def.trigger.type === 'contactAdded' || def.trigger.type === 'date') && !knownBooks.has(def.trigger.contactBookId))
    issues.push({ path: ['trigger', 'contactBookId'], message: 'Contact book not found' });
  issues.push(...(await segmentIssues(sql, teamId, def)));
  def.steps.forEach((s, i) => {
    if ((s.type === 'addToBook' || s.type === 'removeFromBook') && !knownBooks.has(s.contactBookId))
      issues.push({ path: ['steps', i, 'contactBookId'], message: 'Contact book not found' });
    if (s.type !== 'sendEmail') return;
    if (s.templateId && !knownTemplates.has(s.templateId)) issues.push({ path: ['steps', i, 'templateId'], message: 'Template not found' });
    const from = parseAddress(s.from);
    if (!from) issues.push({ path: ['steps', i, 'from'], message: 'must be an email address or "Name <address>"' });
    else if (!domains.has(from.domain)) issues.push({ path: ['steps', i, 'from'], message: `${from.domain} is not a domain of this team` });
    if (s.replyTo && !parseAddress(s.replyTo)) issues.push({ path: ['steps', i, 'replyTo'], message: 'must be an email address' });
  });
  return issues;
}

/**
 * The segments and campaigns a definition names must be the team's (another team's id would match
 * nobody, silently, as segments refuse it); and its segment and email activity conditions together
 * stay within the segment cost budget: each condition evaluates its segment's whole filter.
 */
async function segmentIssues(sql: SqlExecutor, teamId: number, def: Definition): Promise<Issue[]> {
  const issues: Issue[] = [];
  const named = queryConditions(def);
  const segmentIds = [
    ...(def.trigger.type === 'segmentEntered' ? [def.trigger.segmentId] : []),
    ...named.flatMap((n) => (n.condition.source === 'segment' ? [n.condition.segmentId] : [])),
  ];
  const campaignIds = named.flatMap((n) =>
    n.condition.source === 'emailActivity' && typeof n.condition.value === 'string' ? [n.condition.value] : [],
  );
  const segments = new Map(
    (
      await sql.query<{ id: string; filter: unknown }>(`SELECT id, filter FROM "Segment" WHERE "teamId" = $1 AND id = ANY($2::text[])`, [
        teamId,
        segmentIds,
      ])
    ).map((r) => [r.id, storedSegmentFilter(r.filter)]),
  );
  const campaigns = new Set(
    (await sql.query<{ id: string }>(`SELECT id FROM "Campaign" WHERE "teamId" = $1 AND id = ANY($2::text[])`, [teamId, campaignIds])).map(
      (r) => r.id,
    ),
  );
  if (def.trigger.type === 'segmentEntered' && !segments.has(def.trigger.segmentId))
    issues.push({ path: ['trigger', 'segmentId'], message: 'Segment not found' });
  // Every condition the definition's queries evaluate, as one filter for the cost budget.
  const evaluated: SegmentCondition[] = [];
  for (const { condition: c, path } of named) {
    if (c.source === 'segment') {
      const filter = segments.get(c.segmentId);
      if (!filter) issues.push({ path: [...path, 'segmentId'], message: 'Segment not found' });
      else evaluated.push(...filter.conditions.flatMap((item) => ('conditions' in item ? item.conditions : [item])));
    } else {
      if (typeof c.value === 'string' && !campaigns.has(c.value))
        issues.push({ path: [...path, 'value'], message: `Campaign ${c.value} not found` });
      evaluated.push({ field: 'emailActivity', operator: c.operator, value: c.value });
    }
  }
  const problem = evaluated.length ? segmentFilterCostProblem({ match: 'all', conditions: evaluated }) : null;
  if (problem && named.length)
    issues.push({ path: named[0].path, message: `${problem} (segment and email activity conditions of the automation together)` });
  return issues;
}

async function checkedDefinition(sql: SqlExecutor, teamId: number, raw: unknown): Promise<Definition> {
  const def = parseOrThrow(definition, raw);
  const issues = await referenceIssues(sql, teamId, def);
  if (issues.length) throw badRequest(`Invalid request body: ${issues[0].path.join('.')}: ${issues[0].message}`, issues);
  return def;
}

export async function createAutomation(deps: Deps, auth: AuthContext, body: z.infer<typeof createAutomationBody>) {
  assertTeamWideKey(auth);
  const { name, ...rest } = body;
  const def = await checkedDefinition(prismaExecutor(deps.db), auth.teamId, rest);
  const now = deps.clock.now();
  const id = newId();
  await deps.db.$transaction([
    deps.db.automation.create({ data: { id, teamId: auth.teamId, name, createdAt: now, updatedAt: now } }),
    deps.db.automationVersion.create({ data: { automationId: id, version: 1, definition: def, createdAt: now } }),
  ]);
  return { id };
}

export async function teamAutomation(deps: Deps, auth: AuthContext, id: string): Promise<AutomationRow> {
  assertTeamWideKey(auth);
  const row = await deps.db.automation.findFirst({ where: { id, teamId: auth.teamId } });
  if (!row) throw notFoundError();
  return row;
}

async function runCounts(deps: Deps, ids: string[]): Promise<Map<string, Record<string, number>>> {
  const rows = await deps.db.automationRun.groupBy({ by: ['automationId', 'status'], where: { automationId: { in: ids } }, _count: true });
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const c = out.get(r.automationId) ?? { ACTIVE: 0, COMPLETED: 0, EXITED: 0, FAILED: 0 };
    c[r.status] = r._count;
    out.set(r.automationId, c);
  }
  return out;
}

const emptyCounts = () => ({ ACTIVE: 0, COMPLETED: 0, EXITED: 0, FAILED: 0 });

const automationJson = (a: AutomationRow, def: Definition, counts: Record<string, number>) => ({
  id: a.id,
  name: a.name,
  status: a.status,
  version: a.currentVersion,
  ...def,
  runs: counts,
  createdAt: a.createdAt.toISOString(),
  updatedAt: a.updatedAt.toISOString(),
});

export async function listAutomations(deps: Deps, auth: AuthContext, q: z.infer<typeof listAutomationsQuery>) {
  assertTeamWideKey(auth);
  const rows = await deps.db.automation.findMany({
    where: { teamId: auth.teamId, ...(q.status ? { status: q.status } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: q.limit,
  });
  const versions = await deps.db.automationVersion.findMany({
    where: { OR: rows.map((r) => ({ automationId: r.id, version: r.currentVersion })) },
  });
  const defs = new Map(versions.map((v) => [v.automationId, definition.parse(v.definition)]));
  const counts = await runCounts(
    deps,
    rows.map((r) => r.id),
  );
  return { data: rows.map((r) => automationJson(r, defs.get(r.id)!, counts.get(r.id) ?? emptyCounts())) };
}

export async function getAutomation(deps: Deps, auth: AuthContext, id: string) {
  const a = await teamAutomation(deps, auth, id);
  const def = await loadVersion(prismaExecutor(deps.db), a.id, a.currentVersion);
  return automationJson(a, def, (await runCounts(deps, [a.id])).get(a.id) ?? emptyCounts());
}

/** An edit: a new version when the definition changes; running contacts stay on theirs. */
export async function updateAutomation(deps: Deps, auth: AuthContext, id: string, body: UpdateAutomationBody) {
  const a = await teamAutomation(deps, auth, id);
  const sql = prismaExecutor(deps.db);
  const current = await loadVersion(sql, a.id, a.currentVersion);
  const { name, ...changes } = body;
  const merged: Record<string, unknown> = { ...current, ...changes };
  if (changes.goal === null) delete merged.goal;
  const definitionChanged = Object.keys(changes).length > 0;
  const def = definitionChanged ? await checkedDefinition(sql, auth.teamId, merged) : current;
  const now = deps.clock.now();
  await deps.db.$transaction(async (tx) => {
    // The row lock orders concurrent edits: each gets the next version number.
    const [locked] = await tx.$queryRawUnsafe<{ currentVersion: number }[]>(
      `SELECT "currentVersion" FROM "Automation" WHERE id = $1 AND "teamId" = $2 FOR UPDATE`,
      a.id,
      auth.teamId,
    );
    if (!locked) throw notFoundError();
    const version = definitionChanged ? locked.currentVersion + 1 : locked.currentVersion;
    if (definitionChanged) await tx.automationVersion.create({ data: { automationId: a.id, version, definition: def, createdAt: now } });
    await tx.automation.update({ where: { id: a.id }, data: { currentVersion: version, updatedAt: now, ...(name ? { name } : {}) } });
  });
  return getAutomation(deps, auth, id);
}

export async function deleteAutomation(deps: Deps, auth: AuthContext, id: string) {
  const a = await teamAutomation(deps, auth, id);
  await deps.db.automation.delete({ where: { id: a.id } });
  return { id: a.id, deleted: true };
}

type Move = 'activate' | 'pause' | 'resume';
const MOVES: Record<Move, { from: AutomationRow['status'][]; to: AutomationRow['status'] }> = {
  activate: { from: ['DRAFT'], to: 'ACTIVE' },
  pause: { from: ['ACTIVE'], to: 'PAUSED' },
  resume: { from: ['PAUSED'], to: 'ACTIVE' },
};

/**
 * Activation and resume take a snapshot (enrollSnapshot, and its oldest running transaction as
 * enrollFromTxid, where readers start): events whose transaction commits from then on enroll,
 * those committed before (or while paused) never do. Runs keep their state
 * while paused and go on from it on resume (a step due meanwhile runs at resume).
 */
export async function moveAutomation(deps: Deps, auth: AuthContext, id: string, move: Move) {
  const a = await teamAutomation(deps, auth, id);
  const rule = MOVES[move];
  const now = deps.clock.now();
  const changed = await deps.db.$executeRawUnsafe(
    `UPDATE "Automation" SET status = $3::"AutomationStatus", "updatedAt" = $4,
            "enrollFromTxid" = CASE WHEN $3 = 'ACTIVE' THEN pg_snapshot_xmin(pg_current_snapshot())::text::bigint ELSE "enrollFromTxid" END,
            "enrollSnapshot" = CASE WHEN $3 = 'ACTIVE' THEN pg_current_snapshot()::text ELSE "enrollSnapshot" END
      WHERE id = $1 AND "teamId" = $2 AND status::text = ANY($5::text[])`,
    a.id,
    auth.teamId,
    rule.to,
    now,
    rule.from,
  );
  if (!changed) throw badRequest(`Cannot ${move} an automation that is ${a.status.toLowerCase()}`);
  return getAutomation(deps, auth, id);
}

/** The address and book of each run's contact (null once deleted), for the dashboard's links. */
async function runContacts(deps: Deps, contactIds: string[]): Promise<Map<string, { email: string; contactBookId: string }>> {
  const rows = await deps.db.contact.findMany({
    where: { id: { in: [...new Set(contactIds)] } },
    select: { id: true, email: true, contactBookId: true },
  });
  return new Map(rows.map((c) => [c.id, { email: c.email, contactBookId: c.contactBookId }]));
}

const runJson =
  (contacts: Map<string, { email: string; contactBookId: string }>) =>
  (r: {
    id: string;
    version: number;
    contactId: string;
    status: string;
    stepId: string | null;
    dueAt: Date | null;
    waitEvent: string | null;
    exitReason: string | null;
    enteredAt: Date;
    finishedAt: Date | null;
  }) => ({
    id: r.id,
    version: r.version,
    contactId: r.contactId,
    contactEmail: contacts.get(r.contactId)?.email ?? null,
    contactBookId: contacts.get(r.contactId)?.contactBookId ?? null,
    status: r.status,
    stepId: r.stepId,
    dueAt: r.dueAt?.toISOString() ?? null,
    waitingFor: r.waitEvent,
    exitReason: r.exitReason,
    enteredAt: r.enteredAt.toISOString(),
    finishedAt: r.finishedAt?.toISOString() ?? null,
  });

export async function listRuns(deps: Deps, auth: AuthContext, id: string, q: z.infer<typeof listRunsQuery>) {
  const a = await teamAutomation(deps, auth, id);
  const cursor = q.cursor ? decodeCreatedAtCursor(q.cursor) : null;
  const rows = await deps.db.automationRun.findMany({
    where: {
      automationId: a.id,
      ...(q.status ? { status: q.status } : {}),
      ...(q.contactId ? { contactId: q.contactId } : {}),
      ...(cursor ? { OR: [{ enteredAt: { lt: cursor.createdAt } }, { enteredAt: cursor.createdAt, id: { lt: cursor.id } }] } : {}),
    },
    orderBy: [{ enteredAt: 'desc' }, { id: 'desc' }],
    take: q.limit + 1,
  });
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    data: page.map(
      runJson(
        await runContacts(
          deps,
          page.map((r) => r.contactId),
        ),
      ),
    ),
    nextCursor: rows.length > q.limit && last ? encodeCreatedAtCursor({ createdAt: last.enteredAt, id: last.id }) : null,
  };
}

export async function getRunLog(deps: Deps, auth: AuthContext, id: string, runId: string) {
  const a = await teamAutomation(deps, auth, id);
  const run = await deps.db.automationRun.findFirst({ where: { id: runId, automationId: a.id } });
  if (!run) throw notFound('Run not found');
  const log = await deps.db.automationRunLog.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
  return {
    run: runJson(await runContacts(deps, [run.contactId]))(run),
    log: log.map((l) => ({
      seq: l.seq,
      stepId: l.stepId,
      type: l.stepType,
      outcome: l.outcome,
      detail: l.detail,
      nextStepId: l.nextStepId,
      emailId: l.emailId,
      at: l.at.toISOString(),
    })),
  };
}

/** The team's contact of `email`: in the trigger's book for a contactAdded trigger, else the newest of the address. */
async function contactIdByEmail(sql: SqlExecutor, teamId: number, email: string, def: Definition): Promise<string | null> {
  const book = def.trigger.type === 'contactAdded' ? def.trigger.contactBookId : null;
  const [row] = await sql.query<{ id: string }>(
    `SELECT c.id FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE b."teamId" = $1 AND lower(c.email) = lower($2) AND ($3::text IS NULL OR b.id = $3)
      ORDER BY c."createdAt" DESC, c.id DESC LIMIT 1`,
    [teamId, email, book],
  );
  return row?.id ?? null;
}

/**
 * The path one contact would take through the current version, decided by the runtime's own
 * step rules on the contact as stored now, writing nothing: waits are taken as elapsed, a wait
 * for an event sees it arrive when its name is in `arrivingEvents` and times out otherwise, and
 * an update step's properties are seen by the branches after it.
 */
export async function dryRun(deps: Deps, auth: AuthContext, id: string, body: z.infer<typeof dryRunBody>) {
  const a = await teamAutomation(deps, auth, id);
  const sql = prismaExecutor(deps.db);
  const def = await loadVersion(sql, a.id, a.currentVersion);
  const field = body.contactId !== undefined ? 'contactId' : 'email';
  const contactId = body.contactId ?? (await contactIdByEmail(sql, auth.teamId, body.email!, def));
  const contact = contactId ? await loadContact(sql, auth.teamId, contactId) : null;
  if (!contact) throw badRequest(`Invalid request body: ${field}: Contact not found`, [{ path: [field], message: 'Contact not found' }]);
  const context: RunContext =
    def.trigger.type === 'event' ? { event: { id: 'dry-run', name: def.trigger.event, properties: body.event?.properties ?? {} } } : {};
  const [suppressed] = await sql.query(`SELECT 1 FROM "Suppression" WHERE "teamId" = $1 AND email = $2 LIMIT 1`, [
    auth.teamId,
    contact.email,
  ]);
  const enters =
    def.trigger.type === 'event' && def.trigger.filter
      ? evaluateConditions(
          def.trigger.filter,
          contact,
          context,
          await loadConditionHooks(sql, { teamId: auth.teamId, now: deps.clock.now() }, contact.id, def.trigger.filter),
        )
      : null;
  if (enters && !enters.result) return { enters: false, why: `the trigger's filter: ${enters.why}`, path: [] };
  const arriving = new Set(body.arrivingEvents ?? []);
  let now = deps.clock.now();
  const path: { stepId: string; type: string; outcome: string; detail: string; at: string; nextStepId: string | null }[] = [];
  let stepId: string | null = def.steps[0].id;
  let waitSince: Date | null = null;
  const facts: StepFacts = { contact, context, suppressed: Boolean(suppressed), goalReached: false, awaitedEventId: null };
  const enteredAt = now;
  for (let guard = 0; stepId !== null && guard <= def.steps.length * 2; guard++) {
    const step = def.steps.find((s) => s.id === stepId);
    facts.awaitedEventId = step?.type === 'waitForEvent' && waitSince && arriving.has(step.event) ? 'assumed' : null;
    // Segments and engagement as stored now, counted back from the step's (simulated) time.
    facts.conditionHooks =
      step?.type === 'branch' ? await loadConditionHooks(sql, { teamId: auth.teamId, now }, contact.id, step.condition) : undefined;
    const d = decideStep(def, { stepId, enteredAt, waitSince }, facts, now);
    if (d.kind === 'wait') {
      waitSince = d.since;
      // The awaited event arrives at once, or the wait runs to its timeout.
      if (!(step?.type === 'waitForEvent' && arriving.has(step.event))) now = d.until;
      continue;
    }
    waitSince = null;
    const next = d.kind === 'advance' ? d.next : null;
    path.push({ stepId, type: d.step?.type ?? 'unknown', outcome: d.outcome, detail: d.detail, at: now.toISOString(), nextStepId: next });
    if (d.kind === 'advance') {
      if (d.effect?.type === 'updateContact') Object.assign(contact.properties, d.effect.properties);
      now = d.dueAt;
    }
    stepId = next;
  }
  return { enters: true, why: enters ? `the trigger's filter: ${enters.why}` : 'no filter', path };
}
