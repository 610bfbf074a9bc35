import { campaignRecipientSkippedEventsSql } from '@mailrail/domain/sql/campaign-recipient-events';
import { clearDeadJob } from '@mailrail/platform/queue/dead-jobs';
import { emailIdPrefixAt } from '@mailrail/platform/ids';
import { insertEventsSql } from '@mailrail/domain/events/insert-events';
import type { WorkerDeps } from '../deps';
import { queueCampaignPreparation } from './campaign-preparation';

// The campaign scan, run about every second by one replica at a time (a BullMQ job scheduler).
// Every step is a conditional statement, so a scan that overlaps another, or that dies half-way,
// changes nothing twice:
//   1. start: SCHEDULED campaigns that are due become RUNNING (one UPDATE: only one scan wins);
//   2. recipients: a RUNNING campaign without recipients gets its preparation job queued (one per
//      campaign, campaign-preparation.ts) and is left alone until that job has written them: the
//      scan never evaluates a segment, so no tenant's data decides how long it runs;
//   3. outcomes: QUEUED recipients whose email was accepted by SES (or failed) become SENT
//      (or FAILED), and `sent` goes up by the number that became SENT in that same statement;
//   4. finish: a RUNNING campaign with no PENDING or QUEUED recipient left becomes SENT;
//   5. otherwise one window job is queued per campaign with PENDING recipients.

export interface ScanResult {
  started: string[];
  windows: string[];
  finished: string[];
  /** Campaigns whose recipient preparation was queued by this scan. */
  preparing: string[];
}

export const windowJobId = (campaignId: string) => `window-${campaignId}`;

export async function scanCampaigns(deps: WorkerDeps): Promise<ScanResult> {
  const now = deps.clock.now();
  const { sql } = deps;
  const started = await sql.query<{ id: string }>(
    `UPDATE "Campaign" SET status = 'RUNNING', "updatedAt" = $1, "pausedReason" = NULL
      WHERE status = 'SCHEDULED' AND "scheduledAt" <= $1
      RETURNING id`,
    [now],
  );
  const running = await sql.query<{ id: string; teamId: number; recipientsReadyAt: Date | null }>(
    `SELECT id, "teamId", "recipientsReadyAt" FROM "Campaign" WHERE status = 'RUNNING' ORDER BY "scheduledAt" NULLS FIRST LIMIT 200`,
  );
  const result: ScanResult = { started: started.map((r) => r.id), windows: [], finished: [], preparing: [] };
  for (const c of running) {
    if (!c.recipientsReadyAt) {
      const job = { campaignId: c.id, teamId: c.teamId };
      if (await queueCampaignPreparation(deps.queues, job, deps.config.CAMPAIGN_PREPARATION_ATTEMPTS)) result.preparing.push(c.id);
      continue;
    }
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
 * QUEUED recipients whose email is settled: SENT once SES accepted it, else SUPPRESSED (reason: the
 * suppression's, from the email's skipped `to`) or FAILED (reason: the email's status). Each
 * recipient that becomes SENT gets its built-in `campaign.sent` event in the same statement: a
 * recipient becomes SENT once, so its event is written once. A recipient suppressed after its
 * email was written (suppressAddresses withdrew it) gets its `campaign.recipient_skipped` webhook
 * event here too, like those the preparation and the windows skip.
 */
export async function recordOutcomes(deps: Pick<WorkerDeps, 'sql'>, campaignId: string, now: Date): Promise<number> {
  const rows = await deps.sql.query<{ sent: number }>(
    `WITH settled AS (
       UPDATE "CampaignEmail" ce
          SET status = CASE WHEN e."sesEmailId" IS NOT NULL THEN 'SENT'
                            WHEN e."latestStatus" = 'SUPPRESSED' THEN 'SUPPRESSED'
                            ELSE 'FAILED' END::"CampaignEmailStatus",
              reason = CASE WHEN e."sesEmailId" IS NOT NULL THEN NULL
                            WHEN e."latestStatus" = 'SUPPRESSED' THEN
                              (SELECT r->>'reason' FROM jsonb_array_elements(
                                 CASE WHEN jsonb_typeof(e."skippedRecipients") = 'array' THEN e."skippedRecipients" ELSE '[]'::jsonb END) r
                                WHERE r->>'type' = 'to' LIMIT 1)
                            ELSE e."latestStatus"::text END,
              "updatedAt" = $2
         FROM "Email" e
        WHERE ce."campaignId" = $1 AND ce.status = 'QUEUED' AND e.id = ce."emailId"
          AND (e."sesEmailId" IS NOT NULL OR e."latestStatus" IN ('FAILED', 'REJECTED', 'RENDERING_FAILURE', 'CANCELLED', 'SUPPRESSED'))
       RETURNING ce."campaignId", ce."contactId", ce."emailId", ce.email, ce.status, ce.reason, ce."updatedAt"
     ), skipped_events AS (
       ${campaignRecipientSkippedEventsSql({
         source: 'settled',
         teamIdSql: '(SELECT "teamId" FROM "Campaign" WHERE id = $1)',
         domainIdSql: '(SELECT "domainId" FROM "Campaign" WHERE id = $1)',
       })}
     ), counted AS (
       UPDATE "Campaign" SET sent = sent + (SELECT count(*) FROM settled WHERE status = 'SENT')
        WHERE id = $1 AND EXISTS (SELECT 1 FROM settled WHERE status = 'SENT')
     ), builtin_events AS (
       ${insertEventsSql(
         `SELECT NULL::text AS id, k."teamId", 'campaign.sent' AS name, c.id AS "contactId", c."contactBookId",
                 jsonb_build_object('campaignId', k.id, 'emailId', s."emailId") AS properties,
                 NULL::text AS "externalId", 'mailrail' AS source, NULL::timestamptz AS "occurredAt"
            FROM settled s JOIN "Campaign" k ON k.id = $1 JOIN "Contact" c ON c.id = s."contactId"
           WHERE s.status = 'SENT'`,
         { idPrefixSql: '$3', createdAtSql: '$2' },
       )}
     )
     SELECT count(*)::int AS sent FROM settled WHERE status = 'SENT'`,
    [campaignId, now, emailIdPrefixAt(now.getTime())],
  );
  return rows[0].sent;
}
