import type { Logger } from 'pino';
import type { Db } from '../db/client';
import type { Prisma } from '../db/generated/client';
import { newId } from '../ids';
import { queueNames, type QueueFactory, type SendEmailJob, type SendLane } from '../queue/queues';

/** An email ready to be stored: recipients normalised, template already rendered. */
export interface EmailDraft {
  teamId: number;
  domainId: number | null;
  /** SES region of the sending domain: picks the send queue. */
  region: string;
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
  templateId?: string | null;
  inReplyToId?: string | null;
  scheduledAt?: Date | null;
  campaignId?: string | null;
  contactId?: string | null;
  unsubUrl?: string | null;
  lane?: SendLane;
  /** SUPPRESSED drafts are stored with their event and never queued. */
  suppressed?: { reason: string } | null;
}

export interface CreatedEmail {
  id: string;
  status: 'QUEUED' | 'SCHEDULED' | 'SUPPRESSED';
}

/**
 * Stores many emails with their first event in one transaction (two multi-row INSERTs), then
 * enqueues one job per sendable email with one addBulk per queue. PostgreSQL is the source of
 * truth: if Redis refuses the jobs, the rows are still there and the sweeper enqueues them.
 */
export async function insertAndEnqueueEmails(
  deps: { db: Db; queues: QueueFactory; log?: Logger },
  drafts: EmailDraft[],
  now = new Date(),
): Promise<CreatedEmail[]> {
  if (drafts.length === 0) return [];
  const created: CreatedEmail[] = [];
  const rows: Prisma.EmailCreateManyInput[] = [];
  const events: Prisma.EmailEventCreateManyInput[] = [];
  for (const d of drafts) {
    const id = newId();
    const status = d.suppressed ? 'SUPPRESSED' : d.scheduledAt && d.scheduledAt > now ? 'SCHEDULED' : 'QUEUED';
    created.push({ id, status });
    rows.push({
      id,
      teamId: d.teamId,
      domainId: d.domainId,
      apiKeyId: d.apiKeyId ?? null,
      from: d.from,
      to: d.to,
      replyTo: d.replyTo ?? [],
      cc: d.cc ?? [],
      bcc: d.bcc ?? [],
      subject: d.subject,
      html: d.html ?? null,
      text: d.text ?? null,
      headers: d.headers ?? undefined,
      attachments: d.attachments ?? undefined,
      templateId: d.templateId ?? null,
      inReplyToId: d.inReplyToId ?? null,
      scheduledAt: d.scheduledAt ?? null,
      latestStatus: status,
      campaignId: d.campaignId ?? null,
      contactId: d.contactId ?? null,
      isMarketing: d.lane === 'marketing',
      unsubUrl: d.unsubUrl ?? null,
      createdAt: now,
      updatedAt: now,
    });
    events.push({
      emailId: id,
      status,
      data: d.suppressed ? { error: d.suppressed.reason } : d.scheduledAt ? { scheduledAt: d.scheduledAt.toISOString() } : undefined,
      createdAt: now,
    });
  }
  await deps.db.$transaction([deps.db.email.createMany({ data: rows }), deps.db.emailEvent.createMany({ data: events })]);
  await enqueueSendJobs(deps, drafts.map((d, i) => ({ draft: d, created: created[i] })), now);
  return created;
}

async function enqueueSendJobs(
  deps: { queues: QueueFactory; log?: Logger },
  items: { draft: EmailDraft; created: CreatedEmail }[],
  now: Date,
): Promise<void> {
  const byQueue = new Map<string, { name: string; data: SendEmailJob; opts: { jobId: string; delay?: number } }[]>();
  for (const { draft, created } of items) {
    if (created.status === 'SUPPRESSED') continue;
    const queue = queueNames.send(draft.region, draft.lane ?? 'transactional');
    const delay = draft.scheduledAt ? Math.max(0, draft.scheduledAt.getTime() - now.getTime()) : 0;
    const list = byQueue.get(queue) ?? [];
    list.push({ name: 'send', data: { emailId: created.id }, opts: { jobId: created.id, ...(delay ? { delay } : {}) } });
    byQueue.set(queue, list);
  }
  await Promise.all(
    [...byQueue].map(async ([name, jobs]) => {
      try {
        await deps.queues.get(name).addBulk(jobs);
      } catch (err) {
        deps.log?.warn({ err, queue: name, count: jobs.length }, 'enqueue failed; the sweeper will pick these emails up');
      }
    }),
  );
}
