import { Prisma, statusesBelow, type Db, type EmailStatus, type Logger } from '@mailrail/core';
import { buildRawMessage } from './build-mime';
import { classifySesError, type SesFailure } from './ses-errors';
import type { SesSender } from './ses-sender';

// Sending one email, top to bottom: claim the row, build the MIME, call SES, record the result.
// The claim is the exactly-once guard: one conditional UPDATE that only one worker can win, and
// that never wins for an email that is sent, cancelled, suppressed, failed, or not due yet.

export interface SendSettings {
  leaseSeconds: number;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Region used when the email's domain is gone. */
  defaultRegion: string;
  /** SES configuration sets are `<prefix>-general|click|open|full`; none when undefined. */
  configurationSetPrefix?: string;
}

export interface SendEmailDeps {
  db: Db;
  ses: SesSender;
  log: Logger;
  send: SendSettings;
}

export type SendOutcome =
  | { result: 'sent'; messageId: string }
  | { result: 'failed'; failure: SesFailure }
  /** Nothing to do: already sent, cancelled, suppressed or failed, or the row is gone. */
  | { result: 'skipped'; status: EmailStatus | null }
  /** Someone else holds the lease, or the email is not due yet: look again after `delayMs`. */
  | { result: 'later'; delayMs: number; reason: 'leased' | 'not-due' }
  /** A transient SES error: the lease is released, try again after `delayMs`. */
  | { result: 'retry'; delayMs: number; failure: SesFailure }
  /** SES throttled us: the attempt is given back, the caller slows the whole lane down. */
  | { result: 'throttled'; failure: SesFailure };

interface ClaimedEmail {
  id: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: unknown;
  attachments: unknown;
  unsubUrl: string | null;
  sendAttempts: number;
  region: string | null;
  clickTracking: boolean | null;
  openTracking: boolean | null;
  inReplyToSesId: string | null;
}

// Timestamps are stored as UTC without a zone; compare them with the database's clock in UTC.
const DB_NOW = Prisma.sql`timezone('UTC', now())`;
const UNSENT = Prisma.sql`('QUEUED', 'SCHEDULED')`;

/** Takes the email for `leaseSeconds` if it is due, unsent and not held by another worker. */
export async function claimEmailForSending(db: Db, emailId: string, leaseSeconds: number): Promise<ClaimedEmail | null> {
  const rows = await db.$queryRaw<ClaimedEmail[]>`
    WITH claimed AS (
      UPDATE "Email"
         SET "sendLeaseUntil" = ${DB_NOW} + (${leaseSeconds}::int * interval '1 second'),
             "sendAttempts" = "sendAttempts" + 1,
             "updatedAt" = ${DB_NOW}
       WHERE id = ${emailId}
         AND "latestStatus" IN ${UNSENT}
         AND "sesEmailId" IS NULL
         AND ("sendLeaseUntil" IS NULL OR "sendLeaseUntil" < ${DB_NOW})
         AND ("scheduledAt" IS NULL OR "scheduledAt" <= ${DB_NOW} + interval '1 second')
      RETURNING *
    )
    SELECT c.id, c."from", c."to", c.cc, c.bcc, c."replyTo", c.subject, c.html, c.text, c.headers,
           c.attachments, c."unsubUrl", c."sendAttempts", d.region, d."clickTracking", d."openTracking",
           r."sesEmailId" AS "inReplyToSesId"
      FROM claimed c
      LEFT JOIN "Domain" d ON d.id = c."domainId"
      LEFT JOIN "Email" r ON r.id = c."inReplyToId"`;
  return rows[0] ?? null;
}

export async function sendOneEmail(deps: SendEmailDeps, emailId: string): Promise<SendOutcome> {
  const { db, send } = deps;
  const email = await claimEmailForSending(db, emailId, send.leaseSeconds);
  if (!email) return whyNotClaimed(db, emailId);

  const region = email.region ?? send.defaultRegion;
  let messageId: string;
  try {
    const raw = await buildRawMessage(email);
    ({ messageId } = await deps.ses.sendRawEmail({
      region,
      raw,
      destination: { to: email.to, cc: email.cc, bcc: email.bcc },
      configurationSetName: configurationSetFor(send.configurationSetPrefix, email),
    }));
  } catch (err) {
    const failure = classifySesError(err);
    if (failure.kind === 'permanent') {
      await recordFailed(db, emailId, failure);
      return { result: 'failed', failure };
    }
    if (failure.kind === 'throttled') {
      await releaseLease(db, emailId, { giveBackAttempt: true });
      return { result: 'throttled', failure };
    }
    if (email.sendAttempts >= send.maxAttempts) {
      await recordFailed(db, emailId, failure, email.sendAttempts);
      return { result: 'failed', failure };
    }
    await releaseLease(db, emailId, { giveBackAttempt: false });
    return { result: 'retry', delayMs: retryDelayMs(email.sendAttempts, send), failure };
  }

  // SES has the message: from here on the only risk is losing this fact, so insist a little.
  await retryDatabaseWrite(deps.log, { emailId, messageId }, () => recordSent(db, emailId, messageId));
  return { result: 'sent', messageId };
}

