import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { contactMatchesFilter } from '@mailrail/domain/audience/segments/segment-sql';
import { segmentFilterCostProblem, storedSegmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import type { ConditionHooks, ContactFacts, RunContext } from './conditions';
import {
  definition,
  isQueryCondition,
  type ConditionGroup,
  type Definition,
  type EmailActivityBranchCondition,
  type SegmentMembershipCondition,
} from './definition';
import type { StepFacts } from './step-decision';

// The reads a step decides on, shared by the worker's runtime (inside the step's transaction) and
// the API's dry run. Every statement is by primary key or a (team, contact) index.

interface ContactRow {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  subscribed: boolean;
  properties: unknown;
}

// The columns of ContactRow, read by one contact's load and a batch's.
const CONTACT_COLUMNS = 'c.id, c.email, c."firstName", c."lastName", c.subscribed, c.properties';

const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export async function loadContact(sql: SqlExecutor, teamId: number, contactId: string): Promise<ContactFacts | null> {
  const [row] = await sql.query<ContactRow>(
    `SELECT ${CONTACT_COLUMNS}
       FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE c.id = $1 AND b."teamId" = $2`,
    [contactId, teamId],
  );
  return row ? { ...row, properties: asObject(row.properties) } : null;
}

export async function loadVersion(sql: SqlExecutor, automationId: string, version: number): Promise<Definition> {
  const [row] = await sql.query<{ definition: unknown }>(
    `SELECT definition FROM "AutomationVersion" WHERE "automationId" = $1 AND version = $2`,
    [automationId, version],
  );
  if (!row) throw new Error(`automation ${automationId} has no version ${version}`);
  return definition.parse(row.definition);
}

/** The id of the contact's newest event named `name` stored at or after `since`, or null. */
async function eventSince(sql: SqlExecutor, teamId: number, contactId: string, name: string, since: Date): Promise<string | null> {
  const [row] = await sql.query<{ id: string }>(
    `SELECT id FROM "Event" WHERE "teamId" = $1 AND "contactId" = $2 AND name = $3 AND "createdAt" >= $4 ORDER BY "createdAt" LIMIT 1`,
    [teamId, contactId, name, since],
  );
  return row?.id ?? null;
}

export interface ContactAndSuppression {
  contact: ContactFacts | null;
  /** The contact's address is on its team's suppression list. */
  suppressed: boolean;
}
const NO_CONTACT: ContactAndSuppression = { contact: null, suppressed: false };

/**
 * The contacts of many runs (of any teams) and whether each address is suppressed, in two
 * statements: a batch of steps reads them once, not twice a run (run-step.ts). A contact of
 * another team than its run's is left out, as if deleted.
 */
export async function loadContactsAndSuppressions(
  sql: SqlExecutor,
  runs: readonly Pick<RunForFacts, 'teamId' | 'contactId'>[],
): Promise<Map<string, ContactAndSuppression>> {
  const rows = await sql.query<ContactRow & { teamId: number }>(
    `SELECT ${CONTACT_COLUMNS}, b."teamId"
       FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE c.id = ANY($1::text[])`,
    [[...new Set(runs.map((r) => r.contactId))]],
  );
  const teamOf = new Map(runs.map((r) => [r.contactId, r.teamId]));
  const contacts = rows.filter((r) => teamOf.get(r.id) === r.teamId);
  const suppressed = contacts.length
    ? await sql.query<{ teamId: number; email: string }>(
        `SELECT s."teamId", s.email FROM "Suppression" s
           JOIN unnest($1::int[], $2::text[]) AS k("teamId", email) ON s."teamId" = k."teamId" AND s.email = k.email`,
        [contacts.map((c) => c.teamId), contacts.map((c) => c.email)],
      )
    : [];
  const suppressedKeys = new Set(suppressed.map((r) => JSON.stringify([r.teamId, r.email])));
  const found = new Map<string, ContactAndSuppression>();
  for (const { teamId, ...c } of contacts) {
    found.set(c.id, {
      contact: { ...c, properties: asObject(c.properties) },
      suppressed: suppressedKeys.has(JSON.stringify([teamId, c.email])),
    });
  }
  return found;
}

export interface RunForFacts {
  teamId: number;
  contactId: string;
  enteredAt: Date;
  waitSince: Date | null;
  context: unknown;
}

type QueryCondition = SegmentMembershipCondition | EmailActivityBranchCondition;

/**
 * One segment or email activity condition on one contact at `now`, through the segment compiler
 * (contactMatchesFilter): one rule for segments, campaigns and automations. A deleted segment, one
 * over the segment cost budget, or a contact of another book than the segment's is not a member.
 */
async function evaluateQueryCondition(
  sql: SqlExecutor,
  scope: { teamId: number; now: Date },
  contactId: string,
  c: QueryCondition,
): Promise<{ result: boolean; why: string }> {
  if (c.source === 'emailActivity') {
    const filter: SegmentFilter = { match: 'all', conditions: [{ field: 'emailActivity', operator: c.operator, value: c.value }] };
    const matches = await contactMatchesFilter(sql, scope, contactId, filter);
    return { result: matches, why: `emailActivity ${c.operator} ${JSON.stringify(c.value)} (${matches ? 'yes' : 'no'})` };
  }
  const [segment] = await sql.query<{ contactBookId: string; filter: unknown; inBook: boolean }>(
    `SELECT s."contactBookId", s.filter, EXISTS (SELECT 1 FROM "Contact" c WHERE c.id = $3 AND c."contactBookId" = s."contactBookId") AS "inBook"
       FROM "Segment" s WHERE s.id = $1 AND s."teamId" = $2`,
    [c.segmentId, scope.teamId, contactId],
  );
  const answer = (member: boolean, why: string) => ({
    result: c.operator === 'in' ? member : !member,
    why: `segment ${c.segmentId} ${c.operator}: ${why}`,
  });
  if (!segment) return answer(false, 'the segment was deleted');
  if (!segment.inBook) return answer(false, "the contact is not in the segment's book");
  const filter = storedSegmentFilter(segment.filter);
  const problem = segmentFilterCostProblem(filter);
  if (problem) return answer(false, `not evaluated: ${problem}`);
  const member = await contactMatchesFilter(sql, scope, contactId, filter);
  return answer(member, member ? 'the contact matches it' : 'the contact does not match it');
}

/** The outcomes of a group's segment and email activity conditions for one contact, as hooks for the pure evaluator. */
export async function loadConditionHooks(
  sql: SqlExecutor,
  scope: { teamId: number; now: Date },
  contactId: string,
  group: ConditionGroup | undefined,
): Promise<ConditionHooks> {
  const outcomes = new Map<QueryCondition, { result: boolean; why: string }>();
  for (const c of group?.conditions ?? []) if (isQueryCondition(c)) outcomes.set(c, await evaluateQueryCondition(sql, scope, contactId, c));
  return { evaluate: (c) => outcomes.get(c) ?? null };
}

/** Everything decideStep needs about one run's current step, at `now` (the engagement conditions' clock). */
export async function loadStepFacts(
  sql: SqlExecutor,
  def: Definition,
  run: RunForFacts,
  stepId: string,
  now: Date,
  known?: ContactAndSuppression,
): Promise<StepFacts> {
  const { contact, suppressed } = known ?? (await loadContactsAndSuppressions(sql, [run])).get(run.contactId) ?? NO_CONTACT;
  const goalReached = def.goal ? (await eventSince(sql, run.teamId, run.contactId, def.goal.event, run.enteredAt)) !== null : false;
  const step = def.steps.find((s) => s.id === stepId);
  const awaitedEventId =
    step?.type === 'waitForEvent' && run.waitSince ? await eventSince(sql, run.teamId, run.contactId, step.event, run.waitSince) : null;
  const conditionHooks =
    contact && step?.type === 'branch' ? await loadConditionHooks(sql, { teamId: run.teamId, now }, contact.id, step.condition) : {};
  return {
    contact,
    context: asObject(run.context) as RunContext,
    suppressed,
    goalReached,
    awaitedEventId,
    conditionHooks,
  };
}
