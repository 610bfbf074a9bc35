import { bareAddress } from '@mailrail/domain/emails/address';
import { configurationSetName } from '@mailrail/domain/ses-events/configuration-sets';
import { EMAIL_OUTBOX_RETURNING, emailOutboxInsertSql } from '@mailrail/domain/sql/email-outbox';
import { recordSesAcceptance } from '@mailrail/domain/sql/ses-acceptance';
import { statusesBelow } from '@mailrail/domain/emails/status';
import { type EmailStatus } from '@mailrail/platform/db/generated/enums';
import { type Logger } from '@mailrail/platform/log/logger';
import { type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { AcceptanceRecorder } from './acceptance-committer';
import { buildRawMessage, type EmailToRender } from './build-mime';
import { clientMessageForSes } from './client-message';
import { classifySesError, type SesFailure } from './ses-errors';
import type { SesSender } from './ses-sender';

// Sending one email, top to bottom: claim the row, build the MIME, call SES, record the result.
// The claim is the exactly-once guard: one conditional UPDATE that only one worker can win, and
// that never wins for an email that is sent, cancelled, suppressed, failed, or not due yet.
// The claim also marks the SES call as started. A worker that dies mid-call leaves that mark: the
// email is "in doubt" (SES may have it). For a kind whose policy is to wait, the claim's hold
// already covers the wait, so nobody takes the email over before SES's Send event had time to
// arrive; that event records the acceptance (recordSesAcceptance) and the email is never resent.

export interface SendSettings {
  leaseSeconds: number;
  /**
   * Added to the lease per lane: how long an email in doubt (its worker died during the SES call)
   * waits for SES's Send event before it is sent again; 0 resends when the lease ends.
   */
  inDoubtWaitSeconds: { marketing: number; transactional: number };
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Region used when the email's domain is gone. */
  defaultRegion: string;
  /** SES configuration sets are `<prefix>-general|click|open|full`; none when undefined. */
  configurationSetPrefix?: string;
}

export interface SendEmailDeps {
  /** The node-postgres pool for the hot path (a quarter of the CPU of a Prisma raw query). */
  sql: SqlExecutor;
  ses: SesSender;
  log: Logger;
  send: SendSettings;
  /** The send workers' group committer; without it each acceptance is its own statement. */
  acceptances?: AcceptanceRecorder;
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

/** The claimed row: what the MIME needs, plus what the SES call and the retry policy need. */
interface ClaimedEmail extends EmailToRender {
  bcc: string[];
  /** The SMTP client's own MIME message, sent instead of one built from the fields. */
  rawMessage: Buffer | null;
  sendAttempts: number;
  region: string | null;
  clickTracking: boolean | null;
  openTracking: boolean | null;
  /** Set when an earlier SES call of this email never recorded its outcome: this send may be a second copy. */
  unfinishedCallStartedAt: Date | null;
}

/**
 * Takes the email if it is due, unsent and not held by another worker, for the lease plus its
 * lane's in-doubt wait, and marks its SES call as started.
 */
export async function claimEmailForSending(
  sql: SendEmailDeps['sql'],
  emailId: string,
  send: Pick<SendSettings, 'leaseSeconds' | 'inDoubtWaitSeconds'>,
): Promise<ClaimedEmail | null> {
  const rows = await sql.query<ClaimedEmail>(
    `WITH previous AS (
       SELECT "sesCallStartedAt" FROM "Email" WHERE id = $1
     ), claimed AS (
       UPDATE "Email"
          SET "sendLeaseUntil" = now() + (($2::int + CASE WHEN "isMarketing" THEN $3::int ELSE $4::int END) * interval '1 second'),
              "sesCallStartedAt" = now(),
              "sendAttempts" = "sendAttempts" + 1,
              "updatedAt" = now()
        WHERE id = $1
          AND "latestStatus" IN ('QUEUED', 'SCHEDULED')
          AND "sesEmailId" IS NULL
          AND ("sendLeaseUntil" IS NULL OR "sendLeaseUntil" < now())
          AND ("scheduledAt" IS NULL OR "scheduledAt" <= now() + interval '1 second')
       RETURNING *
     )
     SELECT c.id, c."from", c."to", c.cc, c.bcc, c."replyTo", c.subject, c.html, c.text, c.headers,
            c.attachments, c."rawMessage", c."unsubUrl", c."sendAttempts", d.region, d."clickTracking", d."openTracking",
            r."sesEmailId" AS "inReplyToSesId",
            (SELECT "sesCallStartedAt" FROM previous) AS "unfinishedCallStartedAt"
       FROM claimed c
       LEFT JOIN "Domain" d ON d.id = c."domainId"
       LEFT JOIN "Email" r ON r.id = c."inReplyToId"`,
    [emailId, send.leaseSeconds, send.inDoubtWaitSeconds.marketing, send.inDoubtWaitSeconds.transactional],
  );
  return rows[0] ?? null;
}

export async function sendOneEmail(deps: SendEmailDeps, emailId: string): Promise<SendOutcome> {
  const { sql, send } = deps;
  const email = await claimEmailForSending(sql, emailId, send);
  if (!email) return whyNotClaimed(sql, emailId);
  if (email.unfinishedCallStartedAt) {
    // In doubt and no Send event came within the wait (or the lane resends at once): SES may
    // already have delivered one copy. Logged so a duplicate can be traced.
    deps.log.warn(
      { emailId, unfinishedCallStartedAt: email.unfinishedCallStartedAt },
      'sending again an email whose earlier SES call never recorded its outcome',
    );
  }

  const region = email.region ?? send.defaultRegion;
  let raw: Buffer;
  try {
    raw = email.rawMessage ? clientMessageForSes(email.rawMessage, email.id) : await buildRawMessage(email);
  } catch (err) {
    // A message that cannot be built will not build on a retry either.
    const failure: SesFailure = { kind: 'permanent', name: 'MessageBuildError', message: (err as Error).message };
    await recordFailed(sql, emailId, failure);
    return { result: 'failed', failure };
  }
  let messageId: string;
  try {
    ({ messageId } = await deps.ses.sendRawEmail({
      region,
      raw,
      // The envelope takes bare addresses; names travel in the MIME headers only. For a client's
      // own message these are its envelope recipients (RCPT TO), whatever its To and Cc headers say.
      destination: { to: email.to.map(bareAddress), cc: email.cc.map(bareAddress), bcc: email.bcc.map(bareAddress) },
      configurationSetName: configurationSetFor(send.configurationSetPrefix, email),
    }));
  } catch (err) {
    const failure = classifySesError(err);
    if (failure.kind === 'permanent') {
      await recordFailed(sql, emailId, failure);
      return { result: 'failed', failure };
    }
    if (failure.kind === 'throttled') {
      await releaseLease(sql, emailId, { giveBackAttempt: true });
      return { result: 'throttled', failure };
    }
    if (email.sendAttempts >= send.maxAttempts) {
      await recordFailed(sql, emailId, failure, email.sendAttempts);
      return { result: 'failed', failure };
    }
    await releaseLease(sql, emailId, { giveBackAttempt: false });
    return { result: 'retry', delayMs: retryDelayMs(email.sendAttempts, send), failure };
  }

  // SES has the message: from here on the only risk is losing this fact, so insist a little.
  // recordSesAcceptance writes nothing when SES's Send event came first and recorded it already.
  const acceptances = deps.acceptances;
  await retryDatabaseWrite(deps.log, { emailId, messageId }, () =>
    acceptances ? acceptances.record(emailId, messageId) : recordSesAcceptance(sql, emailId, messageId),
  );
  return { result: 'sent', messageId };
}

async function whyNotClaimed(sql: SendEmailDeps['sql'], emailId: string): Promise<SendOutcome> {
  const rows = await sql.query<{ latestStatus: EmailStatus; sesEmailId: string | null; leaseMs: number | null; dueInMs: number | null }>(
    `SELECT "latestStatus", "sesEmailId",
            (EXTRACT(EPOCH FROM ("sendLeaseUntil" - now())) * 1000)::float8 AS "leaseMs",
            (EXTRACT(EPOCH FROM ("scheduledAt" - now())) * 1000)::float8 AS "dueInMs"
       FROM "Email" WHERE id = $1`,
    [emailId],
  );
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

async function recordFailed(sql: SendEmailDeps['sql'], emailId: string, failure: SesFailure, attempts?: number): Promise<void> {
  const data = { error: failure.name, message: failure.message, ...(attempts ? { attempts } : {}) };
  await sql.execute(
    `WITH failed AS (
       UPDATE "Email"
          SET "latestStatus" = CASE WHEN "latestStatus" = ANY($2::"EmailStatus"[])
                                    THEN 'FAILED'::"EmailStatus" ELSE "latestStatus" END,
              "sendLeaseUntil" = NULL,
              "sesCallStartedAt" = NULL,
              "updatedAt" = now()
        WHERE id = $1 AND "sesEmailId" IS NULL
       RETURNING ${EMAIL_OUTBOX_RETURNING}
     ), outbox AS (
       ${emailOutboxInsertSql(`(SELECT * FROM failed WHERE "latestStatus" = 'FAILED')`)}
     )
     INSERT INTO "EmailEvent" ("emailId", status, data)
     SELECT id, 'FAILED', $3::jsonb FROM failed`,
    [emailId, statusesBelow('FAILED'), JSON.stringify(data)],
  );
}

/** Lets the email be claimed again (by a retry, the sweeper, or a cancel from the API). */
async function releaseLease(sql: SendEmailDeps['sql'], emailId: string, opts: { giveBackAttempt: boolean }): Promise<void> {
  await sql.execute(
    `UPDATE "Email"
        SET "sendLeaseUntil" = NULL,
            "sesCallStartedAt" = NULL,
            "sendAttempts" = GREATEST(0, "sendAttempts" - $2::int),
            "updatedAt" = now()
      WHERE id = $1 AND "sesEmailId" IS NULL`,
    [emailId, opts.giveBackAttempt ? 1 : 0],
  );
}

/** None until the operator names the sets (SES refuses a set that does not exist). */
export function configurationSetFor(
  prefix: string | undefined,
  domain: { clickTracking: boolean | null; openTracking: boolean | null },
): string | undefined {
  return prefix ? configurationSetName(prefix, { clickTracking: !!domain.clickTracking, openTracking: !!domain.openTracking }) : undefined;
}

/** Exponential backoff from `retryBaseMs`, capped at `retryMaxMs`, with +-20% jitter. */
export function retryDelayMs(attempt: number, s: Pick<SendSettings, 'retryBaseMs' | 'retryMaxMs'>, random = Math.random): number {
  const exp = Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp * (0.8 + 0.4 * random()));
}

async function retryDatabaseWrite(log: Logger, ctx: object, write: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return;
    } catch (err) {
      if (attempt >= 5) {
        // The mail left but the row does not say so: SES's Send event may still record it, else it
        // is sent again once the lease (and, for a lane that waits, the in-doubt wait) has passed.
        log.error({ err, ...ctx }, 'SES accepted the email but recording it failed');
        throw err;
      }
      await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
    }
  }
}
