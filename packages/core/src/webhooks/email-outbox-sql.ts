// SQL pieces that write the `email.<status>` webhook event inside the very statement that changes
// an email's status (insert, cancel, send failure), so the outbox can neither miss nor invent one.
// Teams without an active webhook get no row. The data matches emailWebhookData's shape.

/** What the status-changing CTE must return for emailOutboxInsertSql. */
export const EMAIL_OUTBOX_RETURNING = `id, "teamId", "domainId", "from", "to", subject, "campaignId", "contactId", "templateId", "latestStatus"`;

export function emailOutboxInsertSql(cte: string): string {
  return `INSERT INTO "WebhookEvent" (id, "teamId", type, "domainId", data, "createdAt")
  SELECT substr(md5(random()::text || c.id || clock_timestamp()::text), 1, 24), c."teamId",
         'email.' || lower(c."latestStatus"::text), c."domainId",
         jsonb_build_object(
           'id', c.id, 'status', c."latestStatus", 'from', c."from", 'to', to_jsonb(c."to"),
           'occurredAt', to_char(timezone('UTC', now()), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'campaignId', c."campaignId", 'contactId', c."contactId", 'domainId', c."domainId", 'subject', c.subject
         ) || CASE WHEN c."templateId" IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('templateId', c."templateId") END,
         timezone('UTC', now())
    FROM ${cte} c
   WHERE c."latestStatus" <> 'SCHEDULED'
     AND EXISTS (SELECT 1 FROM "Webhook" w WHERE w."teamId" = c."teamId" AND w.status = 'ACTIVE')`;
}
