import type { Clock } from '@mailrail/platform/clock';
import type { Config } from '@mailrail/platform/config/schema';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import { withTransaction } from '@mailrail/platform/db/sql/executor';
import type { Logger } from '@mailrail/platform/log/logger';
import type { QueueFactory } from '@mailrail/platform/queue/queues';
import type { RunContext } from '@mailrail/domain/automations/conditions';
import { LRUCache } from 'lru-cache';
import type { Definition } from '@mailrail/domain/automations/definition';
import { loadContactsAndSuppressions, loadStepFacts, loadVersion } from '@mailrail/domain/automations/run-facts';
import { decideStep } from '@mailrail/domain/automations/step-decision';
import { enqueueSendJobs, type PreparedEmail } from '@mailrail/domain/emails/create-emails';
import { applyEffect } from './step-effects';

// One step of each of a batch of runs, top to bottom, in ONE transaction:
//   1. lock the runs (FOR UPDATE SKIP LOCKED), still ACTIVE, due, of an ACTIVE automation;
//   2. read the facts (contacts and suppressions for the whole batch, then each run's goal, awaited
//      event, branch conditions) and decide (step-decision.ts);
//   3. write each side effect (email row, contact change, webhook outbox row) on the same transaction;
//   4. write the log entries (runId, stepCount + 1) and move the runs to their next step and due
//      time, one statement each for the whole batch.
// COMMIT makes 3 and 4 true together; a crash before it leaves every run of the batch as it was,
// due, and the next tick runs the step again from scratch: no step is lost, none is done twice.
// After COMMIT, the send jobs are added to Redis; if that is lost the send sweeper adds them from
// PostgreSQL. A batch saves a transaction and most statements a step: a plain wait's end takes
// about as many statements for a batch of a hundred as for one step alone.

export interface RunStepDeps {
  sql: TransactionalSqlExecutor;
  queues: QueueFactory;
  log: Logger;
  clock: Clock;
  config: Pick<Config, 'PUBLIC_URL' | 'SECRET' | 'AWS_REGION' | 'SEGMENT_QUERY_TIMEOUT_MS'>;
  /** Test seam: called after the side effect is written, before the run's advance and COMMIT. */
  afterEffect?: (runId: string) => Promise<void> | void;
}

interface LockedRun {
  id: string;
  teamId: number;
  automationId: string;
  version: number;
  contactId: string;
  context: unknown;
  stepId: string;
  dueAt: Date;
  waitSince: Date | null;
  stepCount: number;
  enteredAt: Date;
}

// Versions never change once written, so a parsed definition can be kept: validating the same
// definition again at every step spent CPU on each of a burst's million steps for nothing.
const versions = new LRUCache<string, Definition>({ max: 1000 });

async function cachedVersion(tx: SqlExecutor, automationId: string, version: number): Promise<Definition> {
  const key = `${automationId}:${version}`;
  const hit = versions.get(key);
  if (hit) return hit;
  const def = await loadVersion(tx, automationId, version);
  versions.set(key, def);
  return def;
}

/** 'continued': advanced to a step already due (the caller may run it at once). */
export type StepOutcome = 'advanced' | 'continued' | 'finished' | 'waiting' | 'skipped';

/** Runs the due step of run `runId`; 'skipped' when another worker holds it or it is not due. */
export async function runDueStep(deps: RunStepDeps, runId: string): Promise<StepOutcome> {
  return (await runDueSteps(deps, [runId])).get(runId) ?? 'skipped';
}

interface LogEntry {
  runId: string;
  seq: number;
  stepId: string;
  stepType: string;
  outcome: string;
  detail: string;
  next: string | null;
  emailId: string | null;
}
interface RunAdvance {
  id: string;
  status: 'ACTIVE' | 'COMPLETED' | 'EXITED' | 'FAILED';
  stepId: string | null;
  dueAt: Date | null;
  stepCount: number;
  exitReason: string | null;
  finishedAt: Date | null;
}
interface RunWait {
  id: string;
  waitEvent: string | null;
  waitSince: Date;
  dueAt: Date;
}

/**
 * Runs the due step of each of `runIds` in one transaction (see the top of this file); a run that
 * another worker holds or that is not due is left out of the answer. Throws when any run's step
 * throws: the whole batch is rolled back (advance-runs.ts then tries its runs one by one).
 */
