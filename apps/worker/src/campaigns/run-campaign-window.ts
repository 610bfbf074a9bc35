import {
  buildOneClickUnsubscribeUrl,
  buildUnsubscribeUrl,
  contactVariables,
  enqueueSendJobs,
  insertEmailRows,
  personalizeCampaignBody,
  prepareCampaignBody,
  prepareEmails,
  type Db,
  type EmailDraft,
} from '@mailrail/core';
import type { PoolClient } from 'pg';
import type { WorkerDeps } from '../deps';

// One campaign window, top to bottom. Each chunk is ONE transaction that locks the campaign row,
// re-checks that it is RUNNING, takes the next PENDING recipients, writes their Email rows (ids
// decided before) and marks the recipients QUEUED with those ids. A crash before COMMIT leaves
// the recipients PENDING and no email; a crash after it leaves QUEUED recipients whose emails
// exist (the sweeper enqueues any job that was lost). A recipient is therefore never skipped and
// never given two emails; the send pipeline's claim then makes each email reach SES once.
// Pause takes the same row lock, so it waits for at most one chunk.

export interface WindowResult {
  queued: number;
  suppressed: number;
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
  recipientsReadyAt: Date | null;
  region: string | null;
  variables: string[] | null;
}

interface PendingRecipient {
  contactId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: unknown;
  /** False when the contact unsubscribed (or was deleted) after the campaign started. */
  stillSubscribed: boolean;
}

const utc = (param: string) => `(${param}::timestamptz AT TIME ZONE 'UTC')`;

