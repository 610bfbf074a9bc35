import type { Logger } from 'pino';
import type { Db } from '@mailrail/platform/db/client';
import { newEmailId } from '@mailrail/platform/ids';
import {
  queueNames,
  SEND_GROUP_SIZE,
  sendGroupJobId,
  sendJobEmailIds,
  singleSendJob,
  type QueueFactory,
  type SendEmailJob,
  type SendLane,
} from '@mailrail/platform/queue/queues';
import type { FairJob } from '@mailrail/platform/queue/fair-priority';
import { EMAIL_OUTBOX_RETURNING, emailOutboxInsertSql } from '../sql/email-outbox';
import { prismaExecutor, type NamedStatement, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { emailSearchTextSql } from '../sql/email-search';
import { normaliseAddress } from './address';
import type { SkippedRecipient } from './recipient-outcomes';
import type { EmailSource, SuppressionReason } from '@mailrail/platform/db/generated/enums';
import { textArrayLiteral } from '@mailrail/platform/db/sql/text-array';
import { summariseBase64Attachments, type AttachmentSummary } from './attachment-list';

/** An email ready to be stored: recipients normalised, template already rendered. */
export interface EmailDraft {
  teamId: number;
  domainId: number | null;
  /** SES region of the sending domain: picks the send queue. */
  region: string;
  /** Where it came from: the API, the SMTP relay, a campaign, or the service itself. */
  source: EmailSource;
  apiKeyId?: number | null;
  from: string;
  to: string[];
  replyTo?: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  html?: string | null;
  text?: string | null;
  headers?: Record<string, string> | null;
  attachments?: { filename: string; content: string }[] | null;
  /** Name, type and size of each attachment, kept after sending; without it, read from `attachments`. */
  attachmentList?: AttachmentSummary[] | null;
  /** The client's own MIME message (SMTP relay): the worker sends it instead of building one. */
  rawMessage?: Buffer | null;
  templateId?: string | null;
  inReplyToId?: string | null;
  scheduledAt?: Date | null;
  campaignId?: string | null;
  contactId?: string | null;
  unsubUrl?: string | null;
  lane?: SendLane;
  /** SUPPRESSED drafts are stored with their event and never queued. */
  suppressed?: { reason: string } | null;
  /** Recipients given but not sent to, with why (withSuppressions). */
  skippedRecipients?: SkippedRecipient[] | null;
}

export interface CreatedEmail {
  id: string;
  status: 'QUEUED' | 'SCHEDULED' | 'SUPPRESSED';
}

/** A draft with its id and first status decided, ready for insertEmailRows and enqueueSendJobs. */
export interface PreparedEmail {
  draft: EmailDraft;
  created: CreatedEmail;
  /** The group send job that carries this email (sendGroupJobId); unset: a job of its own. */
  sendJobId?: string;
}

export function prepareEmails(drafts: EmailDraft[], now: Date): PreparedEmail[] {
  const prepared: PreparedEmail[] = drafts.map((draft) => ({
    draft,
    created: {
      // Time-ordered: the email log is partitioned by id (docs/email-log.md), and createdAt is this same `now`.
      id: newEmailId(now),
      status: draft.suppressed ? 'SUPPRESSED' : draft.scheduledAt && draft.scheduledAt > now ? 'SCHEDULED' : 'QUEUED',
    },
  }));
  groupSendJobs(prepared);
  return prepared;
}

/**
 * Emails due now of one team that go to the same send queue share a job, SEND_GROUP_SIZE at most,
 * in the order given. A scheduled email keeps a job of its own: its delay, its rescheduling and its
 * cancellation act on that job by the email's id.
 */
function groupSendJobs(prepared: PreparedEmail[]): void {
  const open = new Map<string, PreparedEmail[]>();
  const close = (group: PreparedEmail[]) => {
    if (group.length < 2) return;
    const jobId = sendGroupJobId(group[0].created.id);
    for (const p of group) p.sendJobId = jobId;
  };
  for (const p of prepared) {
    if (p.created.status !== 'QUEUED') continue;
    // One team per group: a group's place in its queue is its team's (fair-priority.ts).
    const queue = `${sendQueueOf(p.draft)}\u0000${p.draft.teamId}`;
    const group = open.get(queue) ?? [];
    group.push(p);
    if (group.length === SEND_GROUP_SIZE) {
      close(group);
      open.delete(queue);
    } else open.set(queue, group);
  }
  for (const group of open.values()) close(group);
}

const sendQueueOf = (d: EmailDraft) => queueNames.send(d.region, d.lane ?? 'transactional');

// One statement writes the emails and their first events: the rows travel as one JSON parameter
// expanded by json_populate_recordset, which is several times cheaper than Prisma's createMany.
// A single statement is atomic, so no explicit transaction (and no extra round trips) is needed.
// PostgreSQL's share is kept small too: a row's JSON leaves out
// its null columns (json_populate_recordset's NULL base fills them), its text[] columns travel as
// array literals, and the creation time, the same for every row, is one parameter ($4).
const EMAIL_COLUMNS = [
  'id',
  'teamId',
  'domainId',
  'apiKeyId',
  'from',
  'to',
  'replyTo',
  'cc',
  'bcc',
  'subject',
  'html',
  'text',
  'headers',
  'attachments',
  'rawMessage',
  'templateId',
  'inReplyToId',
  'scheduledAt',
  'latestStatus',
  'campaignId',
  'contactId',
  'isMarketing',
  'unsubUrl',
  'createdAt',
  'updatedAt',
  'toAddresses',
  'sendJobId',
  'skippedRecipients',
  'recipientAddresses',
  'source',
  'attachmentList',
];
/** text[] columns: NOT NULL or defaulting to empty, so a row may leave an empty one out. */
const ARRAY_COLUMNS = new Set(['to', 'replyTo', 'cc', 'bcc', 'toAddresses', 'recipientAddresses']);
const NOW_COLUMNS = new Set(['createdAt', 'updatedAt']);

const quoted = (c: string) => `"${c}"`;
const emailValueSql = (c: string) =>
  NOW_COLUMNS.has(c) ? '$4::timestamptz' : ARRAY_COLUMNS.has(c) ? `COALESCE(r.${quoted(c)}, '{}')` : `r.${quoted(c)}`;

/**
 * The statement that writes emails, their first events, their webhook outbox rows and the
 * idempotency records. With `unlessSuppressed`, it first looks the recipients up in the
 * suppression list ($5, (team, address) pairs) and writes nothing if one of them is there,
 * answering the suppressed pairs instead: the group committer's common case, a flush without a
 * suppressed recipient, is then one statement and one round trip instead of a lookup and an insert.
 */
function insertEmailsSql(unlessSuppressed: boolean): string {
  const guard = unlessSuppressed ? `\n  WHERE NOT EXISTS (SELECT 1 FROM suppressed)` : '';
  const ctes = [
    `email_rows AS (
  SELECT ${EMAIL_COLUMNS.map((c) => `${emailValueSql(c)} AS ${quoted(c)}`).join(', ')}
  FROM json_populate_recordset(NULL::"Email", $1::json) r${guard}
)`,
    `inserted AS (
  INSERT INTO "Email" (${EMAIL_COLUMNS.map(quoted).join(', ')}, "searchText")
  SELECT r.*, ${emailSearchTextSql('r.')} FROM email_rows r
  RETURNING ${EMAIL_OUTBOX_RETURNING}
)`,
    `outbox AS (
  ${emailOutboxInsertSql('inserted')}
)`,
    `idempotency AS (
  INSERT INTO "IdempotencyRecord" ("teamId", "key", "bodyHash", "emailIds", "createdAt")
  SELECT k."teamId", k."key", k."bodyHash", k."emailIds", $4::timestamptz FROM json_populate_recordset(NULL::"IdempotencyRecord", $3::json) k${guard}
)`,
  ];
  const events = `INSERT INTO "EmailEvent" ("emailId", status, data, "createdAt")
SELECT e."emailId", e.status, e.data, $4::timestamptz
FROM json_populate_recordset(NULL::"EmailEvent", $2::json) e
JOIN inserted i ON i.id = e."emailId"`;
  if (!unlessSuppressed) return `WITH ${ctes.join(',\n')}\n${events}`;
  // Suppressions are stored by bare, lower-cased address, as the pairs come.
  const suppressed = `suppressed AS (
  SELECT s."teamId", s.email, s.reason FROM "Suppression" s
  JOIN json_to_recordset($5::json) AS x("teamId" int, email text) ON s."teamId" = x."teamId" AND s.email = x.email
)`;
  return `WITH ${[suppressed, ...ctes, `events AS (\n${events}\n)`].join(',\n')}\nSELECT "teamId", email, reason FROM suppressed`;
}

const INSERT_EMAILS: NamedStatement = { name: 'mailrail_insert_emails', text: insertEmailsSql(false) };
const INSERT_EMAILS_UNLESS_SUPPRESSED: NamedStatement = { name: 'mailrail_insert_emails_unless_suppressed', text: insertEmailsSql(true) };

/** An Idempotency-Key's durable record, stored by the statement that stores its emails (idempotency.ts). */
export interface IdempotencyRow {
  teamId: number;
  key: string;
  bodyHash: string;
  emailIds: string[];
}

/** insertEmailsSql's first four parameters: the rows, their events, the idempotency records, now. */
function insertParams(items: PreparedEmail[], now: Date, idempotency: IdempotencyRow[]): unknown[] {
  const rows = items.map(({ draft: d, created, sendJobId }) => {
    const row: Record<string, unknown> = {
      id: created.id,
      teamId: d.teamId,
      from: d.from,
      to: textArrayLiteral(d.to),
      subject: d.subject,
      latestStatus: created.status,
      source: d.source,
      isMarketing: d.lane === 'marketing',
      // The dashboard's exact recipient search (GIN over the array).
      toAddresses: textArrayLiteral(d.to.map(normaliseAddress)),
      // The address page's exact match: everyone given, those not sent to included.
      recipientAddresses: textArrayLiteral(recipientAddresses(d)),
    };
    // The rest only when set: a missing key is NULL (or, for an array, empty).
    if (d.domainId != null) row.domainId = d.domainId;
    if (d.apiKeyId != null) row.apiKeyId = d.apiKeyId;
    if (d.replyTo?.length) row.replyTo = textArrayLiteral(d.replyTo);
    if (d.cc?.length) row.cc = textArrayLiteral(d.cc);
    if (d.bcc?.length) row.bcc = textArrayLiteral(d.bcc);
    if (d.html != null) row.html = d.html;
    if (d.text != null) row.text = d.text;
    if (d.headers != null) row.headers = d.headers;
    if (d.attachments != null) row.attachments = d.attachments;
    const attachmentList = d.attachmentList ?? (d.attachments?.length ? summariseBase64Attachments(d.attachments) : null);
    if (attachmentList?.length) row.attachmentList = attachmentList;
    // bytea's hex text form, which json_populate_recordset hands to bytea's input function.
    if (d.rawMessage) row.rawMessage = `\\x${d.rawMessage.toString('hex')}`;
    if (d.templateId != null) row.templateId = d.templateId;
    if (d.inReplyToId != null) row.inReplyToId = d.inReplyToId;
    if (d.scheduledAt) row.scheduledAt = d.scheduledAt.toISOString();
    if (d.campaignId != null) row.campaignId = d.campaignId;
    if (d.contactId != null) row.contactId = d.contactId;
    if (d.unsubUrl != null) row.unsubUrl = d.unsubUrl;
    if (sendJobId) row.sendJobId = sendJobId;
    if (d.skippedRecipients?.length) row.skippedRecipients = d.skippedRecipients;
    return row;
  });
  const events = items.map(({ draft: d, created }) => ({
    emailId: created.id,
    status: created.status,
    data: firstEventData(d),
  }));
  return [JSON.stringify(rows), JSON.stringify(events), JSON.stringify(idempotency), now.toISOString()];
}

/** Every address a draft was given (to, cc, bcc, and the suppressed ones dropped from them), bare, lower-cased, once each. */
function recipientAddresses(d: EmailDraft): string[] {
  const given = [...d.to, ...(d.cc ?? []), ...(d.bcc ?? []), ...(d.skippedRecipients ?? []).map((s) => s.email)];
  return [...new Set(given.map(normaliseAddress))];
}

/** The first event's data: why it was suppressed, when it is due, and who was not sent to. */
function firstEventData(d: EmailDraft): Record<string, unknown> | null {
  const data: Record<string, unknown> = {};
  if (d.suppressed) data.error = d.suppressed.reason;
  else if (d.scheduledAt) data.scheduledAt = d.scheduledAt.toISOString();
  if (d.skippedRecipients?.length) data.skippedRecipients = d.skippedRecipients;
  return Object.keys(data).length ? data : null;
}

/**
 * Runs on any executor: Prisma's connection (the API) or a worker transaction's connection.
 * `idempotency` rows are inserted by the same statement: a key already stored fails the whole
 * statement (unique violation), so no email is written twice under one key.
 */
export async function insertEmailRows(
  sql: SqlExecutor,
  items: PreparedEmail[],
  now: Date,
  idempotency: IdempotencyRow[] = [],
): Promise<void> {
  if (items.length === 0) return;
  await sql.execute(INSERT_EMAILS, insertParams(items, now, idempotency));
}

/**
 * insertEmailRows, unless one of `lookup`'s (team, bare lower-cased address) pairs is on the
 * suppression list: then nothing is written and those pairs are answered, for the caller to apply
 * the suppression rule and write again. An empty answer means the emails are stored.
 */
export async function insertEmailRowsUnlessSuppressed(
  sql: SqlExecutor,
  items: PreparedEmail[],
  now: Date,
  idempotency: IdempotencyRow[],
  lookup: { teamId: number; email: string }[],
): Promise<{ teamId: number; email: string; reason: SuppressionReason }[]> {
  if (items.length === 0) return [];
  return sql.query(INSERT_EMAILS_UNLESS_SUPPRESSED, [...insertParams(items, now, idempotency), JSON.stringify(lookup)]);
}

/**
 * Stores many emails with their first event in one statement, then enqueues one job per sendable
 * email with one addBulk per queue. PostgreSQL is the source of truth: if Redis refuses the jobs,
 * the rows are still there and the sweeper enqueues them.
 */
export async function insertAndEnqueueEmails(
  deps: { db: Db; queues: QueueFactory; log?: Logger },
  drafts: EmailDraft[],
  now = new Date(),
): Promise<CreatedEmail[]> {
  if (drafts.length === 0) return [];
  const prepared = prepareEmails(drafts, now);
  await insertEmailRows(prismaExecutor(deps.db), prepared, now);
  await enqueueSendJobs(deps, prepared, now);
  return prepared.map((p) => p.created);
}

/** The delay of a send job: until scheduledAt, never negative. */
export function sendDelay(scheduledAt: Date | null | undefined, now: Date): number {
  return scheduledAt ? Math.max(0, scheduledAt.getTime() - now.getTime()) : 0;
}

/**
 * Never throws: a Redis failure is logged and left to the sweeper, the rows are committed. Each
 * job gets its team's next places in its queue (fair-priority.ts), so one team's burst cannot hold
 * back another team's mail.
 */
export async function enqueueSendJobs(deps: { queues: QueueFactory; log?: Logger }, items: PreparedEmail[], now: Date): Promise<void> {
  const byQueue = new Map<string, { job: FairJob<SendEmailJob>['job']; teamId: number }[]>();
  const groups = new Map<string, string[]>();
  for (const { draft, created, sendJobId } of items) {
    if (created.status === 'SUPPRESSED') continue;
    const queue = sendQueueOf(draft);
    const list = byQueue.get(queue) ?? [];
    byQueue.set(queue, list);
    if (sendJobId) {
      // The group's job is listed at its first email; the others join its id list.
      const ids = groups.get(sendJobId);
      if (ids) ids.push(created.id);
      else {
        const emailIds = [created.id];
        groups.set(sendJobId, emailIds);
        list.push({ job: { name: 'send', data: { emailIds }, opts: { jobId: sendJobId } }, teamId: draft.teamId });
      }
      continue;
    }
    list.push({ job: singleSendJob(created.id, sendDelay(draft.scheduledAt, now)), teamId: draft.teamId });
  }
  await Promise.all(
    [...byQueue].map(async ([name, jobs]) => {
      try {
        // A job's weight in its team's share: the emails it carries (a group's are all listed by now).
        const weighed = jobs.map((j) => ({ ...j, emails: sendJobEmailIds(j.job.data).length }));
        await deps.queues.addFairly(name, weighed, now.getTime());
      } catch (err) {
        deps.log?.warn({ err, queue: name, count: jobs.length }, 'enqueue failed; the sweeper will pick these emails up');
      }
    }),
  );
}
