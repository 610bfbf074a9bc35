import type { CampaignEmailStatus, EmailStatus, SuppressionReason } from '@mailrail/platform/db/generated/enums';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

// Every contact of a campaign ends with an outcome (issue 42), in the vocabulary of an email's
// recipients (packages/domain/src/emails/recipient-outcomes.ts). The recipient row
// (CampaignEmail) stores where the engine left it and, when it was not sent to, why (`reason`):
//   SUPPRESSED    the address is on the team's suppression list: HARD_BOUNCE, COMPLAINT or MANUAL
//                 (found when the audience was fixed, or when its email was written);
//   UNSUBSCRIBED  the contact unsubscribed (UNSUBSCRIBED) or was deleted (CONTACT_DELETED) after
//                 the audience was fixed;
//   FAILED        its email never reached SES: the email's status (FAILED, REJECTED,
//                 RENDERING_FAILURE, CANCELLED).
// SENT recipients follow their email's status (delivered, bounced, complained).

/** An email status that ends a campaign recipient FAILED (SES never accepted its email). */
export const FAILED_EMAIL_STATUSES = ['FAILED', 'REJECTED', 'RENDERING_FAILURE', 'CANCELLED'] as const satisfies readonly EmailStatus[];
type FailedEmailStatus = (typeof FAILED_EMAIL_STATUSES)[number];

export type UnsubscribedReason = 'UNSUBSCRIBED' | 'CONTACT_DELETED';

/** CampaignEmail.reason: why a recipient was not sent to. */
export type CampaignRecipientReason = SuppressionReason | UnsubscribedReason | FailedEmailStatus;

export const CAMPAIGN_RECIPIENT_REASONS = [
  'HARD_BOUNCE',
  'COMPLAINT',
  'MANUAL',
  'UNSUBSCRIBED',
  'CONTACT_DELETED',
  ...FAILED_EMAIL_STATUSES,
] as const satisfies readonly CampaignRecipientReason[];

/** The recipient statuses that mean "not sent to": few rows, counted through the (campaignId, status) index. */
export const SKIPPED_RECIPIENT_STATUSES = ['SUPPRESSED', 'UNSUBSCRIBED', 'FAILED'] as const satisfies readonly CampaignEmailStatus[];
export type SkippedRecipientStatus = (typeof SKIPPED_RECIPIENT_STATUSES)[number];

/** A recipient's outcome as the recipients listing answers it. */
export const CAMPAIGN_RECIPIENT_OUTCOMES = [
  'pending',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'suppressed',
  'unsubscribed',
  'failed',
] as const;
export type CampaignRecipientOutcome = (typeof CAMPAIGN_RECIPIENT_OUTCOMES)[number];

/** What a SENT recipient's email status says of it; any other status (SENT, a delay) is `sent`. */
const SENT_REFINED: Partial<Record<EmailStatus, CampaignRecipientOutcome>> = {
  DELIVERED: 'delivered',
  OPENED: 'delivered',
  CLICKED: 'delivered',
  BOUNCED: 'bounced',
  COMPLAINED: 'complained',
  // SES accepted the call, then refused the message (e.g. a virus) or could not render it.
  REJECTED: 'failed',
  RENDERING_FAILURE: 'failed',
};

/** The email statuses of a SENT recipient that `outcome` names (for the listing's filter). */
export function emailStatusesOfSentOutcome(outcome: CampaignRecipientOutcome): EmailStatus[] {
  return (Object.keys(SENT_REFINED) as EmailStatus[]).filter((s) => SENT_REFINED[s] === outcome);
}

/** The recipient row's status, refined by its email's status once SES accepted it. */
export function campaignRecipientOutcome(status: CampaignEmailStatus, emailStatus: EmailStatus | null): CampaignRecipientOutcome {
  switch (status) {
    case 'PENDING':
    case 'QUEUED':
      return 'pending';
    case 'SUPPRESSED':
      return 'suppressed';
    case 'UNSUBSCRIBED':
      return 'unsubscribed';
    case 'FAILED':
      return 'failed';
    case 'SENT':
      return (emailStatus && SENT_REFINED[emailStatus]) || 'sent';
  }
}

/** Skipped recipients by reason; UNKNOWN for rows recorded before reasons were (a null reason). */
export type SkippedByReason = Record<CampaignRecipientReason | 'UNKNOWN', number>;

/** A campaign's recipients by outcome: the five counts add up to `total`. */
export interface CampaignRecipientCounts {
  sent: number;
  suppressed: number;
  unsubscribed: number;
  failed: number;
  /** Not settled yet: PENDING (no email yet) or QUEUED (its email not yet accepted or refused). */
  inProgress: number;
  skippedByReason: SkippedByReason;
}

interface CampaignForCounts {
  id: string;
  total: number;
  /** Counted by the engine with every recipient that becomes SENT (scan-campaigns.ts recordOutcomes). */
  sent: number;
  recipientsReadyAt: Date | null;
}

/**
 * The recipients of a campaign by outcome, or null before its audience is fixed (`total` is not
 * known then). Only the skipped statuses are counted, through the (campaignId, status) index: they
 * are few, while a campaign may have millions of SENT rows; `sent` is the campaign's own counter,
 * and what is left of `total` is in progress.
 */
export async function campaignRecipientCounts(sql: SqlExecutor, c: CampaignForCounts): Promise<CampaignRecipientCounts | null> {
  if (!c.recipientsReadyAt) return null;
  const rows = await sql.query<{ status: SkippedRecipientStatus; reason: string | null; n: number }>(
    `SELECT status, reason, count(*)::int AS n FROM "CampaignEmail"
      WHERE "campaignId" = $1 AND status = ANY($2::"CampaignEmailStatus"[])
      GROUP BY status, reason`,
    [c.id, SKIPPED_RECIPIENT_STATUSES],
  );
  const skippedByReason = Object.fromEntries([...CAMPAIGN_RECIPIENT_REASONS, 'UNKNOWN'].map((r) => [r, 0])) as SkippedByReason;
  const byStatus: Record<SkippedRecipientStatus, number> = { SUPPRESSED: 0, UNSUBSCRIBED: 0, FAILED: 0 };
  for (const r of rows) {
    byStatus[r.status] += r.n;
    const reason = r.reason !== null && r.reason in skippedByReason ? (r.reason as keyof SkippedByReason) : 'UNKNOWN';
    skippedByReason[reason] += r.n;
  }
  const skipped = byStatus.SUPPRESSED + byStatus.UNSUBSCRIBED + byStatus.FAILED;
  return {
    sent: c.sent,
    suppressed: byStatus.SUPPRESSED,
    unsubscribed: byStatus.UNSUBSCRIBED,
    failed: byStatus.FAILED,
    inProgress: Math.max(0, c.total - c.sent - skipped),
    skippedByReason,
  };
}
