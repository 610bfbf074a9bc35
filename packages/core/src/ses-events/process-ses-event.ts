import type { JobsOptions } from 'bullmq';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { Db } from '../db/client';
import { Prisma } from '../db/generated/client';
import type { EmailStatus } from '../db/generated/enums';
import { newId } from '../ids';
import { countEmailStatus, isCountedStatus, type CountableEmail, type SqlClient } from './count-email-status';
import { parseSesEvent, type SesEvent } from './ses-event';
import { statusesReplaceableBy } from './status-rank';

/** Payload of a `queueNames.sesEvents` job; the job id is the SNS MessageId. */
export interface SesEventJob {
  snsMessageId: string;
  topicArn: string;
  /** The SNS `Message`: the SES event as JSON text, already checked by the API. */
  message: string;
}

// Retries exist for one race: an SES event can overtake the worker storing the SES message id.
// SES events sent with our X-Usesend-Email-ID header still match; others wait and try again.
export const sesEventJobOptions: JobsOptions = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 2000 },
};

export type SesEventOutcome = 'processed' | 'duplicate' | 'unmatched' | 'ignored';

/** Thrown (and the transaction rolled back) when no email matches yet and retries remain. */
export class SesEventEmailNotFound extends Error {
  constructor(sesMessageId: string) {
    super(`no email matches SES message ${sesMessageId} yet`);
  }
}

interface MatchedEmail extends CountableEmail {
  contactId: string | null;
  latestStatus: EmailStatus;
}

export interface EmailEventRecorded {
  email: MatchedEmail;
  /** The status recorded on the event (for Subscription: the email's unchanged status). */
  status: EmailStatus;
  sesEventType: string;
  detail: Record<string, unknown>;
  occurredAt: Date;
}

export interface ProcessSesEventDeps {
  db: Db;
  log?: Logger;
  clock?: Clock;
  /** Runs inside the event's transaction: the place for the outbound webhook outbox row. */
  onEmailEvent?: (tx: Prisma.TransactionClient, recorded: EmailEventRecorded) => Promise<void>;
}

const EMAIL_COLUMNS = Prisma.sql`id, "teamId", "domainId", "campaignId", "contactId", "latestStatus", "sesEmailId"`;

/**
 * Records the SNS message id and looks the email up by its SES id, in one round trip.
 * `fresh` is false when the message was processed before.
 */
async function claimNotificationAndFindEmail(tx: SqlClient, snsMessageId: string, event: SesEvent): Promise<{ fresh: boolean; email: MatchedEmail | null }> {
  const [row] = await tx.$queryRaw<({ fresh: number } & Partial<MatchedEmail> & { id: string | null })[]>(Prisma.sql`
    WITH claimed AS (
      INSERT INTO "SesNotification" ("messageId", "receivedAt") VALUES (${snsMessageId}, now()) ON CONFLICT DO NOTHING RETURNING 1
    )
    SELECT (SELECT count(*) FROM claimed)::int AS fresh, e.*
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT ${EMAIL_COLUMNS} FROM "Email" WHERE "sesEmailId" = ${event.sesMessageId} ORDER BY "createdAt" DESC LIMIT 1
    ) AS e ON true`);
  if (!row.fresh) return { fresh: false, email: null };
  if (row.id) {
    const { fresh: _fresh, ...email } = row;
    return { fresh: true, email: email as MatchedEmail };
  }
  return { fresh: true, email: await findEmailByHeader(tx, event) };
}

async function findEmailByHeader(tx: SqlClient, event: SesEvent): Promise<MatchedEmail | null> {
  if (!event.headerEmailId) return null;
  // Our own header, put on every message we send. An email that already carries a different SES
  // id is not this message (a sender cannot claim another email by copying the header).
  const byHeader = await tx.$queryRaw<(MatchedEmail & { sesEmailId: string | null })[]>(Prisma.sql`
    SELECT ${EMAIL_COLUMNS} FROM "Email" WHERE id = ${event.headerEmailId} FOR UPDATE`);
  const email = byHeader[0];
  if (!email || (email.sesEmailId !== null && email.sesEmailId !== event.sesMessageId)) return null;
  if (email.sesEmailId === null) {
    await tx.$executeRaw(Prisma.sql`UPDATE "Email" SET "sesEmailId" = ${event.sesMessageId}, "updatedAt" = now() WHERE id = ${email.id}`);
  }
  return email;
}

/**
 * Moves latestStatus forward only (a conditional UPDATE, no read-modify-write) and inserts the
 * event row, in one statement. Without a status (Subscription) only the event row is written.
 */
