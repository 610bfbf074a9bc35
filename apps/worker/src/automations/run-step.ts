import type { Clock } from '@mailrail/platform/clock';
import type { Config } from '@mailrail/platform/config/schema';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import { withTransaction } from '@mailrail/platform/db/sql/executor';
import type { Logger } from '@mailrail/platform/log/logger';
import type { QueueFactory } from '@mailrail/platform/queue/queues';
import type { RunContext } from '@mailrail/domain/automations/conditions';
import { LRUCache } from 'lru-cache';
import type { Definition } from '@mailrail/domain/automations/definition';
import { loadStepFacts, loadVersion } from '@mailrail/domain/automations/run-facts';
import { decideStep } from '@mailrail/domain/automations/step-decision';
import { enqueueSendJobs, type PreparedEmail } from '@mailrail/domain/emails/create-emails';
import { applyEffect } from './step-effects';

// One step of one run, top to bottom, in ONE transaction:
//   1. lock the run (FOR UPDATE SKIP LOCKED), still ACTIVE, due, of an ACTIVE automation;
//   2. read the facts (contact, suppression, goal, awaited event) and decide (step-decision.ts);
//   3. write the side effect (email row, contact change, webhook outbox row) on the same transaction;
//   4. write the log entry (runId, stepCount + 1) and move the run to its next step and due time.
// COMMIT makes 3 and 4 true together; a crash before it leaves the run as it was, due, and the
// next tick runs the step again from scratch: no step is lost, none is done twice. After COMMIT,
// the send job is added to Redis; if that is lost the send sweeper adds it from PostgreSQL.

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
  const now = deps.clock.now();
  let toEnqueue: PreparedEmail[] = [];
  const outcome = await withTransaction(deps.sql, async (tx) => {
    const [run] = await tx.query<LockedRun>(
      `SELECT r.id, r."teamId", r."automationId", r.version, r."contactId", r.context, r."stepId", r."dueAt", r."waitSince",
              r."stepCount", r."enteredAt"
         FROM "AutomationRun" r JOIN "Automation" a ON a.id = r."automationId"
        WHERE r.id = $1 AND r.status = 'ACTIVE' AND r."dueAt" <= $2 AND a.status = 'ACTIVE'
          FOR UPDATE OF r SKIP LOCKED`,
      [runId, now],
    );
    if (!run) return 'skipped' as const;
    const def = await cachedVersion(tx, run.automationId, run.version);
    const facts = await loadStepFacts(tx, def, run, run.stepId, now);
    const decision = decideStep(def, run, facts, now);
    const seq = run.stepCount + 1;

    if (decision.kind === 'wait') {
      await tx.execute(`UPDATE "AutomationRun" SET "waitEvent" = $2, "waitSince" = $3, "dueAt" = $4, "updatedAt" = $5 WHERE id = $1`, [
        run.id,
        decision.step.type === 'waitForEvent' ? decision.step.event : null,
        decision.since,
        decision.until,
        now,
      ]);
      return 'waiting' as const;
    }

    let status: 'ACTIVE' | 'COMPLETED' | 'EXITED' | 'FAILED' = decision.kind === 'finish' ? decision.status : 'ACTIVE';
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
        toEnqueue = result.prepared ?? [];
      }
      await deps.afterEffect?.(run.id);
    }
    if (status === 'ACTIVE' && next === null) status = 'COMPLETED';
    await writeLog(
      tx,
      run.id,
      seq,
      decision.step?.id ?? run.stepId,
      decision.step?.type ?? 'unknown',
      outcomeName,
      detail,
      next,
      emailId,
      now,
    );
    const finished = status !== 'ACTIVE';
    await tx.execute(
      `UPDATE "AutomationRun"
          SET status = $2::"AutomationRunStatus", "stepId" = $3, "dueAt" = $4, "waitEvent" = NULL, "waitSince" = NULL,
              "stepCount" = $5, "exitReason" = $6, "finishedAt" = $7, "updatedAt" = $8
        WHERE id = $1`,
      [
        run.id,
        status,
        finished ? null : next,
        finished ? null : decision.kind === 'advance' ? decision.dueAt : null,
        seq,
        finished ? (status === 'COMPLETED' && outcomeName !== 'goal' ? 'completed' : outcomeName) : null,
        finished ? now : null,
        now,
      ],
    );
    if (finished) return 'finished' as const;
    return decision.kind === 'advance' && decision.dueAt <= now ? ('continued' as const) : ('advanced' as const);
  });
  if (toEnqueue.length) await enqueueSendJobs(deps, toEnqueue, now);
  return outcome;
}

async function writeLog(
  tx: SqlExecutor,
  runId: string,
  seq: number,
  stepId: string,
  stepType: string,
  outcome: string,
  detail: string,
  next: string | null,
  emailId: string | null,
  now: Date,
) {
  await tx.execute(
    `INSERT INTO "AutomationRunLog" ("runId", seq, "stepId", "stepType", outcome, detail, "nextStepId", "emailId", at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [runId, seq, stepId, stepType, outcome, detail.slice(0, 1000), next, emailId, now],
  );
}
