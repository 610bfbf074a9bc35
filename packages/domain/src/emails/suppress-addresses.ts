import type { SuppressionReason } from '@mailrail/platform/db/generated/enums';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { newIds } from '../audience/contact-id';
import { EMAIL_OUTBOX_RETURNING, emailOutboxInsertSql } from '../sql/email-outbox';
import { ALL_TO_SUPPRESSED } from './suppression';

// The one way an address goes on a team's suppression list (the API, hard bounces and
// complaints), and what that means for mail already written to it. An email is checked against
// the list when it is written (intake, and each campaign chunk); a campaign writes its emails well
// before SES paces them out, so a suppression that arrives in between must reach those emails
// too: the same statement withdraws them (SUPPRESSED, with the reason), and the campaign then
// counts the recipient as suppressed (recordOutcomes). An email whose SES call may have started
// (a live lease, or a call with no recorded outcome) is left to the send path: it may be at SES.

export interface SuppressionRow {
  id: string;
  email: string;
  reason: SuppressionReason;
  source: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface SuppressAddresses {
  teamId: number;
  /** Bare, lower-cased addresses (normaliseAddress), as the list stores them. */
  emails: readonly string[];
  /** null: a new entry is MANUAL and an existing one keeps its reason. */
  reason: SuppressionReason | null;
  /** What caused it (the email id of a bounce); null keeps an existing entry's source. */
  source: string | null;
  now: Date;
}

const SUPPRESS_SQL = `
  WITH listed AS (
    INSERT INTO "Suppression" AS s (id, "teamId", email, reason, source, "createdAt", "updatedAt")
    SELECT x.id, $1::int, x.email, coalesce($2::"SuppressionReason", 'MANUAL'), $3::text, $6::timestamptz, $6::timestamptz
    FROM unnest($4::text[], $5::text[]) AS x(id, email)
    ON CONFLICT ("teamId", email) DO UPDATE SET
      reason = coalesce($2::"SuppressionReason", s.reason),
      source = coalesce($3::text, s.source),
      "updatedAt" = CASE WHEN $2::"SuppressionReason" IS NULL AND $3::text IS NULL THEN s."updatedAt" ELSE $6::timestamptz END
    RETURNING s.id, s.email, s.reason, s.source, s."createdAt", s."updatedAt"
  ), withdrawn AS (
    -- The claim's own test (send-email.ts), negated under the same row lock: a worker that
    -- claims first keeps the email, one that comes after finds it SUPPRESSED and skips it.
    UPDATE "Email" e SET "latestStatus" = 'SUPPRESSED', "updatedAt" = $6::timestamptz,
           "skippedRecipients" = jsonb_build_array(jsonb_build_object('email', e."to"[1], 'type', 'to', 'status', 'SUPPRESSED',
             'reason', (SELECT l.reason FROM listed l WHERE l.email = ANY (e."toAddresses") LIMIT 1)))
     WHERE e."teamId" = $1 AND e."toAddresses" && $5::text[] AND e."campaignId" IS NOT NULL
       AND e."latestStatus" IN ('QUEUED', 'SCHEDULED') AND e."sesEmailId" IS NULL AND e."sesCallStartedAt" IS NULL
       AND (e."sendLeaseUntil" IS NULL OR e."sendLeaseUntil" < now())
    RETURNING ${EMAIL_OUTBOX_RETURNING}
  ), events AS (
    INSERT INTO "EmailEvent" ("emailId", status, data, "createdAt")
    SELECT w.id, 'SUPPRESSED', jsonb_build_object('error', $7::text, 'skippedRecipients', w."skippedRecipients"), $6::timestamptz
      FROM withdrawn w
  ), outbox AS (
    ${emailOutboxInsertSql('withdrawn')}
  )
  SELECT * FROM listed ORDER BY email`;

/**
 * Puts the addresses on the team's suppression list (or updates their entries) and withdraws the
 * team's campaign emails to them that no worker has started sending, in one statement.
 */
export async function suppressAddresses(sql: SqlExecutor, s: SuppressAddresses): Promise<SuppressionRow[]> {
  // Sorted: concurrent writers lock the same entries in the same order.
  const emails = [...new Set(s.emails)].sort();
  if (emails.length === 0) return [];
  return sql.query<SuppressionRow>(SUPPRESS_SQL, [s.teamId, s.reason, s.source, newIds(emails.length), emails, s.now, ALL_TO_SUPPRESSED]);
}