export async function runDueSteps(deps: RunStepDeps, runIds: readonly string[]): Promise<Map<string, StepOutcome>> {
  const now = deps.clock.now();
  const outcomes = new Map<string, StepOutcome>();
  let toEnqueue: PreparedEmail[] = [];
  await withTransaction(deps.sql, async (tx) => {
    const locked = await tx.query<LockedRun>(
      `SELECT r.id, r."teamId", r."automationId", r.version, r."contactId", r.context, r."stepId", r."dueAt", r."waitSince",
              r."stepCount", r."enteredAt"
         FROM "AutomationRun" r JOIN "Automation" a ON a.id = r."automationId"
        WHERE r.id = ANY($1::text[]) AND r.status = 'ACTIVE' AND r."dueAt" <= $2 AND a.status = 'ACTIVE'
          FOR UPDATE OF r SKIP LOCKED`,
      [runIds, now],
    );
    if (!locked.length) return;
    // In the caller's (fair) order. SKIP LOCKED never waits, so the lock order cannot deadlock.
    const byId = new Map(locked.map((r) => [r.id, r]));
    const runs = runIds.flatMap((id) => byId.get(id) ?? []);
    const known = await loadContactsAndSuppressions(tx, runs);
    const changed = new Set<string>();
    const logs: LogEntry[] = [];
    const advances: RunAdvance[] = [];
    const waits: RunWait[] = [];
    for (const run of runs) {
      const def = await cachedVersion(tx, run.automationId, run.version);
      // A contact an earlier run of the batch changed is read again; one the batch read and did not find was deleted.
      const contactFacts = changed.has(run.contactId) ? undefined : (known.get(run.contactId) ?? { contact: null, suppressed: false });
      const facts = await loadStepFacts(tx, def, run, run.stepId, now, contactFacts);
      const decision = decideStep(def, run, facts, now);
      const seq = run.stepCount + 1;

      if (decision.kind === 'wait') {
        waits.push({
          id: run.id,
          waitEvent: decision.step.type === 'waitForEvent' ? decision.step.event : null,
          waitSince: decision.since,
          dueAt: decision.until,
        });
        outcomes.set(run.id, 'waiting');
        continue;
      }

      let status: RunAdvance['status'] = decision.kind === 'finish' ? decision.status : 'ACTIVE';
      let outcomeName = decision.outcome;
      let detail = decision.detail;
      let next = decision.kind === 'advance' ? decision.next : null;
      let emailId: string | null = null;
      if (decision.kind === 'advance' && decision.effect && facts.contact) {
        const result = await applyEffect(
          tx,
          deps.config,
          { id: run.id, teamId: run.teamId, automationId: run.automationId, seq },
          facts.contact,
          facts.context as RunContext,
          decision.effect,
          now,
        );
        if (!result.ok) {
          [status, outcomeName, detail, next] = ['FAILED', 'failed', result.reason, null];
        } else {
          emailId = result.emailId ?? null;
          toEnqueue = toEnqueue.concat(result.prepared ?? []);
        }
        if (decision.effect.type !== 'sendEmail' && decision.effect.type !== 'webhook') changed.add(run.contactId);
        await deps.afterEffect?.(run.id);
      }
      if (status === 'ACTIVE' && next === null) status = 'COMPLETED';
      logs.push({
        runId: run.id,
        seq,
        stepId: decision.step?.id ?? run.stepId,
        stepType: decision.step?.type ?? 'unknown',
        outcome: outcomeName,
        detail: detail.slice(0, 1000),
        next,
        emailId,
      });
      const finished = status !== 'ACTIVE';
      advances.push({
        id: run.id,
        status,
        stepId: finished ? null : next,
        dueAt: finished ? null : decision.kind === 'advance' ? decision.dueAt : null,
        stepCount: seq,
        exitReason: finished ? (status === 'COMPLETED' && outcomeName !== 'goal' ? 'completed' : outcomeName) : null,
        finishedAt: finished ? now : null,
      });
      outcomes.set(run.id, finished ? 'finished' : decision.kind === 'advance' && decision.dueAt <= now ? 'continued' : 'advanced');
    }
    await writeWaits(tx, waits, now);
    await writeLogs(tx, logs, now);
    await writeAdvances(tx, advances, now);
  });
  if (toEnqueue.length) await enqueueSendJobs(deps, toEnqueue, now);
  return outcomes;
}

async function writeWaits(tx: SqlExecutor, waits: RunWait[], now: Date) {
  if (!waits.length) return;
  await tx.execute(
    `UPDATE "AutomationRun" r SET "waitEvent" = w."waitEvent", "waitSince" = w."waitSince", "dueAt" = w."dueAt", "updatedAt" = $5
       FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[]) AS w(id, "waitEvent", "waitSince", "dueAt")
      WHERE r.id = w.id`,
    [waits.map((w) => w.id), waits.map((w) => w.waitEvent), waits.map((w) => w.waitSince), waits.map((w) => w.dueAt), now],
  );
}

async function writeLogs(tx: SqlExecutor, logs: LogEntry[], now: Date) {
  if (!logs.length) return;
  await tx.execute(
    `INSERT INTO "AutomationRunLog" ("runId", seq, "stepId", "stepType", outcome, detail, "nextStepId", "emailId", at)
     SELECT l.*, $9::timestamptz
       FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
         AS l("runId", seq, "stepId", "stepType", outcome, detail, "nextStepId", "emailId")`,
    [
      logs.map((l) => l.runId),
      logs.map((l) => l.seq),
      logs.map((l) => l.stepId),
      logs.map((l) => l.stepType),
      logs.map((l) => l.outcome),
      logs.map((l) => l.detail),
      logs.map((l) => l.next),
      logs.map((l) => l.emailId),
      now,
    ],
  );
}

async function writeAdvances(tx: SqlExecutor, advances: RunAdvance[], now: Date) {
  if (!advances.length) return;
  await tx.execute(
    `UPDATE "AutomationRun" r
        SET status = a.status::"AutomationRunStatus", "stepId" = a."stepId", "dueAt" = a."dueAt", "waitEvent" = NULL, "waitSince" = NULL,
            "stepCount" = a."stepCount", "exitReason" = a."exitReason", "finishedAt" = a."finishedAt", "updatedAt" = $8
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::int[], $6::text[], $7::timestamptz[])
         AS a(id, status, "stepId", "dueAt", "stepCount", "exitReason", "finishedAt")
      WHERE r.id = a.id`,
    [
      advances.map((a) => a.id),
      advances.map((a) => a.status),
      advances.map((a) => a.stepId),
      advances.map((a) => a.dueAt),
      advances.map((a) => a.stepCount),
      advances.map((a) => a.exitReason),
      advances.map((a) => a.finishedAt),
      now,
    ],
  );
}
