import { bareAddress } from '@mailrail/domain/emails/address';
import { configurationSetName } from '@mailrail/domain/ses-events/configuration-sets';
import { EMAIL_OUTBOX_RETURNING, emailOutboxInsertSql } from '@mailrail/domain/sql/email-outbox';
import { recordSesAcceptance } from '@mailrail/domain/sql/ses-acceptance';
import { statusesBelow } from '@mailrail/domain/emails/status';
import { type EmailStatus } from '@mailrail/platform/db/generated/enums';
import { type Logger } from '@mailrail/platform/log/logger';
import { type NamedStatement, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { AcceptanceRecorder } from './acceptance-committer';
import { buildRawMessage, type EmailToRender } from './build-mime';
import { clientMessageForSes } from './client-message';
import { classifySesError, type SesFailure } from './ses-errors';
import { sesCallNow, type PacingOutcome, type SesCall, type SesCallAnswer } from './send-pacing';
import { type SesSender } from './ses-sender';

// Sending one email, top to bottom: claim the row, build the MIME, call SES, record the result.
// The claim is the exactly-once guard: a conditional UPDATE of the locked row that only one worker
// can win, and that never wins for an email that is sent, cancelled, suppressed, failed, or not due
// yet. The send workers run it for several emails at once (claim-committer.ts), with the same
// conditions per row.
// The claim also marks the SES call as started. A worker that dies mid-call leaves that mark: the
// email is "in doubt" (SES may have it). For a kind whose policy is to wait, the claim's hold
// already covers the wait, so nobody takes the email over before SES's Send event had time to
// arrive; that event records the acceptance (recordSesAcceptance) and the email is never resent.

/** A job that finds its email held comes back this long after the holder's lease ends, to take over if it died. */
export const AFTER_LEASE_MS = 250;

export interface SendSettings {
  leaseSeconds: number;
  /** SES_TIMEOUT_MS: a call started later than the lease minus this (and a margin) is not started. */
  callTimeoutMs: number;
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
  /** The send lane's paced SES call (send-pacing.ts); without it SES is called at once. */
  sesCall?: SesCall;
  log: Logger;
  send: SendSettings;
  /** The send workers' group committer; without it each acceptance is its own statement. */
  acceptances?: AcceptanceRecorder;
  /** The send workers' group claimer; without it each claim is its own statement. */
  claims?: EmailClaimer;
}

export type SendOutcome =
  | { result: 'sent'; messageId: string }
  | { result: 'failed'; failure: SesFailure }
  /** Nothing to do: already sent, cancelled, suppressed or failed, or the row is gone. */
  | { result: 'skipped'; status: EmailStatus | null }
  /** Someone else holds the lease, or the email is not due yet: look again after `delayMs`. */
  /** Or SES may have the message (a call that got no answer) and the lane waits for its Send event. */
  /** Or the email's claim ran out before its SES call could start (a stall): it is claimed again. */
  | { result: 'later'; delayMs: number; reason: 'leased' | 'not-due' | 'in-doubt' | 'claim-ran-out' }
  /** A transient SES error: the lease is released, try again after `delayMs`. */
  | { result: 'retry'; delayMs: number; failure: SesFailure }
  /**
   * Paced (no send slot soon enough on our own limiter) or throttled by SES: the attempt is given
   * back, and the caller slows the lane or the region down (LanePacing.report).
   */
  | PacingOutcome;

/** The claimed row: what the MIME needs, plus what the SES call and the retry policy need. */
interface ClaimedEmail extends Omit<EmailToRender, 'inReplyToSesId'> {
  /** The email this one replies to: its SES message id is read only for a reply (inReplyToSesId). */
  inReplyToId: string | null;
  bcc: string[];
  /** The SMTP client's own MIME message, sent instead of one built from the fields. */
  rawMessage: Buffer | null;
  sendAttempts: number;
  /** The campaign lane: its in-doubt wait is SendSettings.inDoubtWaitSeconds.marketing. */
  isMarketing: boolean;
  region: string | null;
  clickTracking: boolean | null;
  openTracking: boolean | null;
  /** Set when an earlier SES call of this email never recorded its outcome: this send may be a second copy. */
  unfinishedCallStartedAt: Date | null;
}

/** Where an email stands when it could not be claimed: read under the claim's row lock, so current. */
interface EmailSendState {
  latestStatus: EmailStatus;
  sesEmailId: string | null;
  /** Milliseconds until the lease ends (negative or null: no live lease). */
  leaseMs: number | null;
  /** Milliseconds until the email is due (null: not scheduled). */
  dueInMs: number | null;
}

/** A claim's answer for one email that exists: claimed (with what the send needs), or where it stands. */
export type ClaimAnswer = { claimed: true; email: ClaimedEmail } | { claimed: false; state: EmailSendState };

/** What the send workers' group claimer (claim-committer.ts) offers sendOneEmail. */
export interface EmailClaimer {
  /** The answer of the group statement; undefined when the row was held by another transaction (or is gone). */
  claim(emailId: string): Promise<ClaimAnswer | undefined>;
}

/**
 * The claim statement, with and without SKIP LOCKED. Named: the workers run it for every group, and
 * PostgreSQL then parses it once per connection. It keeps planning each call (a custom plan), so
 * it still reads only the partitions of the ids it is given (docs/email-log.md).
 */
const claimStatement = (lockClause: '' | ' SKIP LOCKED'): NamedStatement => ({
  name: lockClause ? 'mailrail_claim_emails_skip_locked' : 'mailrail_claim_emails',
  text: `WITH locked AS (
         SELECT id, "sesCallStartedAt", "latestStatus", "sesEmailId",
                (EXTRACT(EPOCH FROM ("sendLeaseUntil" - now())) * 1000)::float8 AS "leaseMs",
                (EXTRACT(EPOCH FROM ("scheduledAt" - now())) * 1000)::float8 AS "dueInMs",
                ("latestStatus" IN ('QUEUED', 'SCHEDULED')
                 AND "sesEmailId" IS NULL
                 AND ("sendLeaseUntil" IS NULL OR "sendLeaseUntil" < now())
                 AND ("scheduledAt" IS NULL OR "scheduledAt" <= now() + interval '1 second')) AS claimable
           FROM "Email"
          WHERE id = ANY($1::text[])
          ORDER BY id
            FOR UPDATE${lockClause}
       ), claimed AS (
         UPDATE "Email" e
            SET "sendLeaseUntil" = now() + (($2::int + CASE WHEN e."isMarketing" THEN $3::int ELSE $4::int END) * interval '1 second'),
                "sesCallStartedAt" = now(),
                "sendAttempts" = e."sendAttempts" + 1,
                "updatedAt" = now()
           FROM locked l
          WHERE e.id = l.id AND l.claimable AND e.id = ANY($1::text[]) -- ANY: the plan reads the partitions of these ids only
         RETURNING e.*
       )
       SELECT l.id, c.id IS NOT NULL AS claimed, l."latestStatus", l."sesEmailId", l."leaseMs", l."dueInMs",
              c."from", c."to", c.cc, c.bcc, c."replyTo", c.subject, c.html, c.text, c.headers,
              c.attachments, c."rawMessage", c."unsubUrl", c."sendAttempts", c."isMarketing", d.region, d."clickTracking", d."openTracking",
              c."inReplyToId",
              l."sesCallStartedAt" AS "unfinishedCallStartedAt"
         FROM locked l
         LEFT JOIN claimed c ON c.id = l.id
         LEFT JOIN "Domain" d ON d.id = c."domainId"`,
});
const CLAIM_WAITING_FOR_LOCKS = claimStatement('');
const CLAIM_SKIPPING_LOCKED = claimStatement(' SKIP LOCKED');

/**
 * Takes each email that is due, unsent and not held by another worker, for the lease plus its
 * lane's in-doubt wait, and marks its SES call as started; one statement for all of `emailIds`.
 * The rows are locked first (FOR UPDATE, in id order), so the claim's conditions are read on each
 * row's newest version and the answer for an email not claimed says where it stands now.
 * `skipLocked` (the group claim) passes over rows another transaction holds (their emails are not
 * in the answer) instead of waiting for them: a group never waits for a lock, so it cannot
 * deadlock nor hold its other rows while waiting; the caller claims those emails alone, waiting.
 */
export async function claimEmailsForSending(
  sql: SendEmailDeps['sql'],
  emailIds: readonly string[],
  send: Pick<SendSettings, 'leaseSeconds' | 'inDoubtWaitSeconds'>,
  opts: { skipLocked: boolean },
): Promise<Map<string, ClaimAnswer>> {
  const rows = await sql.query<ClaimedEmail & EmailSendState & { claimed: boolean }>(
    opts.skipLocked ? CLAIM_SKIPPING_LOCKED : CLAIM_WAITING_FOR_LOCKS,
    [emailIds, send.leaseSeconds, send.inDoubtWaitSeconds.marketing, send.inDoubtWaitSeconds.transactional],
  );
  return new Map(rows.map((row) => [row.id, row.claimed ? { claimed: true, email: row } : { claimed: false, state: row }]));
}

/**
 * The SES message id of the email a reply answers (null until that one was sent). A statement of
 * its own, run for replies only: inside the claim, an id known only at run time would make every
 * claim plan all the partitions of the email log (docs/email-log.md).
 */
export async function inReplyToSesId(sql: SendEmailDeps['sql'], inReplyToId: string | null): Promise<string | null> {
  if (!inReplyToId) return null;
  const rows = await sql.query<{ sesEmailId: string | null }>(`SELECT "sesEmailId" FROM "Email" WHERE id = $1`, [inReplyToId]);
  return rows[0]?.sesEmailId ?? null;
}

/** claimEmailsForSending for one email, waiting for its row lock: the claimed email, or null. */
export async function claimEmailForSending(
  sql: SendEmailDeps['sql'],
  emailId: string,
  send: Pick<SendSettings, 'leaseSeconds' | 'inDoubtWaitSeconds'>,
): Promise<ClaimedEmail | null> {
  const answer = (await claimEmailsForSending(sql, [emailId], send, { skipLocked: false })).get(emailId);
  return answer?.claimed ? answer.email : null;
}

export async function sendOneEmail(deps: SendEmailDeps, emailId: string): Promise<SendOutcome> {
  const { sql, send } = deps;
  // Before the claim statement, so the lease (which starts in it) surely outlasts this deadline;
  // what follows must leave room for the call's timeout and for recording its outcome.
  const startBy = Date.now() + send.leaseSeconds * 1000 - send.callTimeoutMs - RECORDING_MARGIN_MS;
  const claim = await claimEmail(deps, emailId);
  if (!claim) return { result: 'skipped', status: null };
  if (!claim.claimed) return whyNotClaimed(claim.state);
  const email = claim.email;
  if (email.unfinishedCallStartedAt) {
    // In doubt and no Send event came within the wait (or the lane resends at once): SES may
    // already have delivered one copy. Logged so a duplicate can be traced.
    deps.log.warn(
      { emailId, unfinishedCallStartedAt: email.unfinishedCallStartedAt },
      'sending again an email whose earlier SES call never recorded its outcome',
    );
  }

  const region = email.region ?? send.defaultRegion;
  // Outside the try below: a database error here is not a message that cannot be built.
  const answeredSesId = email.rawMessage ? null : await inReplyToSesId(sql, email.inReplyToId);
  let raw: Buffer;
  try {
    raw = email.rawMessage
      ? clientMessageForSes(email.rawMessage, email.id)
      : await buildRawMessage({ ...email, inReplyToSesId: answeredSesId });
  } catch (err) {
    // A message that cannot be built will not build on a retry either.
    const failure: SesFailure = { kind: 'permanent', name: 'MessageBuildError', message: (err as Error).message };
    await recordFailed(sql, emailId, failure);
    return { result: 'failed', failure };
  }
  const callSes = deps.sesCall ?? sesCallNow(deps.ses);
  const answer: SesCallAnswer | { sent: false; reason: 'ses-failed'; failure: SesFailure } = await callSes({
    region,
    raw,
    // Pinned to the From the intake checked against the team's domains, whatever the raw message says.
    fromEmailAddress: bareAddress(email.from),
    // The envelope takes bare addresses; names travel in the MIME headers only. For a client's
    // own message these are its envelope recipients (RCPT TO), whatever its To and Cc headers say.
    destination: { to: email.to.map(bareAddress), cc: email.cc.map(bareAddress), bcc: email.bcc.map(bareAddress) },
    configurationSetName: configurationSetFor(send.configurationSetPrefix, email),
    startBy,
  }).catch((err: unknown) => ({ sent: false, reason: 'ses-failed', failure: classifySesError(err) }) as const);
  if (!answer.sent) {
    switch (answer.reason) {
      case 'claim-running-out':
        // SES was not called. Once the lease ends another worker may claim the email: hand it back
        // only while the claim is still this one (no later claim counted another attempt).
        await releaseLease(sql, emailId, { giveBackAttempt: true, onlyAttempt: email.sendAttempts });
        deps.log.warn({ emailId }, 'the claim ran out before the SES call could start; claiming the email again');
        return { result: 'later', delayMs: 0, reason: 'claim-ran-out' };
      case 'no-slot':
        // SES was not called: the attempt is given back, as for a throttle.
        await releaseLease(sql, emailId, { giveBackAttempt: true });
        return { result: 'paced', retryInMs: answer.retryInMs };
      case 'rate-unavailable':
        // SES was not called, so the email is never in doubt: retried within its attempts.
        return afterSesFailure(deps, email, { kind: 'transient', name: 'SendRateUnavailable', message: answer.message });
      case 'ses-failed':
        return afterSesFailure(deps, email, answer.failure);
    }
  }
  const messageId = answer.messageId;

  // SES has the message: from here on the only risk is losing this fact, so insist a little.
  // recordSesAcceptance writes nothing when SES's Send event came first and recorded it already.
  const acceptances = deps.acceptances;
  await retryDatabaseWrite(deps.log, { emailId, messageId }, () =>
    acceptances ? acceptances.record(emailId, messageId) : recordSesAcceptance(sql, emailId, messageId),
  );
  return { result: 'sent', messageId };
}

/** A failed SES call (or one that could not start): fail, wait in doubt, give the attempt back, or retry. */
async function afterSesFailure(deps: SendEmailDeps, email: ClaimedEmail, failure: SesFailure): Promise<SendOutcome> {
  const { sql, send } = deps;
  const emailId = email.id;
  if (failure.kind === 'permanent') {
    await recordFailed(sql, emailId, failure);
    return { result: 'failed', failure };
  }
  const inDoubtWaitSeconds = email.isMarketing ? send.inDoubtWaitSeconds.marketing : send.inDoubtWaitSeconds.transactional;
  if (failure.outcomeUnknown && inDoubtWaitSeconds > 0 && email.sendAttempts < send.maxAttempts) {
    // SES may have taken the message: in doubt, exactly as when a worker dies mid-call. The claim
    // (lease plus the lane's in-doubt wait) and its call marker stay; the job looks again when it
    // ends and sends again only if SES's Send event has not recorded the message meanwhile.
    deps.log.warn({ emailId, error: failure }, 'SES call got no answer; the email is in doubt until its Send event or the in-doubt wait');
    return { result: 'later', delayMs: (send.leaseSeconds + inDoubtWaitSeconds) * 1000 + AFTER_LEASE_MS, reason: 'in-doubt' };
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

/**
 * The send workers claim in groups (deps.claims), passing over rows another transaction holds; an
 * email the group did not answer for (its row was held, or the group's statement failed) is
 * claimed alone, waiting for its row lock as the single-row claim always did. Undefined: no such email.
 */
async function claimEmail(deps: SendEmailDeps, emailId: string): Promise<ClaimAnswer | undefined> {
  if (deps.claims) {
    try {
      const answer = await deps.claims.claim(emailId);
      if (answer) return answer;
    } catch (err) {
      // Only this group's emails; each claims alone now (and fails its job if that fails too).
      deps.log.warn({ err, emailId }, 'group claim failed; claiming the email alone');
    }
  }
  return (await claimEmailsForSending(deps.sql, [emailId], deps.send, { skipLocked: false })).get(emailId);
}

function whyNotClaimed(state: EmailSendState): SendOutcome {
  if (state.sesEmailId || (state.latestStatus !== 'QUEUED' && state.latestStatus !== 'SCHEDULED')) {
    return { result: 'skipped', status: state.latestStatus };
  }
  // Held by another worker: come back just after its lease, to take over if it died.
  if (state.leaseMs !== null && state.leaseMs > 0)
    return { result: 'later', delayMs: Math.ceil(state.leaseMs) + AFTER_LEASE_MS, reason: 'leased' };
  if (state.dueInMs !== null && state.dueInMs > 1000) return { result: 'later', delayMs: Math.ceil(state.dueInMs), reason: 'not-due' };
  // On the boundary (a lease ending this very millisecond): simply look again.
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

/**
 * Lets the email be claimed again (by a retry, the sweeper, or a cancel from the API). `onlyAttempt`:
 * only if no claim came after this one (each claim counts an attempt), for a claim that may have ended.
 */
async function releaseLease(
  sql: SendEmailDeps['sql'],
  emailId: string,
  opts: { giveBackAttempt: boolean; onlyAttempt?: number },
): Promise<void> {
  await sql.execute(
    `UPDATE "Email"
        SET "sendLeaseUntil" = NULL,
            "sesCallStartedAt" = NULL,
            "sendAttempts" = GREATEST(0, "sendAttempts" - $2::int),
            "updatedAt" = now()
      WHERE id = $1 AND "sesEmailId" IS NULL AND ($3::int IS NULL OR "sendAttempts" = $3::int)`,
    [emailId, opts.giveBackAttempt ? 1 : 0, opts.onlyAttempt ?? null],
  );
}

// Time left after the SES call's timeout for recording its outcome before the lease ends.
const RECORDING_MARGIN_MS = 1000;

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
