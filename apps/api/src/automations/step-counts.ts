import { RUN_ENDING_OUTCOMES } from '@mailrail/domain/automations/step-decision';
import { setLocalStatementTimeout } from '@mailrail/platform/db/sql/executor';
import { isQueryCanceled } from '@mailrail/platform/db/sql/postgres-error';
import { ApiError } from '@mailrail/domain/errors/api-error';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { teamAutomation } from './service';

// Per-step counts of an automation (docs/automations.md, "Dashboard"): an aggregate over every run
// and log row of it, up to millions. It is heavy work: it takes a place of the team's segment budget
// (the budget of the other heavy reads of a team's audience; 429/503 when full), runs on the heavy
// pool, and its statement stops after SEGMENT_QUERY_TIMEOUT_MS (503), so a large automation's page
// cannot take the connections that sends and requests need.

export type StepCountsDeps = Pick<ApiDeps, 'db' | 'clock' | 'heavySql' | 'budgets'> & {
  config: Pick<ApiDeps['config'], 'SEGMENT_QUERY_TIMEOUT_MS'>;
};

export interface StepCount {
  stepId: string;
  entered: number;
  waiting: number;
  done: number;
  exited: number;
}

/**
 * For each step id (of every version): `waiting`, runs in it now (a wait step holding them, a
 * wait-for-event step, or due to run); `exited`, runs that ended there without going on (exit
 * step, goal, unsubscribed, suppressed, deleted, failed); `done`, runs that carried it out and went
 * on (or completed there); `entered` is their sum. A run sits at the step after a wait once the
 * wait step ran: its last log row ('waited') puts it back in the wait.
 */
export async function stepCounts(deps: StepCountsDeps, auth: AuthContext, id: string): Promise<{ data: StepCount[] }> {
  const a = await teamAutomation(deps, auth, id);
  const ms = deps.config.SEGMENT_QUERY_TIMEOUT_MS;
  try {
    const rows = await deps.budgets.run('segment', auth.teamId, () =>
      deps.heavySql.transaction(async (tx) => {
        await setLocalStatementTimeout(tx, ms);
        return tx.query<StepCount>(
          `WITH logged AS (
             SELECT l."stepId",
                    count(*) FILTER (WHERE l.outcome = ANY($2::text[]))::int AS exited,
                    count(*) FILTER (WHERE NOT l.outcome = ANY($2::text[]))::int AS passed
               FROM "AutomationRun" r JOIN "AutomationRunLog" l ON l."runId" = r.id
              WHERE r."automationId" = $1
              GROUP BY l."stepId"
           ), here AS (
             SELECT CASE WHEN l.outcome = 'waited' THEN l."stepId" ELSE r."stepId" END AS "stepId",
                    count(*)::int AS waiting,
                    count(*) FILTER (WHERE l.outcome = 'waited')::int AS held
               FROM "AutomationRun" r LEFT JOIN "AutomationRunLog" l ON l."runId" = r.id AND l.seq = r."stepCount"
              WHERE r."automationId" = $1 AND r.status = 'ACTIVE'
              GROUP BY 1
           )
           SELECT s."stepId",
                  coalesce(g.exited, 0) + coalesce(g.passed, 0) + coalesce(h.waiting, 0) - coalesce(h.held, 0) AS entered,
                  coalesce(h.waiting, 0) AS waiting,
                  coalesce(g.passed, 0) - coalesce(h.held, 0) AS done,
                  coalesce(g.exited, 0) AS exited
             FROM (SELECT "stepId" FROM logged UNION SELECT "stepId" FROM here WHERE "stepId" IS NOT NULL) s
             LEFT JOIN logged g ON g."stepId" = s."stepId"
             LEFT JOIN here h ON h."stepId" = s."stepId"
            ORDER BY s."stepId"`,
          [a.id, [...RUN_ENDING_OUTCOMES]],
        );
      }),
    );
    return { data: rows };
  } catch (err) {
    if (isQueryCanceled(err))
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        `Counting the steps' runs took longer than ${ms} ms (SEGMENT_QUERY_TIMEOUT_MS) and was stopped: retry later`,
      );
    throw err;
  }
}
