import { runDueSteps, type RunStepDeps, type StepOutcome } from './run-step';

// Which due runs one tick advances, fairly: the due runs of ACTIVE automations are ranked within
// their team by due time, and the tick takes the lowest ranks first, at most `perTeam` per team
// and `total` in all (docs/automations.md, "Fairness"). A team with a million due waits fills its
// own share; another team's single due run is in the same tick. Work-conserving: a lone team gets
// up to `perTeam`. The read takes no lock; each run is then locked, re-checked and advanced in its
// own transaction (run-step.ts), so two workers on the same tick skip each other's runs.

export interface AdvanceBudget {
  perTeam: number;
  total: number;
  /** Lanes advancing runs side by side (each its own transaction and connection); 1 when left out. */
  concurrency?: number;
  /** Runs whose steps one transaction runs together (run-step.ts, runDueSteps); 1 when left out. */
  batch?: number;
  /**
   * Wall-clock milliseconds after which the tick takes no further run (those stay due for the next
   * tick): enrollment and another team's new runs wait at most about this long behind a burst.
   */
  maxMs?: number;
}

// Keyset per automation: each ACTIVE automation gives at most `perTeam` of its earliest due runs
// straight from the (automationId, status, dueAt) index, and only those few are ranked per team.
// Ranking every due run (a window over all of them) sorted a million rows at each tick of a burst.
const FAIR_DUE_RUNS_SQL = `
  SELECT id FROM (
    SELECT d.id, d."dueAt", row_number() OVER (PARTITION BY a."teamId" ORDER BY d."dueAt", d.id) AS rank
      FROM "Automation" a
      CROSS JOIN LATERAL (
        SELECT r.id, r."dueAt" FROM "AutomationRun" r
         WHERE r."automationId" = a.id AND r.status = 'ACTIVE' AND r."dueAt" <= $1
         ORDER BY r."dueAt"
         LIMIT $2
      ) d
     WHERE a.status = 'ACTIVE'
  ) ranked
  WHERE rank <= $2
  ORDER BY rank, "dueAt", id
  LIMIT $3`;

/** Steps of one run one tick runs back to back while the next is due at once. */
export const MAX_STEPS_PER_RUN_PER_TICK = 20;

export async function advanceDueRuns(deps: RunStepDeps, budget: AdvanceBudget): Promise<Record<StepOutcome, number>> {
  const counts: Record<StepOutcome, number> = { advanced: 0, continued: 0, finished: 0, waiting: 0, skipped: 0 };
  const rows = await deps.sql.query<{ id: string }>(FAIR_DUE_RUNS_SQL, [deps.clock.now(), budget.perTeam, budget.total]);
  // Runs one step of each run of a batch in one transaction; a run whose next step is due at once
  // (a send then a wait: the wait starts now, not a tick later) goes again with the others that are.
  const advanceBatch = async (ids: string[]) => {
    for (let n = 0; n < MAX_STEPS_PER_RUN_PER_TICK && ids.length; n++) {
      const outcomes = await runBatchOrEach(ids);
      for (const id of ids) counts[outcomes.get(id) ?? 'skipped']++;
      ids = ids.filter((id) => outcomes.get(id) === 'continued');
    }
  };
  const runBatchOrEach = async (ids: string[]): Promise<Map<string, StepOutcome>> => {
    try {
      return await runDueSteps(deps, ids);
    } catch (err) {
      if (ids.length === 1) {
        // The run stays due and is tried again next tick; one bad run does not stop the others.
        deps.log.error({ err, runId: ids[0] }, 'automation step failed; retried next tick');
        return new Map([[ids[0], 'skipped']]);
      }
      // One run's step threw and rolled the batch back: each run alone, so it holds back only itself.
      const outcomes = new Map<string, StepOutcome>();
      for (const id of ids) for (const [k, v] of await runBatchOrEach([id])) outcomes.set(k, v);
      return outcomes;
    }
  };
  // A step is a few round trips to PostgreSQL, mostly waiting: a few lanes side by side, each taking
  // the next batch of runs in the fair order, drain a burst several times faster than one.
  // The deadline is the machine's time, not the injected clock: it bounds work, it decides nothing.
  const deadline = budget.maxMs === undefined ? Infinity : performance.now() + budget.maxMs;
  const batchSize = Math.max(1, budget.batch ?? 1);
  let next = 0;
  const lane = async () => {
    while (next < rows.length && performance.now() < deadline) {
      const ids = rows.slice(next, next + batchSize).map((r) => r.id);
      next += ids.length;
      await advanceBatch(ids);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(budget.concurrency ?? 1, rows.length)) }, lane));
  return counts;
}
