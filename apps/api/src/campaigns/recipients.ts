import {
  campaignRecipientOutcome,
  emailStatusesOfSentOutcome,
  type CampaignRecipientOutcome,
} from '@mailrail/domain/campaigns/recipient-outcomes';
import { emailIdCreatedWithinSql } from '@mailrail/domain/sql/email-id-range';
import type { CampaignEmailStatus, EmailStatus } from '@mailrail/platform/db/generated/enums';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import type { ListCampaignRecipientsQuery } from './schemas';
import { findCampaign } from './service';

// The recipients of a campaign, one row per contact of its audience, with each one's outcome
// (packages/domain/src/campaigns/recipient-outcomes.ts): keyset pages in contactId order over the
// primary key (campaignId, contactId); a SENT recipient's outcome is refined by its email's status.

export interface CampaignRecipientRow {
  contactId: string;
  email: string;
  outcome: CampaignRecipientOutcome;
  reason: string | null;
  emailId: string | null;
}

/** The SENT recipients' email statuses that some outcome other than `sent` names. */
const REFINED_SENT = (['delivered', 'bounced', 'complained', 'failed'] as const).flatMap(emailStatusesOfSentOutcome);

/** The SQL condition for one outcome; `param` adds a parameter and answers its placeholder. */
function outcomeSql(outcome: CampaignRecipientOutcome, param: (value: unknown) => string): string {
  switch (outcome) {
    case 'pending':
      return `ce.status IN ('PENDING', 'QUEUED')`;
    case 'suppressed':
      return `ce.status = 'SUPPRESSED'`;
    case 'unsubscribed':
      return `ce.status = 'UNSUBSCRIBED'`;
    case 'failed':
      // Refused before SES, or accepted by SES and then rejected (or not rendered).
      return `(ce.status = 'FAILED' OR (ce.status = 'SENT' AND e."latestStatus" = ANY(${param(emailStatusesOfSentOutcome('failed'))}::"EmailStatus"[])))`;
    case 'sent':
      return `ce.status = 'SENT' AND (e."latestStatus" IS NULL OR e."latestStatus" <> ALL(${param(REFINED_SENT)}::"EmailStatus"[]))`;
    default:
      return `ce.status = 'SENT' AND e."latestStatus" = ANY(${param(emailStatusesOfSentOutcome(outcome))}::"EmailStatus"[])`;
  }
}

/** One page of a campaign's recipients (visible to the key as the campaign is), and where the next starts. */
export async function listCampaignRecipients(deps: ApiDeps, auth: AuthContext, campaignId: string, query: ListCampaignRecipientsQuery) {
  const c = await findCampaign(deps, auth, campaignId);
  const params: unknown[] = [c.id, query.after ?? '', query.limit + 1];
  const param = (value: unknown) => `$${params.push(value)}`;
  const filter = query.outcome ? ` AND ${outcomeSql(query.outcome, param)}` : '';
  // A campaign's emails were all created after it: the id range keeps the join to the partitions since.
  const emailsSince = emailIdCreatedWithinSql('e.id', { from: c.createdAt }, (v) => param(v));
  const rows = await prismaExecutor(deps.db).query<{
    contactId: string;
    email: string;
    status: CampaignEmailStatus;
    reason: string | null;
    emailId: string | null;
    emailStatus: EmailStatus | null;
  }>(
    `SELECT ce."contactId", ce.email, ce.status, ce.reason, ce."emailId", e."latestStatus" AS "emailStatus"
       FROM "CampaignEmail" ce
       LEFT JOIN "Email" e ON e.id = ce."emailId" AND ${emailsSince}
      WHERE ce."campaignId" = $1 AND ce."contactId" > $2${filter}
      ORDER BY ce."contactId"
      LIMIT $3`,
    params,
  );
  const page = rows.slice(0, query.limit);
  const recipients: CampaignRecipientRow[] = page.map((r) => {
    const outcome = campaignRecipientOutcome(r.status, r.emailStatus);
    // A recipient SES accepted and then refused: its reason is its email's status.
    const reason = r.reason ?? (r.status === 'SENT' && outcome === 'failed' ? r.emailStatus : null);
    return { contactId: r.contactId, email: r.email, outcome, reason, emailId: r.emailId };
  });
  return { recipients, nextAfter: rows.length > query.limit ? page[page.length - 1].contactId : null };
}
