import { clearDeadJob } from '@mailrail/platform/queue/dead-jobs';
import { withTransaction } from '@mailrail/platform/db/sql/executor';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { storedSegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import type { WorkerDeps } from '../deps';

// The campaign scan, run about every second by one replica at a time (a BullMQ job scheduler).
// Every step is a conditional statement, so a scan that overlaps another, or that dies half-way,
// changes nothing twice:
//   1. start: SCHEDULED campaigns that are due become RUNNING (one UPDATE: only one scan wins);
//   2. recipients: a RUNNING campaign without recipients gets them (its book's subscribed contacts,
//      or its segment's), in one INSERT ... SELECT;
//   3. outcomes: QUEUED recipients whose email was accepted by SES (or failed) become SENT
//      (or FAILED), and `sent` goes up by the number that became SENT in that same statement;
//   4. finish: a RUNNING campaign with no PENDING or QUEUED recipient left becomes SENT;
//   5. otherwise one window job is queued per campaign with PENDING recipients.

export interface ScanResult {
  started: string[];
  windows: string[];
  finished: string[];
}

export const windowJobId = (campaignId: string) => `window-${campaignId}`;

export async function scanCampaigns(deps: WorkerDeps): Promise<ScanResult> {
  const now = deps.clock.now();
  const { sql } = deps;
  const started = await sql.query<{ id: string }>(
    `UPDATE "Campaign" SET status = 'RUNNING', "updatedAt" = $1
      WHERE status = 'SCHEDULED' AND "scheduledAt" <= $1
      RETURNING id`,
    [now],
  );
  const running = await sql.query<{ id: string; recipientsReadyAt: Date | null }>(
    `SELECT id, "recipientsReadyAt" FROM "Campaign" WHERE status = 'RUNNING' ORDER BY "scheduledAt" NULLS FIRST LIMIT 200`,
  );
  const result: ScanResult = { started: started.map((r) => r.id), windows: [], finished: [] };
  for (const c of running) {
    if (!c.recipientsReadyAt) await prepareRecipients(deps, c.id, now);
    await recordOutcomes(deps, c.id, now);
    const left = await sql.query<{ pending: boolean; queued: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM "CampaignEmail" WHERE "campaignId" = $1 AND status = 'PENDING') AS pending,
              EXISTS (SELECT 1 FROM "CampaignEmail" WHERE "campaignId" = $1 AND status = 'QUEUED') AS queued`,
      [c.id],
    );
    const { pending, queued } = left[0];
    if (!pending && !queued) {
      const done = await sql.execute(
        `UPDATE "Campaign" SET status = 'SENT', "updatedAt" = $2
          WHERE id = $1 AND status = 'RUNNING' AND "recipientsReadyAt" IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM "CampaignEmail" WHERE "campaignId" = $1 AND status IN ('PENDING', 'QUEUED'))`,
        [c.id, now],
      );
      if (done) result.finished.push(c.id);
    } else if (pending) {
      // One window job per campaign while one is waiting or running (its id); removed when done
      // so the next scan can add it again. The window job itself decides how much is left.
      const queue = deps.queues.get('campaigns');
      if (await clearDeadJob(queue, windowJobId(c.id))) {
        await queue.add('window', { campaignId: c.id }, { jobId: windowJobId(c.id), removeOnComplete: true, removeOnFail: true });
        result.windows.push(c.id);
      }
    }
  }
  return result;
}

/**
 * The audience is fixed at start: the book's subscribed contacts (only those the campaign's segment
 * matches, when it has one, compiled by the same segmentFilterSql as the API's counts), one row each
 * (the primary key (campaignId, contactId) makes a second run add nothing); suppressed addresses are
 * recorded as SUPPRESSED and never get an email. `total` and `recipientsReadyAt` are set in the same
 * transaction. The segment is read in that transaction too: a segment edited until now counts as it is now.
 */
export async function prepareRecipients(deps: Pick<WorkerDeps, 'sql'>, campaignId: string, now: Date): Promise<void> {
  await withTransaction(deps.sql, async (tx) => {
    const params: unknown[] = [campaignId, now];
    const [segment] = await tx.query<{ filter: unknown }>(
      `SELECT s.filter FROM "Campaign" k JOIN "Segment" s ON s.id = k."segmentId" WHERE k.id = $1`,
      [campaignId],
    );
    const inSegment = segment ? ` AND ${segmentFilterSql(storedSegmentFilter(segment.filter), 'ct', params)}` : '';
    await tx.execute(
      `INSERT INTO "CampaignEmail" ("campaignId", "contactId", email, status, "createdAt", "updatedAt")
       SELECT k.id, ct.id, ct.email,
              CASE WHEN s.id IS NULL THEN 'PENDING' ELSE 'SUPPRESSED' END::"CampaignEmailStatus",
              $2::timestamptz, $2::timestamptz
         FROM "Campaign" k
         JOIN "Contact" ct ON ct."contactBookId" = k."contactBookId" AND ct.subscribed${inSegment}
         LEFT JOIN "Suppression" s ON s."teamId" = k."teamId" AND s.email = lower(ct.email)
        WHERE k.id = $1 AND k."recipientsReadyAt" IS NULL
       ON CONFLICT DO NOTHING`,
      params,
    );
    await tx.execute(
      `UPDATE "Campaign" SET "recipientsReadyAt" = $2, "updatedAt" = $2,
              total = (SELECT count(*) FROM "CampaignEmail" WHERE "campaignId" = $1)
        WHERE id = $1 AND "recipientsReadyAt" IS NULL`,
      [campaignId, now],
    );
  });
}

/** QUEUED recipients whose email is settled: SENT once SES accepted it, else FAILED or SUPPRESSED. */
export async function recordOutcomes(deps: Pick<WorkerDeps, 'sql'>, campaignId: string, now: Date): Promise<number> {
  const rows = await deps.sql.query<{ sent: number }>(
    `WITH settled AS (
       UPDATE "CampaignEmail" ce
          SET status = CASE WHEN e."sesEmailId" IS NOT NULL THEN 'SENT'
                            WHEN e."latestStatus" = 'SUPPRESSED' THEN 'SUPPRESSED'
                            ELSE 'FAILED' END::"CampaignEmailStatus",
              "updatedAt" = $2
         FROM "Email" e
        WHERE ce."campaignId" = $1 AND ce.status = 'QUEUED' AND e.id = ce."emailId"
          AND (e."sesEmailId" IS NOT NULL OR e."latestStatus" IN ('FAILED', 'REJECTED', 'RENDERING_FAILURE', 'CANCELLED', 'SUPPRESSED'))
       RETURNING ce.status
     ), counted AS (
       UPDATE "Campaign" SET sent = sent + (SELECT count(*) FROM settled WHERE status = 'SENT')
        WHERE id = $1 AND EXISTS (SELECT 1 FROM settled WHERE status = 'SENT')
     )
     SELECT count(*)::int AS sent FROM settled WHERE status = 'SENT'`,
    [campaignId, now],
  );
  return rows[0].sent;
}
