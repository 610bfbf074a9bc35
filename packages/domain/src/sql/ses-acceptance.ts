import type { NamedStatement, SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { statusesBelow } from '../emails/status';
import type { SesEvent } from '../ses-events/ses-event';

// SES accepted a message for an email. Two writers learn it, in either order or at the same
// moment: the worker from SES's answer, and SES's own Send event (it carries our
// X-Usesend-Email-ID header) when the worker died before recording the answer, or was slower.
// Both run this one statement. PostgreSQL re-checks `"sesEmailId" IS NULL` on the row after
// waiting for the other writer's lock, so the second writer changes nothing: one acceptance, one
// SENT event. (A NOT EXISTS on the event table would not do: its snapshot predates that wait.)

/**
 * Stores the SES message id, moves the status forward to SENT, ends the claim (lease and SES call
 * marker) and drops the bulky payload (attachments, custom headers, the client's raw message),
 * with the SENT event, unless the email already has an SES message id. True when this call recorded it.
 */
export async function recordSesAcceptance(sql: SqlExecutor, emailId: string, messageId: string): Promise<boolean> {
  // The group statement with one row: which columns an acceptance sets and clears is written once.
  return (await recordSesAcceptances(sql, [{ emailId, messageId }])).size > 0;
}

/** Named: the send workers run it for every group (docs/worker.md, "CPU per email"). */
const RECORD_SES_ACCEPTANCES: NamedStatement = {
  name: 'mailrail_record_ses_acceptances',
  text: `WITH accepted AS (
       SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS a(id, "messageId", ord)
     ), sent AS (
       UPDATE "Email" e
          SET "sesEmailId" = a."messageId",
              "sentAt" = now(),
              "latestStatus" = CASE WHEN e."latestStatus" = ANY($3::"EmailStatus"[])
                                    THEN 'SENT'::"EmailStatus" ELSE e."latestStatus" END,
              "attachments" = NULL,
              "headers" = NULL,
              "rawMessage" = NULL,
              "sendLeaseUntil" = NULL,
              "sesCallStartedAt" = NULL,
              "updatedAt" = now()
         FROM (SELECT id, "messageId" FROM accepted ORDER BY ord) a
        WHERE e.id = a.id AND e.id = ANY($1::text[]) AND e."sesEmailId" IS NULL -- ANY: the plan reads the partitions of these ids only
       RETURNING e.id, a."messageId"
     )
     INSERT INTO "EmailEvent" ("emailId", status, data)
     SELECT id, 'SENT', jsonb_build_object('messageId', "messageId") FROM sent
     RETURNING "emailId"`,
};

/**
 * recordSesAcceptance for many emails in one statement (the worker's group committer, and the
 * single-email writers with one row): the guard per row (`"sesEmailId" IS NULL`, re-checked after
 * a lock wait), one SENT event per row it changed. Answers the ids it recorded. Ids must be distinct.
 */
export async function recordSesAcceptances(
  sql: SqlExecutor,
  accepted: readonly { emailId: string; messageId: string }[],
): Promise<Set<string>> {
  if (accepted.length === 0) return new Set();
  // Sorted ids: two batches that overlap lock their rows in the same order (no deadlock between
  // them); a single-row writer (the Send event) cannot form a cycle with a batch.
  const sorted = [...accepted].sort((a, b) => (a.emailId < b.emailId ? -1 : a.emailId > b.emailId ? 1 : 0));
  const rows = await sql.query<{ emailId: string }>(RECORD_SES_ACCEPTANCES, [
    sorted.map((a) => a.emailId),
    sorted.map((a) => a.messageId),
    statusesBelow('SENT'),
  ]);
  return new Set(rows.map((r) => r.emailId));
}

/**
 * SES's Send event names the email (our header) and the SES message id. Recorded as soon as the
 * notification is received, not when the SES event queue reaches it: during a large campaign that
 * queue can lag minutes behind, longer than an email in doubt waits before it is sent again.
 * False when there is nothing to record (not a Send event, no header, or already recorded).
 */
export async function recordSendEventAcceptance(
  sql: SqlExecutor,
  event: Pick<SesEvent, 'type' | 'headerEmailId' | 'sesMessageId'>,
): Promise<boolean> {
  if (event.type !== 'Send' || !event.headerEmailId) return false;
  return recordSesAcceptance(sql, event.headerEmailId, event.sesMessageId);
}
