import { ApiError, badRequest } from '@mailrail/domain/errors/api-error';
import { segmentFilterCostProblem, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { setLocalStatementTimeout, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { isQueryCanceled } from '@mailrail/platform/db/sql/postgres-error';
import type { Config } from '@mailrail/platform/config/schema';
import type { ApiDeps } from '../deps';

// A segment filter is SQL a user built: conditions on names and properties read every contact of
// the book. Its evaluation is bounded three ways (docs/audience.md, "Cost and budgets"): a filter
// over its cost budget is refused before it runs; a team runs at most SEGMENT_CONCURRENCY_PER_TEAM
// evaluations at once (and all teams SEGMENT_CONCURRENCY), on the heavy pool, never on the pool
// requests and sends need; and each statement stops at its timeout.

export type SegmentQueryDeps = Pick<ApiDeps, 'heavySql' | 'budgets' | 'clock'> & {
  config: Pick<Config, 'SEGMENT_QUERY_TIMEOUT_MS' | 'SEGMENT_PREVIEW_TIMEOUT_MS'>;
};

/** A statement's bound: the builder's live preview has a shorter one than pages, exports and campaign checks. */
export type SegmentTimeout = 'SEGMENT_QUERY_TIMEOUT_MS' | 'SEGMENT_PREVIEW_TIMEOUT_MS';

export const segmentTooSlow = (ms: number, setting: SegmentTimeout = 'SEGMENT_QUERY_TIMEOUT_MS') =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    `Evaluating the segment filter took longer than ${ms} ms (${setting}) and was stopped: ` +
      'narrow the filter (conditions on names and properties read every contact of the book) or retry when the database is less busy',
  );

/** The error to answer for `err`: a statement stopped by the timeout is segmentTooSlow; anything else as it is. */
export function segmentQueryError(err: unknown, ms: number, setting: SegmentTimeout = 'SEGMENT_QUERY_TIMEOUT_MS'): unknown {
  return isQueryCanceled(err) ? segmentTooSlow(ms, setting) : err;
}

/** Refuses (400) a filter over its cost budget: a stored one saved before the budget existed included. */
export function requireAffordableFilter(filter: SegmentFilter): void {
  const problem = segmentFilterCostProblem(filter);
  if (problem) throw badRequest(problem, [{ path: ['filter'], message: problem }]);
}

/**
 * Evaluates `filter` (null: the whole book, as the pre-send check counts it) for `teamId`: in a place of the team's segment budget (429 or 503 when there is
 * none), as one short transaction on the heavy pool whose every statement stops after `setting`.
 * `work` runs the statements; the connection is back in the pool when this answers.
 */
export async function evaluateSegment<T>(
  deps: SegmentQueryDeps,
  teamId: number,
  filter: SegmentFilter | null,
  setting: SegmentTimeout,
  work: (sql: SqlExecutor) => Promise<T>,
): Promise<T> {
  if (filter) requireAffordableFilter(filter);
  const ms = deps.config[setting];
  try {
    return await deps.budgets.run('segment', teamId, () =>
      deps.heavySql.transaction(async (tx) => {
        await setLocalStatementTimeout(tx, ms);
        return work(tx);
      }),
    );
  } catch (err) {
    throw segmentQueryError(err, ms, setting);
  }
}