export async function runCampaignWindow(deps: WorkerDeps, campaignId: string): Promise<WindowResult> {
  const total: WindowResult = { queued: 0, suppressed: 0, stopped: 'no-pending' };
  // The send jobs of one chunk are added while the next chunk is written (Redis and PostgreSQL
  // work overlap). enqueueSendJobs never throws: jobs it could not add are left to the sweeper.
  let enqueuing: Promise<void> = Promise.resolve();
  // Recipients are taken in contactId order; within one run, every PENDING row below the last one
  // taken is already taken, so the next chunk starts after it instead of skipping them again.
  let after = '';
  try {
    for (;;) {
      const chunk = await withTransaction(deps, (client) => queueNextChunk(deps, client, campaignId, after));
      after = chunk.lastContactId ?? after;
      total.queued += chunk.queued;
      total.suppressed += chunk.suppressed;
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

async function withTransaction<T>(deps: WorkerDeps, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await deps.sql.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function queueNextChunk(deps: WorkerDeps, client: PoolClient, campaignId: string, after: string) {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const nothing = (stopped: WindowResult['stopped']) => ({ queued: 0, suppressed: 0, prepared: [], now, stopped, lastContactId: null });

  const { rows } = await client.query<CampaignForWindow>(
    `SELECT c.id, c."teamId", c."domainId", c.status, c."from", c.subject, c."previewText", c.html, c."replyTo", c.cc, c.bcc,
            c."batchSize", c."batchWindowMinutes", c."lastSentAt", c."recipientsReadyAt", d.region, b.variables
       FROM "Campaign" c
       LEFT JOIN "Domain" d ON d.id = c."domainId"
       LEFT JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE c.id = $1
      FOR UPDATE OF c`,
    [campaignId],
  );
  const c = rows[0];
  if (!c || c.status !== 'RUNNING' || !c.recipientsReadyAt || !c.html) return nothing('not-running');

  // The budget of the current window: batchSize minus the emails created since it opened. Counted
  // from the Email rows, so a crash in the middle of a window does not reset it.
  let limit = deps.config.CAMPAIGN_CHUNK_SIZE;
  let windowOpened = false;
  if (c.batchWindowMinutes > 0) {
    const windowMs = c.batchWindowMinutes * 60_000;
    let start = c.lastSentAt;
    if (!start || start.getTime() + windowMs <= now.getTime()) {
      start = now;
      windowOpened = true;
    }
    const used = windowOpened
      ? 0
      : Number(
          (
            await client.query<{ n: string }>(`SELECT count(*) AS n FROM "Email" WHERE "campaignId" = $1 AND "createdAt" >= ${utc('$2')}`, [
              campaignId,
              start.toISOString(),
            ])
          ).rows[0].n,
        );
    limit = Math.min(limit, c.batchSize - used);
    if (limit <= 0) return nothing('window-full');
  }

  const pending = await client.query<PendingRecipient>(
    `SELECT ce."contactId", ce.email, ct."firstName", ct."lastName", ct.properties,
            COALESCE(ct.subscribed, false) AS "stillSubscribed"
       FROM "CampaignEmail" ce
       -- The bound on ct.id repeats the one on contactId so that the contacts' index scan starts
       -- at this chunk, not at the book's first contact (a merge join read every earlier contact).
       LEFT JOIN "Contact" ct ON ct.id = ce."contactId" AND ct.id > $3
      WHERE ce."campaignId" = $1 AND ce.status = 'PENDING' AND ce."contactId" > $3
      ORDER BY ce."contactId"
      LIMIT $2`,
    [campaignId, limit, after],
  );
  if (pending.rows.length === 0) return nothing('no-pending');

  const body = prepareCampaignBody({ subject: c.subject, html: c.html, previewText: c.previewText });
  const region = c.region ?? deps.config.AWS_REGION;
  const drafts: EmailDraft[] = [];
  const dropped: string[] = [];
  for (const r of pending.rows) {
    if (!r.stillSubscribed) {
      dropped.push(r.contactId);
      continue;
    }
    const unsubscribeUrl = buildUnsubscribeUrl(deps.config, r.contactId, campaignId);
    const vars = contactVariables({ id: r.contactId, ...r }, c.variables ?? [], unsubscribeUrl);
    const personal = personalizeCampaignBody(body, vars);
    drafts.push({
      teamId: c.teamId,
      domainId: c.domainId,
      region,
      from: c.from,
      to: [r.email],
      replyTo: c.replyTo,
      cc: c.cc,
      bcc: c.bcc,
      subject: personal.subject,
      html: personal.html,
      text: personal.text,
      campaignId,
      contactId: r.contactId,
      unsubUrl: buildOneClickUnsubscribeUrl(deps.config, r.contactId, campaignId),
      lane: 'marketing',
    });
  }

  const prepared = prepareEmails(drafts, now);
  // insertEmailRows only needs $executeRawUnsafe: run it on this transaction's connection.
  const onThisTransaction = { $executeRawUnsafe: (q: string, ...params: unknown[]) => client.query(q, params).then((r) => r.rowCount ?? 0) } as unknown as Db;
  await insertEmailRows(onThisTransaction, prepared, now);
  if (prepared.length) {
    await client.query(
      // The chunk's contactId range keeps this an index range scan; without it PostgreSQL hashed
      // every recipient of the campaign for each chunk.
      `UPDATE "CampaignEmail" ce SET status = 'QUEUED', "emailId" = u.email_id, "updatedAt" = ${utc('$4')}
         FROM unnest($2::text[], $3::text[]) AS u(contact_id, email_id)
        WHERE ce."campaignId" = $1 AND ce."contactId" = u.contact_id
          AND ce."contactId" > $5 AND ce."contactId" <= $6`,
      [campaignId, prepared.map((p) => p.draft.contactId), prepared.map((p) => p.created.id), nowIso, after, pending.rows[pending.rows.length - 1].contactId],
    );
  }
  if (dropped.length) {
    await client.query(
      `UPDATE "CampaignEmail" SET status = 'SUPPRESSED', "updatedAt" = ${utc('$3')} WHERE "campaignId" = $1 AND "contactId" = ANY($2::text[])`,
      [campaignId, dropped, nowIso],
    );
  }
  // lastSentAt is the opening of the current window (or the last chunk when there is no window).
  if (windowOpened || c.batchWindowMinutes === 0) {
    await client.query(`UPDATE "Campaign" SET "lastSentAt" = ${utc('$2')}, "updatedAt" = ${utc('$2')} WHERE id = $1`, [campaignId, nowIso]);
  }
  return {
    queued: prepared.length,
    suppressed: dropped.length,
    prepared,
    now,
    lastContactId: pending.rows[pending.rows.length - 1].contactId,
    // A full chunk: the next one re-checks the status and the window's budget.
    stopped: pending.rows.length < limit ? ('no-pending' as const) : null,
  };
}
