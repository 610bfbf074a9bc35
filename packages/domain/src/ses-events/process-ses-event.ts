import type { JobsOptions } from 'bullmq';
import type { Logger } from 'pino';
import type { Clock } from '@mailrail/platform/clock';
import type { Db } from '@mailrail/platform/db/client';
import type { Prisma } from '@mailrail/platform/db/generated/client';
import { prismaExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { EmailStatus } from '@mailrail/platform/db/generated/enums';
import { recordSesAcceptance } from '../sql/ses-acceptance';
import { countEmailStatus, isCountedStatus, type CountableEmail } from './count-email-status';
import { normaliseAddress } from '../emails/address';
import { parseSesEvent, type SesEvent } from './ses-event';
import { statusesReplaceableBy } from './status-rank';
import { unsubscribeEverywhere } from '../audience/unsubscribe';
import { suppressAddresses } from '../emails/suppress-addresses';
import { isActivityStatus, recordEmailActivity } from '../audience/segments/email-activity';
import { emailEventsCte } from '../events/email-events';

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

const EMAIL_COLUMNS = `id, "teamId", "domainId", "campaignId", "contactId", "latestStatus", "sesEmailId"`;

/**
 * Records the SNS message id and looks the email up by its SES id, in one round trip.
 * `fresh` is false when the message was processed before.
 */
// The email's row is locked first (FOR NO KEY UPDATE, the lock countEmailStatus takes again at the
// end), before any row other emails share (EmailActivity per address, suppressions): an event
// whose status advance was a no-op used to take it only at the end, while an event of the same
// email that advanced it waited for the shared row that the first held: a deadlock
// (counter-deltas.test.ts, many events of one address). NO KEY, so another event's EmailEvent
// insert (a KEY SHARE on the row) does not wait for it.
async function claimNotificationAndFindEmail(
  tx: SqlExecutor,
  snsMessageId: string,
  event: SesEvent,
): Promise<{ fresh: boolean; email: MatchedEmail | null }> {
  const [row] = await tx.query<{ fresh: number } & Partial<MatchedEmail> & { id: string | null }>(
    `WITH claimed AS (
       INSERT INTO "SesNotification" ("messageId", "receivedAt") VALUES ($1, now()) ON CONFLICT DO NOTHING RETURNING 1
     )
     SELECT (SELECT count(*) FROM claimed)::int AS fresh, e.*
     FROM (SELECT 1) AS one
     LEFT JOIN LATERAL (
       SELECT ${EMAIL_COLUMNS} FROM "Email" WHERE "sesEmailId" = $2 AND ($3::text IS NULL OR id = $3) ORDER BY "createdAt" DESC LIMIT 1
       FOR NO KEY UPDATE
     ) AS e ON true`,
    // With our header's email id the lookup reads one partition of the email log, not every one.
    [snsMessageId, event.sesMessageId, event.headerEmailId],
  );
  if (!row.fresh) return { fresh: false, email: null };
  if (row.id) {
    const { fresh: _fresh, ...email } = row;
    return { fresh: true, email: email as MatchedEmail };
  }
  const byHeader = await findEmailByHeader(tx, event);
  // A header naming another email than SES's id: the SES id alone decides, as before partitioning.
  return { fresh: true, email: byHeader ?? (event.headerEmailId ? await findEmailBySesId(tx, event.sesMessageId) : null) };
}

async function findEmailBySesId(tx: SqlExecutor, sesMessageId: string): Promise<MatchedEmail | null> {
  const [email] = await tx.query<MatchedEmail>(
    `SELECT ${EMAIL_COLUMNS} FROM "Email" WHERE "sesEmailId" = $1 ORDER BY "createdAt" DESC LIMIT 1 FOR NO KEY UPDATE`,
    [sesMessageId],
  );
  return email ?? null;
}

async function findEmailByHeader(tx: SqlExecutor, event: SesEvent): Promise<MatchedEmail | null> {
  if (!event.headerEmailId) return null;
  // Our own header, put on every message we send. An email that already carries a different SES
  // id is not this message (a sender cannot claim another email by copying the header).
  const byHeader = await tx.query<MatchedEmail & { sesEmailId: string | null }>(
    `SELECT ${EMAIL_COLUMNS} FROM "Email" WHERE id = $1 FOR UPDATE`,
    [event.headerEmailId],
  );
  const email = byHeader[0];
  if (!email || (email.sesEmailId !== null && email.sesEmailId !== event.sesMessageId)) return null;
  if (email.sesEmailId === null) {
    // Any SES event for the message proves SES accepted it, and the worker has not recorded that
    // (it is slower, or died mid-send: the email is in doubt). Recording it here, as the worker
    // would, ends the claim, so the email is never sent again.
    await recordSesAcceptance(tx, email.id, event.sesMessageId);
  }
  return email;
}

/**
 * Moves latestStatus forward only (a conditional UPDATE, no read-modify-write) and inserts the
 * event row, in one statement. Without a status (Subscription) only the event row is written.
 */
async function recordEvent(
  tx: SqlExecutor,
  email: MatchedEmail,
  event: SesEvent,
  at: { occurredAt: Date; now: Date; snsMessageId: string },
): Promise<void> {
  const { occurredAt } = at;
  // Subscription has no status of its own: it is kept with the current status and its type.
  const data = event.status ? event.detail : { ...event.detail, eventType: event.type };
  const params: unknown[] = [email.id, event.status ?? email.latestStatus, JSON.stringify(data), occurredAt];
  const advance = event.status
    ? `UPDATE "Email" SET "latestStatus" = $2::"EmailStatus", "updatedAt" = now()
        WHERE id = $1 AND "latestStatus" = ANY($${params.push(statusesReplaceableBy(event.status))}::"EmailStatus"[])`
    : `SELECT 1`;
  if (event.status === 'SENT') {
    // The email's SENT event was written when the acceptance was recorded (by the worker, or just
    // above from this event's header): SES's own Send event adds its details to that one instead
    // of showing the email as sent twice.
    await tx.execute(
      `WITH advanced AS (${advance}),
       merged AS (
         UPDATE "EmailEvent" SET data = COALESCE(data, '{}'::jsonb) || $3::jsonb
         WHERE "emailId" = $1 AND id = (SELECT id FROM "EmailEvent" WHERE "emailId" = $1 AND status = 'SENT' ORDER BY id LIMIT 1)
         RETURNING 1
       )
       INSERT INTO "EmailEvent" ("emailId", status, data, "createdAt")
       SELECT $1, $2::"EmailStatus", $3::jsonb, $4::timestamptz WHERE NOT EXISTS (SELECT 1 FROM merged)`,
      params,
    );
    return;
  }
  // The built-in event (email.delivered, opened...) of each contact it is about, in the same statement.
  const builtin = emailEventsCte(email, { ...event, occurredAt }, at.snsMessageId, at.now, (v) => `$${params.push(v)}`);
  await tx.execute(
    `WITH advanced AS (${advance})${builtin ? `, builtin_events AS (${builtin})` : ''}
     INSERT INTO "EmailEvent" ("emailId", status, data, "createdAt")
     VALUES ($1, $2::"EmailStatus", $3::jsonb, $4::timestamptz)`,
    params,
  );
}

/**
 * The addresses of the event that are recipients of this email (to, cc, bcc; bare address,
 * case-insensitive). An event naming anyone else is not about them: those are left alone.
 */
async function ownRecipients(tx: SqlExecutor, email: MatchedEmail, addresses: string[], log?: Logger): Promise<string[]> {
  const [row] = await tx.query<{ to: string[]; cc: string[]; bcc: string[] }>(`SELECT "to", cc, bcc FROM "Email" WHERE id = $1`, [
    email.id,
  ]);
  const recipients = new Set([...(row?.to ?? []), ...(row?.cc ?? []), ...(row?.bcc ?? [])].map(normaliseAddress));
  const own = addresses.filter((a) => recipients.has(a));
  const foreign = addresses.filter((a) => !recipients.has(a));
  if (foreign.length)
    log?.warn(
      { emailId: email.id, ignored: foreign.slice(0, 20), ignoredCount: foreign.length },
      'SES event names addresses that are not recipients of the email: not suppressed',
    );
  return own;
}

/** Hard bounces and complaints: suppress the recipients and unsubscribe them from every book of the team. */
async function suppressRecipients(
  tx: SqlExecutor,
  email: MatchedEmail,
  suppress: NonNullable<SesEvent['suppress']>,
  now: Date,
  log?: Logger,
): Promise<void> {
  const emails = (await ownRecipients(tx, email, suppress.emails, log)).sort(); // sorted: a fixed lock order between concurrent events
  if (!emails.length) return;
  await suppressAddresses(tx, { teamId: email.teamId, emails, reason: suppress.reason, source: email.id, now });
  await unsubscribeEverywhere(tx, email.teamId, emails, suppress.reason === 'HARD_BOUNCE' ? 'BOUNCED' : 'COMPLAINED', {
    campaignId: email.campaignId,
    contactId: email.contactId,
    now,
  });
}

// The ses-events queue runs more jobs at once (20, register.ts) than the worker's Prisma pool has
// connections (10): in a burst a job waits for one. Prisma's default wait (2 s) turned such a
// wait on a busy machine into a failed attempt; the job's own lock bounds the wait instead.
const TRANSACTION_OPTIONS = { maxWait: 15_000 };

/**
 * Applies one SES event, exactly once per SNS MessageId: the dedupe row, the status, the event
 * row, the built-in events (email.delivered...), suppression and the counters commit together. `lastAttempt` decides what an event for an
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

  const outcome = await deps.db.$transaction(async (prismaTx): Promise<SesEventOutcome> => {
    const tx = prismaExecutor(prismaTx);
    const { fresh, email } = await claimNotificationAndFindEmail(tx, job.snsMessageId, event);
    if (!fresh) return 'duplicate';
    if (!email) {
      if (!lastAttempt) throw new SesEventEmailNotFound(event.sesMessageId);
      return 'unmatched';
    }
    await recordEvent(tx, email, event, { occurredAt, now, snsMessageId: job.snsMessageId });
    // What the engagement segment conditions read (delivered, opened, clicked), committed with the event.
    if (isActivityStatus(event.status)) await recordEmailActivity(tx, email, event.status, occurredAt, event.detail);
    if (event.suppress) await suppressRecipients(tx, email, event.suppress, now, deps.log);
    if (deps.onEmailEvent) {
      await deps.onEmailEvent(prismaTx, {
        email,
        status: event.status ?? email.latestStatus,
        sesEventType: event.type,
        detail: event.detail,
        occurredAt,
      });
    }
    // Last: the daily counter row is shared by the whole team, so hold its lock the shortest time.
    if (event.status && isCountedStatus(event.status)) {
      await countEmailStatus(tx, email, event.status, { hardBounce: event.hardBounce, at: occurredAt });
    }
    return 'processed';
  }, TRANSACTION_OPTIONS);

  if (outcome === 'unmatched')
    deps.log?.warn({ snsMessageId: job.snsMessageId, sesMessageId: event.sesMessageId }, 'SES event for an unknown email');
  return outcome;
}
