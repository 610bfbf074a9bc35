import { campaignRecipientSkippedEventsSql } from '@mailrail/domain/sql/campaign-recipient-events';
import { prepareCampaignBody } from '@mailrail/domain/campaigns/campaign-content';
import { rampOf, windowSizeFor } from '@mailrail/domain/campaigns/ramp';
import { renderCampaignEmail } from '@mailrail/domain/campaigns/render-campaign-email';
import { registryFallbacks } from '@mailrail/domain/audience/properties/contact-properties';
import {
  enqueueSendJobs,
  insertEmailRows,
  prepareEmails,
  type EmailDraft,
  type PreparedEmail,
} from '@mailrail/domain/emails/create-emails';
import { emailIdCreatedWithinSql } from '@mailrail/domain/sql/email-id-range';
import { suppressionJoinSql } from '@mailrail/domain/sql/suppression';
import { withTransaction, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { SuppressionReason } from '@mailrail/platform/db/generated/enums';
import type { CampaignRecipientReason } from '@mailrail/domain/campaigns/recipient-outcomes';
import type { WorkerDeps } from '../deps';

// One campaign window, top to bottom. Each chunk is ONE transaction that locks the campaign row,
// re-checks that it is RUNNING, takes the next PENDING recipients, writes their Email rows (ids
// decided before) and marks the recipients QUEUED with those ids. A crash before COMMIT leaves
// the recipients PENDING and no email; a crash after it leaves QUEUED recipients whose emails
// exist (the sweeper enqueues any job that was lost). A recipient is therefore never skipped and
// never given two emails; the send pipeline's claim then makes each email reach SES once.
// Pause takes the same row lock, so it waits for at most one chunk.
// A window (batchWindowMinutes > 0) is opened by the chunk that writes its first emails: that same
// transaction stores its start (lastSentAt), number and size, so a crash before COMMIT opens
// nothing, and after it every replay reads the stored window instead of opening or growing one.

export interface WindowResult {
  queued: number;
  /** Recipients taken but not sent to: suppressed, unsubscribed or deleted since the audience was fixed. */
  skipped: number;
  stopped: 'not-running' | 'no-pending' | 'window-full';
}

interface CampaignForWindow {
  id: string;
  teamId: number;
  domainId: number | null;
  status: string;
  from: string;
  subject: string;
  previewText: string | null;
  html: string | null;
  replyTo: string[];
  cc: string[];
  bcc: string[];
  batchSize: number;
  batchWindowMinutes: number;
  lastSentAt: Date | null;
  rampStart: number | null;
  rampFactor: number | null;
  windowNumber: number | null;
  windowSize: number | null;
  recipientsReadyAt: Date | null;
  region: string | null;
  variables: string[] | null;
  /** The book's property registry (name, fallback), for the fallbacks of variables without their own. */
  registry: { name: string; fallback: string | null }[] | null;
}

interface PendingRecipient {
  contactId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: unknown;
  /** False when the contact was deleted after the campaign's audience was fixed. */
  contactExists: boolean;
  /** False when the contact unsubscribed (or was deleted) after the campaign started. */
  stillSubscribed: boolean;
  /** Set when the address was suppressed after the audience was fixed (a bounce from an earlier window, the API). */
  suppressedBecause: SuppressionReason | null;
}

/** A recipient taken but not sent to, and why. */
interface SkippedRecipient {
  contactId: string;
  status: 'SUPPRESSED' | 'UNSUBSCRIBED';
  reason: CampaignRecipientReason;
}

/** What a window touches: the pg executor (one transaction per chunk), the send queues, the clock. */
export type CampaignWindowDeps = Pick<WorkerDeps, 'sql' | 'queues' | 'log' | 'clock' | 'config'>;

export async function runCampaignWindow(deps: CampaignWindowDeps, campaignId: string): Promise<WindowResult> {
  const total: WindowResult = { queued: 0, skipped: 0, stopped: 'no-pending' };
  // The send jobs of one chunk are added while the next chunk is written (Redis and PostgreSQL
  // work overlap). enqueueSendJobs never throws: jobs it could not add are left to the sweeper.
  let enqueuing: Promise<void> = Promise.resolve();
  // Recipients are taken in contactId order; within one run, every PENDING row below the last one
  // taken is already taken, so the next chunk starts after it instead of skipping them again.
  let after = '';
  try {
    for (;;) {
      const chunk = await withTransaction(deps.sql, (tx) => queueNextChunk(deps, tx, campaignId, after));
      after = chunk.lastContactId ?? after;
      total.queued += chunk.queued;
      total.skipped += chunk.skipped;
      await enqueuing;
      if (chunk.prepared.length) enqueuing = enqueueSendJobs(deps, chunk.prepared, chunk.now);
      if (chunk.stopped) {
        total.stopped = chunk.stopped;
        return total;
      }
    }
  } finally {
    await enqueuing;
  }
}

interface Chunk {
  queued: number;
  skipped: number;
  prepared: PreparedEmail[];
  now: Date;
  /** The last recipient taken (null when none was): the next chunk starts after it. */
  lastContactId: string | null;
  /** Why the window ends after this chunk, or null to take another. */
  stopped: WindowResult['stopped'] | null;
}

/** One chunk, in one transaction: lock the campaign, size the window, take recipients, write their emails. */
async function queueNextChunk(deps: CampaignWindowDeps, tx: SqlExecutor, campaignId: string, after: string): Promise<Chunk> {
  const now = deps.clock.now();
  const nothing = (stopped: WindowResult['stopped']): Chunk => ({
    queued: 0,
    skipped: 0,
    prepared: [],
    now,
    stopped,
    lastContactId: null,
  });

  const c = await lockRunningCampaign(tx, campaignId);
  if (!c) return nothing('not-running');
  const budget = await windowBudget(deps, tx, c, now);
  if (!budget) return nothing('window-full');
  const pending = await takePendingRecipients(tx, c, budget.limit, after);
  if (pending.length === 0) return nothing('no-pending');
  const lastContactId = pending[pending.length - 1].contactId;

  const { drafts, skipped } = draftCampaignEmails(deps, c, pending);
  const prepared = prepareEmails(drafts, now);
  await insertEmailRows(tx, prepared, now);
  await markRecipientsQueued(tx, campaignId, prepared, now, after, lastContactId);
  await markRecipientsSkipped(tx, c, skipped, now);
  // lastSentAt is the opening of the current window (or the last chunk when there is no window).
  if (budget.opens) await openWindow(tx, campaignId, now, budget.opens, prepared.length);
  else if (c.batchWindowMinutes === 0) await setLastSentAt(tx, campaignId, now);
  else await countInWindow(tx, campaignId, c.windowNumber, prepared.length);
  return {
    queued: prepared.length,
    skipped: skipped.length,
    prepared,
    now,
    lastContactId,
    // A full chunk: the next one re-checks the status and the window's budget.
    stopped: pending.length < budget.limit ? 'no-pending' : null,
  };
}

type RunningCampaign = CampaignForWindow & { html: string };

/** Locks the campaign row (pause waits on this lock) and returns it if it can send now. */
async function lockRunningCampaign(tx: SqlExecutor, campaignId: string): Promise<RunningCampaign | null> {
  const rows = await tx.query<CampaignForWindow>(
    `SELECT c.id, c."teamId", c."domainId", c.status, c."from", c.subject, c."previewText", c.html, c."replyTo", c.cc, c.bcc,
            c."batchSize", c."batchWindowMinutes", c."lastSentAt", c."rampStart", c."rampFactor", c."windowNumber", c."windowSize",
            c."recipientsReadyAt", d.region, b.variables,
            (SELECT json_agg(json_build_object('name', p.name, 'fallback', p.fallback))
               FROM "ContactProperty" p
              WHERE p."contactBookId" = c."contactBookId" AND p.fallback IS NOT NULL) AS registry
       FROM "Campaign" c
       LEFT JOIN "Domain" d ON d.id = c."domainId"
       LEFT JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE c.id = $1
      FOR UPDATE OF c`,
    [campaignId],
  );
  const c = rows[0];
  if (!c || c.status !== 'RUNNING' || !c.recipientsReadyAt || !c.html) return null;
  return c as RunningCampaign;
}

interface WindowToOpen {
  number: number;
  size: number;
}

/**
 * How many recipients this chunk may take, or null when the current window is full. The budget of
 * the open window is its stored size minus the emails created since it opened, counted from the
 * Email rows, so a crash in the middle of a window does not reset it. When the last window has
 * ended, the next one (number + 1) is sized from the ramp (docs/campaigns.md "Ramp"); it is stored
 * only if this chunk commits.
 */
async function windowBudget(
  deps: CampaignWindowDeps,
  tx: SqlExecutor,
  c: RunningCampaign,
  now: Date,
): Promise<{ limit: number; opens: WindowToOpen | null } | null> {
  const chunkSize = deps.config.CAMPAIGN_CHUNK_SIZE;
  if (c.batchWindowMinutes <= 0) return { limit: chunkSize, opens: null };
  const windowMs = c.batchWindowMinutes * 60_000;
  const start = c.lastSentAt;
  if (start && start.getTime() + windowMs > now.getTime()) {
    // A window opened before the ramp columns existed has batchSize as its size.
    const size = c.windowSize ?? c.batchSize;
    const limit = Math.min(chunkSize, size - (await countEmailsSince(tx, c.id, start)));
    return limit <= 0 ? null : { limit, opens: null };
  }
  const number = (c.windowNumber ?? -1) + 1;
  const size = windowSizeFor(rampOf(c), c.batchSize, number);
  return { limit: Math.min(chunkSize, size), opens: { number, size } };
}

export async function countEmailsSince(tx: SqlExecutor, campaignId: string, since: Date): Promise<number> {
  const params: unknown[] = [campaignId, since];
  // The id range reads only the partitions of the days since `since`.
  const ids = emailIdCreatedWithinSql('id', { from: since }, (v) => `$${params.push(v)}`);
  const rows = await tx.query<{ n: string }>(
    `SELECT count(*) AS n FROM "Email" WHERE "campaignId" = $1 AND "createdAt" >= $2 AND ${ids}`,
    params,
  );
  return Number(rows[0].n);
}

/**
 * The next PENDING recipients after `after`, in contactId order, with their contact's fields and
 * what changed since the audience was fixed: the contact gone or unsubscribed, the address suppressed.
 */
async function takePendingRecipients(tx: SqlExecutor, c: RunningCampaign, limit: number, after: string): Promise<PendingRecipient[]> {
  const rows = await tx.query<PendingRecipient>(
    `SELECT ce."contactId", ce.email, ct."firstName", ct."lastName", ct.properties,
            ct.id IS NOT NULL AS "contactExists", COALESCE(ct.subscribed, false) AS "stillSubscribed",
            s.reason AS "suppressedBecause"
       FROM "CampaignEmail" ce
       -- The bound on ct.id repeats the one on contactId so that the contacts' index scan starts
       -- at this chunk, not at the book's first contact (a merge join read every earlier contact).
       LEFT JOIN "Contact" ct ON ct.id = ce."contactId" AND ct.id > $3
       ${suppressionJoinSql('s', '$4', 'ce.email')}
      WHERE ce."campaignId" = $1 AND ce.status = 'PENDING' AND ce."contactId" > $3
      ORDER BY ce."contactId"
      LIMIT $2`,
    [c.id, limit, after, c.teamId],
  );
  return rows;
}

/** Why a recipient is not to be sent to after all, or null when it is. */
function skippedBecause(r: PendingRecipient): Omit<SkippedRecipient, 'contactId'> | null {
  if (!r.contactExists) return { status: 'UNSUBSCRIBED', reason: 'CONTACT_DELETED' };
  if (!r.stillSubscribed) return { status: 'UNSUBSCRIBED', reason: 'UNSUBSCRIBED' };
  if (r.suppressedBecause) return { status: 'SUPPRESSED', reason: r.suppressedBecause };
  return null;
}

/** A personalised draft per recipient still to be sent to; the others are skipped, each with why. */
function draftCampaignEmails(
  deps: CampaignWindowDeps,
  c: RunningCampaign,
  pending: PendingRecipient[],
): { drafts: EmailDraft[]; skipped: SkippedRecipient[] } {
  const body = prepareCampaignBody({ subject: c.subject, html: c.html, previewText: c.previewText });
  const campaign = { id: c.id, bookVariables: c.variables ?? [], propertyFallbacks: registryFallbacks(c.registry) };
  const region = c.region ?? deps.config.AWS_REGION;
  const drafts: EmailDraft[] = [];
  const skipped: SkippedRecipient[] = [];
  for (const r of pending) {
    const skip = skippedBecause(r);
    if (skip) {
      skipped.push({ contactId: r.contactId, ...skip });
      continue;
    }
    const personal = renderCampaignEmail(deps.config, body, campaign, { id: r.contactId, ...r });
    drafts.push({
      teamId: c.teamId,
      domainId: c.domainId,
      region,
      source: 'CAMPAIGN',
      from: c.from,
      to: [r.email],
      replyTo: c.replyTo,
      cc: c.cc,
      bcc: c.bcc,
      subject: personal.subject,
      html: personal.html,
      text: personal.text,
      campaignId: c.id,
      contactId: r.contactId,
      unsubUrl: personal.oneClickUnsubscribeUrl,
      lane: 'marketing',
    });
  }
  return { drafts, skipped };
}

/** Marks each recipient QUEUED with the id of its new email. */
async function markRecipientsQueued(
  tx: SqlExecutor,
  campaignId: string,
  prepared: PreparedEmail[],
  now: Date,
  after: string,
  lastContactId: string,
): Promise<void> {
  if (!prepared.length) return;
  await tx.execute(
    // The chunk's contactId range keeps this an index range scan; without it PostgreSQL hashed
    // every recipient of the campaign for each chunk.
    `UPDATE "CampaignEmail" ce SET status = 'QUEUED', "emailId" = u.email_id, "updatedAt" = $4
       FROM unnest($2::text[], $3::text[]) AS u(contact_id, email_id)
      WHERE ce."campaignId" = $1 AND ce."contactId" = u.contact_id
        AND ce."contactId" > $5 AND ce."contactId" <= $6`,
    [campaignId, prepared.map((p) => p.draft.contactId), prepared.map((p) => p.created.id), now, after, lastContactId],
  );
}

/** Records each skipped recipient's status and reason, and its `campaign.recipient_skipped` event, in one statement. */
async function markRecipientsSkipped(tx: SqlExecutor, c: RunningCampaign, skipped: SkippedRecipient[], now: Date): Promise<void> {
  if (!skipped.length) return;
  await tx.execute(
    `WITH marked AS (
       UPDATE "CampaignEmail" ce SET status = u.status::"CampaignEmailStatus", reason = u.reason, "updatedAt" = $5
         FROM unnest($2::text[], $3::text[], $4::text[]) AS u(contact_id, status, reason)
        WHERE ce."campaignId" = $1 AND ce."contactId" = u.contact_id AND ce.status = 'PENDING'
        RETURNING ce."campaignId", ce."contactId", ce.email, ce.status, ce.reason, ce."updatedAt"
     )
     ${campaignRecipientSkippedEventsSql({ source: 'marked', teamIdSql: '$6::int', domainIdSql: '$7::int' })}`,
    [c.id, skipped.map((s) => s.contactId), skipped.map((s) => s.status), skipped.map((s) => s.reason), now, c.teamId, c.domainId],
  );
}

/**
 * Opens a window: its start, number and size on the campaign, and its row of planned against
 * actual (CampaignWindow) with this chunk's emails, in the chunk's transaction.
 */
async function openWindow(tx: SqlExecutor, campaignId: string, now: Date, w: WindowToOpen, queued: number): Promise<void> {
  await tx.execute(`UPDATE "Campaign" SET "lastSentAt" = $2, "windowNumber" = $3, "windowSize" = $4, "updatedAt" = $2 WHERE id = $1`, [
    campaignId,
    now,
    w.number,
    w.size,
  ]);
  await tx.execute(
    `INSERT INTO "CampaignWindow" ("campaignId", number, size, "openedAt", queued) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT ("campaignId", number) DO NOTHING`,
    [campaignId, w.number, w.size, now, queued],
  );
}

/** A later chunk of the open window adds its emails to the window's row (none for a window opened before the rows existed). */
async function countInWindow(tx: SqlExecutor, campaignId: string, windowNumber: number | null, queued: number): Promise<void> {
  if (windowNumber === null || queued === 0) return;
  await tx.execute(`UPDATE "CampaignWindow" SET queued = queued + $3 WHERE "campaignId" = $1 AND number = $2`, [
    campaignId,
    windowNumber,
    queued,
  ]);
}

async function setLastSentAt(tx: SqlExecutor, campaignId: string, now: Date): Promise<void> {
  await tx.execute(`UPDATE "Campaign" SET "lastSentAt" = $2, "updatedAt" = $2 WHERE id = $1`, [campaignId, now]);
}
