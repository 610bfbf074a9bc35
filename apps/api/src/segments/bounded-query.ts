import { ApiError } from '@mailrail/domain/errors/api-error';
import { prismaExecutor, setLocalStatementTimeout } from '@mailrail/platform/db/sql/executor';
import { errorCodes, isQueryCanceled } from '@mailrail/platform/db/sql/postgres-error';
import type { Config } from '@mailrail/platform/config/schema';
import type { Db } from '@mailrail/platform/db/client';

// A segment filter is SQL a user built: conditions on names and properties read every contact of
// the book, and twenty of them in twenty groups read each one four hundred times. Every statement
// that evaluates one runs under SEGMENT_QUERY_TIMEOUT_MS, so such a filter costs one connection for
// that long at most and answers 503, instead of holding the pool every other request needs.

/** How long a bounded transaction (a segment statement, an export) may wait for a pooled connection. */
export const SEGMENT_POOL_WAIT_MS = 30_000;

export type SegmentQueryDeps = { db: Db; config: Pick<Config, 'SEGMENT_QUERY_TIMEOUT_MS'> };

export const segmentTooSlow = (ms: number) =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    `Evaluating the segment filter took longer than ${ms} ms (SEGMENT_QUERY_TIMEOUT_MS) and was stopped: ` +
      'narrow the filter (conditions on names and properties read every contact of the book) or retry when the database is less busy',
  );

/**
 * The error to answer for `err`: a statement stopped by the timeout is segmentTooSlow; Prisma's
 * P2028 (no connection for the transaction within maxWait, or its own timeout passed) is a 503 too.
 */
export function segmentQueryError(err: unknown, ms: number): unknown {
  if (isQueryCanceled(err)) return segmentTooSlow(ms);
  if (errorCodes(err).includes('P2028'))
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is too busy to evaluate the segment filter now, retry shortly');
  return err;
}

/**
 * One statement that evaluates a segment filter, in a transaction of its own whose
 * statement_timeout is SEGMENT_QUERY_TIMEOUT_MS (statements of one request run side by side, each
 * bounded). A longer export reads through its own snapshot transaction (contacts/export.ts).
 */
export async function boundedSegmentQuery<T>(deps: SegmentQueryDeps, text: string, params: readonly unknown[]): Promise<T[]> {
  const ms = deps.config.SEGMENT_QUERY_TIMEOUT_MS;
  try {
    return await deps.db.$transaction(
      async (tx) => {
        const sql = prismaExecutor(tx);
        await setLocalStatementTimeout(sql, ms);
        return sql.query<T>(text, params);
      },
      // Prisma's transaction timeout only backs up the server's. Its wait for a connection must be
      // a number where an ordinary query waits as long as it takes: the same generous bound.
      { maxWait: SEGMENT_POOL_WAIT_MS, timeout: ms + 5_000 },
    );
  } catch (err) {
    throw segmentQueryError(err, ms);
  }
}