async function recordEvent(tx: SqlClient, email: MatchedEmail, event: SesEvent, occurredAt: Date): Promise<void> {
  // Subscription has no status of its own: it is kept with the current status and its type.
  const data = event.status ? event.detail : { ...event.detail, eventType: event.type };
  const advance = event.status
    ? Prisma.sql`UPDATE "Email" SET "latestStatus" = ${event.status}::"EmailStatus", "updatedAt" = now()
                 WHERE id = ${email.id} AND "latestStatus" = ANY(${statusesReplaceableBy(event.status)}::"EmailStatus"[])`
    : Prisma.sql`SELECT 1`;
  await tx.$executeRaw(Prisma.sql`
    WITH advanced AS (${advance})
    INSERT INTO "EmailEvent" ("emailId", status, data, "createdAt")
    VALUES (${email.id}, ${event.status ?? email.latestStatus}::"EmailStatus", ${JSON.stringify(data)}::jsonb, ${occurredAt.toISOString()}::timestamp(3))`);
}

/** Hard bounces and complaints: suppress the recipients and unsubscribe them from every book of the team. */
async function suppressRecipients(tx: SqlClient, email: MatchedEmail, suppress: NonNullable<SesEvent['suppress']>): Promise<void> {
  const emails = [...suppress.emails].sort(); // a fixed lock order between concurrent events
  const ids = emails.map(() => newId());
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO "Suppression" (id, "teamId", email, reason, source, "createdAt", "updatedAt")
    SELECT x.id, ${email.teamId}, x.email, ${suppress.reason}::"SuppressionReason", ${email.id}, now(), now()
    FROM unnest(${ids}::text[], ${emails}::text[]) AS x(id, email)
    ON CONFLICT ("teamId", email) DO UPDATE SET reason = EXCLUDED.reason, source = EXCLUDED.source, "updatedAt" = now()`);

  // Inline rather than audience's unsubscribeEverywhere: it must commit in this event's transaction
  // and covers every recipient in one statement.
  const reason = suppress.reason === 'HARD_BOUNCE' ? 'BOUNCED' : 'COMPLAINED';
  const unsubscribed = await tx.$queryRaw<{ id: string }[]>(Prisma.sql`
    UPDATE "Contact" c SET subscribed = false, "unsubscribeReason" = ${reason}::"UnsubscribeReason", "updatedAt" = now()
    FROM "ContactBook" b
    WHERE b.id = c."contactBookId" AND b."teamId" = ${email.teamId} AND c.email = ANY(${emails}::text[])
      AND (c.subscribed OR c."unsubscribeReason" IS NULL)
    RETURNING c.id`);
  if (email.campaignId && email.contactId && unsubscribed.some((c) => c.id === email.contactId)) {
    await tx.$executeRaw(Prisma.sql`UPDATE "Campaign" SET unsubscribed = unsubscribed + 1, "updatedAt" = now() WHERE id = ${email.campaignId}`);
  }
}

/**
 * Applies one SES event, exactly once per SNS MessageId: the dedupe row, the status, the event
 * row, suppression and the counters commit together. `lastAttempt` decides what an event for an
 * unknown email does: throw (so the job is retried) or be recorded as unmatched.
 */
export async function processSesEventJob(
  deps: ProcessSesEventDeps,
  job: SesEventJob,
  opts: { lastAttempt?: boolean } = {},
): Promise<SesEventOutcome> {
  const lastAttempt = opts.lastAttempt ?? true;
  const parsed = parseSesEvent(job.message);
  if (!parsed.ok) {
    deps.log?.warn({ snsMessageId: job.snsMessageId, reason: parsed.reason, type: parsed.type }, 'SES event ignored');
    return 'ignored';
  }
  const event = parsed.event;
  const now = deps.clock?.now() ?? new Date();
  const occurredAt = event.occurredAt ?? now;

  const outcome = await deps.db.$transaction(async (tx): Promise<SesEventOutcome> => {
    const { fresh, email } = await claimNotificationAndFindEmail(tx, job.snsMessageId, event);
    if (!fresh) return 'duplicate';
    if (!email) {
      if (!lastAttempt) throw new SesEventEmailNotFound(event.sesMessageId);
      return 'unmatched';
    }
    await recordEvent(tx, email, event, occurredAt);
    if (event.suppress) await suppressRecipients(tx, email, event.suppress);
    if (deps.onEmailEvent) {
      await deps.onEmailEvent(tx, { email, status: event.status ?? email.latestStatus, sesEventType: event.type, detail: event.detail, occurredAt });
    }
    // Last: the daily counter row is shared by the whole team, so hold its lock the shortest time.
    if (event.status && isCountedStatus(event.status)) {
      await countEmailStatus(tx, email, event.status, { hardBounce: event.hardBounce, at: occurredAt });
    }
    return 'processed';
  });

  if (outcome === 'unmatched') deps.log?.warn({ snsMessageId: job.snsMessageId, sesMessageId: event.sesMessageId }, 'SES event for an unknown email');
  return outcome;
}
