import { emailStatusWebhookEvent } from '../webhooks/events';
import type { EmailWebhookFields } from '../webhooks/payloads';
import { isoUtcSql } from '@mailrail/platform/db/sql/time';

// SQL pieces that write the `email.<status>` webhook event inside the very statement that changes
// an email's status (insert, cancel, send failure), so the outbox can neither miss nor invent one.
// Teams without an active webhook get no row.

/** What the status-changing CTE must return for emailOutboxInsertSql. */
export const EMAIL_OUTBOX_RETURNING = `id, "teamId", "domainId", "from", "to", subject, "campaignId", "contactId", "templateId", "latestStatus", "skippedRecipients"`;

// Each field of emailWebhookData as SQL over the CTE row `c`. Keyed by the TypeScript builder's
// own result type, so a field added to one side only does not compile; email-payload-agreement.test.ts
// checks that both produce the same values.
const EMAIL_FIELD_SQL: { [field in keyof EmailWebhookFields]-?: string } = {
  id: 'c.id',
  status: 'c."latestStatus"',
  from: 'c."from"',
  to: 'to_jsonb(c."to")',
  // Date.toISOString's format: milliseconds, Z.
  occurredAt: isoUtcSql('now()'),
  campaignId: 'c."campaignId"',
  contactId: 'c."contactId"',
  domainId: 'c."domainId"',
  subject: 'c.subject',
  templateId: 'c."templateId"',
  skippedRecipients: 'c."skippedRecipients"',
};

// Fields emailWebhookData leaves out, rather than sending null, when the email has none.
const OMITTED_WHEN_NULL = new Set<keyof EmailWebhookFields>(['templateId', 'skippedRecipients']);

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
const fields = Object.entries(EMAIL_FIELD_SQL) as [keyof EmailWebhookFields, string][];

const EMAIL_DATA_SQL = [
  `jsonb_build_object(${fields
    .filter(([f]) => !OMITTED_WHEN_NULL.has(f))
    .map(([f, value]) => `${sqlString(f)}, ${value}`)
    .join(',\n                            ')})`,
  ...fields
    .filter(([f]) => OMITTED_WHEN_NULL.has(f))
    .map(([f, value]) => `CASE WHEN ${value} IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(${sqlString(f)}, ${value}) END`),
].join('\n         || ');

// The event type of each status, from emailStatusWebhookEvent; NULL (no event) for SCHEDULED.
const EVENT_TYPE_SQL = `CASE c."latestStatus"::text ${Object.entries(emailStatusWebhookEvent)
  .filter(([, type]) => type !== null)
  .map(([status, type]) => `WHEN ${sqlString(status)} THEN ${sqlString(type!)}`)
  .join(' ')} END`;

export function emailOutboxInsertSql(cte: string): string {
  return `INSERT INTO "WebhookEvent" (id, "teamId", type, "domainId", data, "createdAt")
  SELECT substr(md5(random()::text || c.id || clock_timestamp()::text), 1, 24), c."teamId", e.type, c."domainId",
         ${EMAIL_DATA_SQL},
         now()
    FROM ${cte} c
   CROSS JOIN LATERAL (SELECT ${EVENT_TYPE_SQL} AS type) e
   WHERE e.type IS NOT NULL
     AND EXISTS (SELECT 1 FROM "Webhook" w WHERE w."teamId" = c."teamId" AND w.status = 'ACTIVE')`;
}
