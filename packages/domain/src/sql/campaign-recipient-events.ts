import { isoUtcSql } from '@mailrail/platform/db/sql/time';

// The `campaign.recipient_skipped` webhook event, written inside the very statement that records
// a campaign recipient as not sent to (audience preparation: suppressed; a campaign window:
// suppressed since, unsubscribed, deleted), so the outbox can neither miss nor invent one. One
// event per contact, like the email events a sent contact produces (docs/webhooks.md); teams
// without an active webhook get no row, as for email events.

/**
 * An INSERT writing one outbox row per row of `source`, a data-modifying CTE returning the
 * CampaignEmail columns "campaignId", "contactId", email, status, reason and "updatedAt" (the
 * skip's time). The other arguments are SQL (placeholders) for the campaign's team and domain.
 */
export function campaignRecipientSkippedEventsSql(opts: { source: string; teamIdSql: string; domainIdSql: string }): string {
  return `INSERT INTO "WebhookEvent" (id, "teamId", type, "domainId", data, "createdAt")
    SELECT substr(md5(random()::text || s."contactId" || clock_timestamp()::text), 1, 24), ${opts.teamIdSql}, 'campaign.recipient_skipped',
           ${opts.domainIdSql},
           jsonb_build_object('campaignId', s."campaignId", 'contactId', s."contactId", 'email', s.email,
                              'outcome', lower(s.status::text), 'reason', s.reason, 'occurredAt', ${isoUtcSql('s."updatedAt"')}),
           now()
      FROM ${opts.source} s
     WHERE s.status IN ('SUPPRESSED', 'UNSUBSCRIBED')
       AND EXISTS (SELECT 1 FROM "Webhook" w WHERE w."teamId" = ${opts.teamIdSql} AND w.status = 'ACTIVE')`;
}
