import { campaignRecipientSkippedEventsSql } from '@mailrail/domain/sql/campaign-recipient-events';
import { setLocalStatementTimeout, withTransaction, type TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { Config } from '@mailrail/platform/config/schema';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { suppressionJoinSql } from '@mailrail/domain/sql/suppression';
import { segmentFilterCostProblem, storedSegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';

// A campaign's audience, fixed when it starts, written in keyset batches over the book's contacts
// (by id): each batch is one transaction under a statement timeout that decides the recipient rows
// of the next `batchSize` contacts (the segment's filter included) and moves the campaign's
// checkpoint (recipientsCursor) past them. However slow a filter is, no statement runs longer than
// the timeout, and a retry resumes after the last committed batch; the primary key
// (campaignId, contactId) keeps a replayed batch from adding a row twice.

export interface PreparationSettings {
  /** Contacts of the book each batch looks at. */
  batchSize: number;
  /** Longest any statement of one batch may run (SQLSTATE 57014 past it). */
  statementTimeoutMs: number;
}

export const preparationSettings = (
  config: Pick<Config, 'CAMPAIGN_PREPARATION_BATCH_SIZE' | 'CAMPAIGN_PREPARATION_TIMEOUT_MS'>,
): PreparationSettings => ({
  batchSize: config.CAMPAIGN_PREPARATION_BATCH_SIZE,
  statementTimeoutMs: config.CAMPAIGN_PREPARATION_TIMEOUT_MS,
});

const DEFAULT_SETTINGS: PreparationSettings = { batchSize: 5000, statementTimeoutMs: 30_000 };

/**
 * The campaign's segment filter is over the cost budget the API holds filters to (one saved before
 * the budget existed): it is not evaluated at all, and no retry would change that.
 */
export class SegmentTooCostly extends Error {}

/** `ready`: every recipient row exists and `total` is set; `stopped`: the campaign is no longer to be prepared (paused, deleted, ready). */
export type PreparationOutcome = 'ready' | 'stopped';

/**
 * Writes the campaign's recipient rows: the book's subscribed contacts (only those its segment
 * matches, compiled by the same segmentFilterSql as the API's counts); suppressed addresses are
 * recorded SUPPRESSED, with the suppression's reason, and never get an email. `total` and `recipientsReadyAt` are set with the last
 * batch. Each batch reads the campaign row under a lock, so a pause or delete stops it between
 * batches, and the segment as it is then.
 */
export async function prepareRecipients(
  deps: { sql: TransactionalSqlExecutor },
  campaignId: string,
  now: Date,
  settings: PreparationSettings = DEFAULT_SETTINGS,
  hooks: { afterBatch?: (cursor: string) => void | Promise<void> } = {},
): Promise<PreparationOutcome> {
  for (;;) {
    const step = await prepareRecipientBatch(deps.sql, campaignId, now, settings);
    if (step.outcome) return step.outcome;
    await hooks.afterBatch?.(step.cursor);
  }
}

type BatchStep = { outcome: PreparationOutcome; cursor?: undefined } | { outcome?: undefined; cursor: string };

async function prepareRecipientBatch(
  sql: TransactionalSqlExecutor,
  campaignId: string,
  now: Date,
  settings: PreparationSettings,
): Promise<BatchStep> {
  return withTransaction(sql, async (tx): Promise<BatchStep> => {
    await setLocalStatementTimeout(tx, settings.statementTimeoutMs);
    const [c] = await tx.query<{
      teamId: number;
      domainId: number | null;
      contactBookId: string | null;
      recipientsCursor: string | null;
      filter: unknown;
    }>(
      `SELECT k."teamId", k."domainId", k."contactBookId", k."recipientsCursor", s.filter
         FROM "Campaign" k LEFT JOIN "Segment" s ON s.id = k."segmentId"
        WHERE k.id = $1 AND k."recipientsReadyAt" IS NULL AND k.status IN ('SCHEDULED', 'RUNNING')
        FOR UPDATE OF k`,
      [campaignId],
    );
    if (!c) return { outcome: 'stopped' };
    const params: unknown[] = [campaignId, now, c.contactBookId, c.recipientsCursor ?? '', settings.batchSize, c.teamId, c.domainId];
    const filter = c.filter !== null && c.filter !== undefined ? storedSegmentFilter(c.filter) : null;
    const tooCostly = filter && segmentFilterCostProblem(filter);
    if (tooCostly) throw new SegmentTooCostly(tooCostly);
    const inSegment = filter ? ` AND ${segmentFilterSql(filter, 'ct', { teamId: c.teamId, now }, params)}` : '';
    const [slice] = await tx.query<{ last: string | null; looked: number }>(
      `WITH slice AS (
         SELECT id FROM "Contact" WHERE "contactBookId" = $3 AND id > $4 ORDER BY id LIMIT $5
       ), added AS (
         INSERT INTO "CampaignEmail" ("campaignId", "contactId", email, status, reason, "createdAt", "updatedAt")
         SELECT $1, ct.id, ct.email,
                CASE WHEN s.id IS NULL THEN 'PENDING' ELSE 'SUPPRESSED' END::"CampaignEmailStatus", s.reason::text,
                $2::timestamptz, $2::timestamptz
           FROM slice JOIN "Contact" ct ON ct.id = slice.id AND ct.subscribed${inSegment}
           ${suppressionJoinSql('s', '$6', 'ct.email')}
         ON CONFLICT DO NOTHING
         RETURNING "campaignId", "contactId", email, status, reason, "updatedAt"
       ), skipped_events AS (
         -- Only the rows this statement inserted: a replayed batch writes no second event.
         ${campaignRecipientSkippedEventsSql({ source: 'added', teamIdSql: '$6::int', domainIdSql: '$7::int' })}
       )
       SELECT max(id) AS last, count(*)::int AS looked FROM slice`,
      params,
    );
    if (slice.last !== null && slice.looked >= settings.batchSize) {
      await tx.execute(`UPDATE "Campaign" SET "recipientsCursor" = $2 WHERE id = $1`, [campaignId, slice.last]);
      return { cursor: slice.last };
    }
    await tx.execute(
      `UPDATE "Campaign" SET "recipientsReadyAt" = $2, "updatedAt" = $2, "recipientsCursor" = NULL, "pausedReason" = NULL,
              total = (SELECT count(*) FROM "CampaignEmail" WHERE "campaignId" = $1)
        WHERE id = $1`,
      [campaignId, now],
    );
    return { outcome: 'ready' };
  });
}

/**
 * A preparation that failed for good (its batch timed out on every try): the campaign is PAUSED with
 * the reason shown to the user, so no scan starts it again; resuming it (after editing its segment)
 * prepares it again from its checkpoint.
 */
export async function pauseUnpreparedCampaign(
  sql: TransactionalSqlExecutor,
  campaignId: string,
  reason: string,
  now: Date,
): Promise<boolean> {
  const paused = await sql.execute(
    `UPDATE "Campaign" SET status = 'PAUSED', "pausedReason" = $2, "updatedAt" = $3
      WHERE id = $1 AND status = 'RUNNING' AND "recipientsReadyAt" IS NULL`,
    [campaignId, reason, now],
  );
  return paused > 0;
}