async function whyNotClaimed(db: Db, emailId: string): Promise<SendOutcome> {
  const rows = await db.$queryRaw<
    { latestStatus: EmailStatus; sesEmailId: string | null; leaseMs: number | null; dueInMs: number | null }[]
  >`SELECT "latestStatus", "sesEmailId",
           (EXTRACT(EPOCH FROM ("sendLeaseUntil" - ${DB_NOW})) * 1000)::float8 AS "leaseMs",
           (EXTRACT(EPOCH FROM ("scheduledAt" - ${DB_NOW})) * 1000)::float8 AS "dueInMs"
      FROM "Email" WHERE id = ${emailId}`;
  const row = rows[0];
  if (!row) return { result: 'skipped', status: null };
  if (row.sesEmailId || (row.latestStatus !== 'QUEUED' && row.latestStatus !== 'SCHEDULED')) {
    return { result: 'skipped', status: row.latestStatus };
  }
  // Held by another worker: come back just after its lease, to take over if it died.
  if (row.leaseMs !== null && row.leaseMs > 0) return { result: 'later', delayMs: Math.ceil(row.leaseMs) + 250, reason: 'leased' };
  if (row.dueInMs !== null && row.dueInMs > 1000) return { result: 'later', delayMs: Math.ceil(row.dueInMs), reason: 'not-due' };
  // The row changed between the claim and this read: simply look again.
  return { result: 'later', delayMs: 100, reason: 'leased' };
}

/** SES accepted the message: store its id, move the status forward, drop the bulky payload. */
async function recordSent(db: Db, emailId: string, messageId: string): Promise<void> {
  await db.$executeRaw`
    WITH sent AS (
      UPDATE "Email"
         SET "sesEmailId" = ${messageId},
             "sentAt" = ${DB_NOW},
             "latestStatus" = CASE WHEN "latestStatus" IN (${Prisma.join(statusesBelow('SENT'))})
                                   THEN 'SENT'::"EmailStatus" ELSE "latestStatus" END,
             "attachments" = NULL,
             "headers" = NULL,
             "sendLeaseUntil" = NULL,
             "updatedAt" = ${DB_NOW}
       WHERE id = ${emailId}
      RETURNING id
    )
    INSERT INTO "EmailEvent" ("emailId", status, data)
    SELECT id, 'SENT', ${JSON.stringify({ messageId })}::jsonb FROM sent`;
}

async function recordFailed(db: Db, emailId: string, failure: SesFailure, attempts?: number): Promise<void> {
  const data = { error: failure.name, message: failure.message, ...(attempts ? { attempts } : {}) };
  await db.$executeRaw`
    WITH failed AS (
      UPDATE "Email"
         SET "latestStatus" = CASE WHEN "latestStatus" IN (${Prisma.join(statusesBelow('FAILED'))})
                                   THEN 'FAILED'::"EmailStatus" ELSE "latestStatus" END,
             "sendLeaseUntil" = NULL,
             "updatedAt" = ${DB_NOW}
       WHERE id = ${emailId} AND "sesEmailId" IS NULL
      RETURNING id
    )
    INSERT INTO "EmailEvent" ("emailId", status, data)
    SELECT id, 'FAILED', ${JSON.stringify(data)}::jsonb FROM failed`;
}

/** Lets the email be claimed again (by a retry, the sweeper, or a cancel from the API). */
async function releaseLease(db: Db, emailId: string, opts: { giveBackAttempt: boolean }): Promise<void> {
  await db.$executeRaw`
    UPDATE "Email"
       SET "sendLeaseUntil" = NULL,
           "sendAttempts" = GREATEST(0, "sendAttempts" - ${opts.giveBackAttempt ? 1 : 0}::int),
           "updatedAt" = ${DB_NOW}
     WHERE id = ${emailId} AND "sesEmailId" IS NULL`;
}

export function configurationSetFor(
  prefix: string | undefined,
  domain: { clickTracking: boolean | null; openTracking: boolean | null },
): string | undefined {
  if (!prefix) return undefined;
  const click = !!domain.clickTracking;
  const open = !!domain.openTracking;
  return `${prefix}-${click && open ? 'full' : click ? 'click' : open ? 'open' : 'general'}`;
}

/** Exponential backoff from `retryBaseMs`, capped at `retryMaxMs`, with +-20% jitter. */
export function retryDelayMs(attempt: number, s: Pick<SendSettings, 'retryBaseMs' | 'retryMaxMs'>, random = Math.random): number {
  const exp = Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp * (0.8 + 0.4 * random()));
}

async function retryDatabaseWrite(log: Logger, ctx: object, write: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= 5) {
        // The mail left but the row does not say so: once the lease expires it may be sent again.
        log.error({ err, ...ctx }, 'SES accepted the email but recording it failed');
        throw err;
      }
      await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
    }
  }
}
