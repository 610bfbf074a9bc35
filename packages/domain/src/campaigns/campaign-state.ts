import type { CampaignStatus, Db } from '@mailrail/platform/db/client';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';

// Status moves shared by the API and by tests of the engine. Each is a conditional UPDATE, so a
// concurrent start, pause or delete is never overwritten.

/** Which campaign: its id within the team and, for a key bound to a domain, that domain (undefined = any). */
export interface CampaignScope {
  id: string;
  teamId: number;
  domainId?: number;
}

export const PAUSABLE_STATUSES: CampaignStatus[] = ['SCHEDULED', 'RUNNING'];

/**
 * SCHEDULED or RUNNING to PAUSED, holding back every email of the campaign that no worker has
 * claimed yet: they become CANCELLED, leave their window's count, and their recipients go back to PENDING, in the transaction
 * that sets PAUSED. The engine's window takes the same campaign row lock, so a window being written
 * either commits first (and its emails are held here) or sees PAUSED and writes nothing. Emails
 * already claimed (in flight at SES) finish. False when the campaign is not the team's or not pausable.
 */
export async function pauseCampaignAndHoldEmails(db: Db, campaign: CampaignScope, now: Date): Promise<boolean> {
  return db.$transaction(
    async (tx) => {
      const { count } = await tx.campaign.updateMany({
        where: { id: campaign.id, teamId: campaign.teamId, domainId: campaign.domainId, status: { in: PAUSABLE_STATUSES } },
        data: { status: 'PAUSED' },
      });
      if (count === 0) return false;
      await prismaExecutor(tx).execute(
        `WITH held AS (
           UPDATE "Email" SET "latestStatus" = 'CANCELLED', "updatedAt" = $2::timestamptz
            WHERE "campaignId" = $1 AND "latestStatus" IN ('QUEUED', 'SCHEDULED') AND "sesEmailId" IS NULL
              AND ("sendLeaseUntil" IS NULL OR "sendLeaseUntil" < now())
           RETURNING id, "createdAt"
         ), events AS (
           INSERT INTO "EmailEvent" ("emailId", status, data, "createdAt")
           SELECT id, 'CANCELLED', '{"reason":"campaign paused"}'::jsonb, $2::timestamptz FROM held
         ), per_window AS (
           -- Each held email no longer counts as sent by the window it was written in (the last
           -- one opened at or before it); its recipient is sent to by a later window.
           SELECT (SELECT max(cw.number) FROM "CampaignWindow" cw WHERE cw."campaignId" = $1 AND cw."openedAt" <= held."createdAt") AS number,
                  count(*)::int AS n
             FROM held GROUP BY 1
         ), windows AS (
           UPDATE "CampaignWindow" w SET queued = w.queued - pw.n FROM per_window pw
            WHERE w."campaignId" = $1 AND w.number = pw.number
         )
         UPDATE "CampaignEmail" SET status = 'PENDING', "emailId" = NULL, "updatedAt" = $2::timestamptz
          WHERE "campaignId" = $1 AND "emailId" IN (SELECT id FROM held)`,
        [campaign.id, now],
      );
      return true;
    },
    { timeout: 60_000 },
  );
}

/** PAUSED only: back to SCHEDULED if its time is still ahead, else RUNNING (the engine goes on). */
export async function resumePausedCampaign(db: Db, campaign: CampaignScope, now: Date): Promise<boolean> {
  const c = await db.campaign.findFirst({
    where: { id: campaign.id, teamId: campaign.teamId, domainId: campaign.domainId },
    select: { scheduledAt: true },
  });
  if (!c) return false;
  const status: CampaignStatus = c.scheduledAt && c.scheduledAt > now ? 'SCHEDULED' : 'RUNNING';
  const { count } = await db.campaign.updateMany({
    where: { id: campaign.id, teamId: campaign.teamId, domainId: campaign.domainId, status: 'PAUSED' },
    data: { status, pausedReason: null },
  });
  return count > 0;
}
