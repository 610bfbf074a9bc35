import { ApiError, badRequest, conflict } from '@mailrail/domain/errors/api-error';
import { outcomeRates } from '@mailrail/domain/reputation/rates';
import { findVerifiedSenderDomain, senderDomainError } from '@mailrail/domain/domains/sender-domain';
import { hasUnsubscribePlaceholder, renderCampaignContent, UNSUBSCRIBE_REQUIRED } from '@mailrail/domain/campaigns/campaign-content';
import { newId } from '@mailrail/platform/ids';
import { parseAddress } from '@mailrail/domain/emails/address';
import { parseScheduledAt } from '@mailrail/domain/campaigns/schedule-time';
import { pauseCampaignAndHoldEmails, PAUSABLE_STATUSES, resumePausedCampaign } from '@mailrail/domain/campaigns/campaign-state';
import { pendingCampaignCounters, withPendingCounters } from '@mailrail/domain/ses-events/counter-deltas';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { rampOf, windowPlan, type Ramp } from '@mailrail/domain/campaigns/ramp';
import { campaignRecipientCounts } from '@mailrail/domain/campaigns/recipient-outcomes';
import { type Campaign, type Prisma } from '@mailrail/platform/db/generated/client';
import { type CampaignStatus } from '@mailrail/platform/db/generated/enums';
import type { ApiDeps } from '../deps';
import { campaignSegment, requireSubscribedInSegment } from '../segments/campaign-segment';
import type { AuthContext } from '../http/auth';
import { checkBeforeSending, requireReadyToSend, type PreSendCheck } from './pre-send';
import type { CreateCampaignBody, ListCampaignsQuery, ScheduleCampaignBody, UpdateCampaignBody } from './schemas';

// Campaign rows and their state rules. The engine (apps/worker/src/campaigns) starts SCHEDULED
// campaigns and sends; this side only writes the plan and moves the status, always with a
// conditional UPDATE so a concurrent start, pause or delete cannot be overwritten.

export const PAGE_SIZE = 30;
const campaignNotFound = () => new ApiError('NOT_FOUND', 'Campaign not found');
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function campaignView(c: Campaign) {
  return {
    id: c.id,
    name: c.name,
    from: c.from,
    subject: c.subject,
    previewText: c.previewText,
    contactBookId: c.contactBookId,
    segmentId: c.segmentId,
    html: c.html,
    content: c.content,
    status: c.status,
    pausedReason: c.pausedReason,
    scheduledAt: iso(c.scheduledAt),
    batchSize: c.batchSize,
    batchWindowMinutes: c.batchWindowMinutes,
    ramp: rampOf(c),
    window: campaignWindow(c),
    total: c.total,
    sent: c.sent,
    delivered: c.delivered,
    opened: c.opened,
    clicked: c.clicked,
    unsubscribed: c.unsubscribed,
    bounced: c.bounced,
    hardBounced: c.hardBounced,
    complained: c.complained,
    rates: outcomeRates(c),
    replyTo: c.replyTo,
    cc: c.cc,
    bcc: c.bcc,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** The window the engine opened last (docs/campaigns.md "Ramp"); null before the first, or without windows. */
function campaignWindow(c: Campaign) {
  if (c.batchWindowMinutes <= 0 || c.windowNumber === null || !c.lastSentAt) return null;
  return {
    number: c.windowNumber,
    size: c.windowSize ?? c.batchSize,
    startedAt: c.lastSentAt.toISOString(),
    nextAt: new Date(c.lastSentAt.getTime() + c.batchWindowMinutes * 60_000).toISOString(),
  };
}

/** A ramp grows per window: without windows (batchWindowMinutes 0) it would mean nothing. */
function requireRampWindow(ramp: Ramp | null | undefined, batchWindowMinutes: number): void {
  if (ramp && batchWindowMinutes < 1) {
    const message = 'A ramp needs windows: set batchWindowMinutes to at least 1';
    throw badRequest(message, [{ path: ['ramp'], message }]);
  }
}

const rampColumns = (ramp: Ramp | null) => ({ rampStart: ramp?.start ?? null, rampFactor: ramp?.factor ?? null });

/**
 * The campaigns a key may see and act on: its team's and, for a key bound to a domain, only those
 * sending from that domain. Everything else is answered as not found, like another team's.
 */
function visibleTo(auth: AuthContext): { teamId: number; domainId?: number } {
  return { teamId: auth.teamId, ...(auth.domainId !== null ? { domainId: auth.domainId } : {}) };
}

export async function findCampaign(deps: ApiDeps, auth: AuthContext, id: string): Promise<Campaign> {
  const c = await deps.db.campaign.findFirst({ where: { id, ...visibleTo(auth) } });
  if (!c) throw campaignNotFound();
  return c;
}

/** The verified domain of `from` (the shared sender-domain rule); a key bound to another domain is a 403, as for emails. */
async function senderDomain(deps: ApiDeps, auth: AuthContext, from: string) {
  if (!parseAddress(from))
    throw badRequest('Invalid request body: from: must be an email address or "Name <address>"', [
      { path: ['from'], message: 'Invalid from address' },
    ]);
  const check = await findVerifiedSenderDomain(deps.db, auth.teamId, from, auth.domainId);
  if (!check.ok) throw senderDomainError(check, ['from']);
  return check.domain;
}

/** The HTML the campaign sends: editor JSON rendered to a template, or the raw HTML. */
export function campaignHtml(body: { content?: string; html?: string }): string {
  if (body.content !== undefined) {
    const html = renderCampaignContent(body.content);
    if (html === null) throw badRequest('Invalid content JSON', [{ path: ['content'], message: 'Invalid content JSON' }]);
    return html;
  }
  return body.html!;
}

function requireUnsubscribeLink(html: string, field: string): void {
  if (!hasUnsubscribePlaceholder(html)) throw badRequest(UNSUBSCRIBE_REQUIRED, [{ path: [field], message: UNSUBSCRIBE_REQUIRED }]);
}

async function requireSubscribedContacts(deps: ApiDeps, contactBookId: string): Promise<void> {
  const one = await deps.db.contact.findFirst({ where: { contactBookId, subscribed: true }, select: { id: true } });
  if (!one) throw badRequest('No subscribed contacts to send', [{ path: ['contactBookId'], message: 'No subscribed contacts to send' }]);
}

/**
 * Create is all-or-nothing: every check (domain, book, content, schedule, recipients) runs before
 * the single INSERT, so a campaign that cannot be scheduled is not left behind as a DRAFT.
 */
export async function createCampaign(deps: ApiDeps, auth: AuthContext, body: CreateCampaignBody) {
  const now = deps.clock.now();
  const domain = await senderDomain(deps, auth, body.from);
  const book = await deps.db.contactBook.findFirst({ where: { id: body.contactBookId, teamId: auth.teamId }, select: { id: true } });
  if (!book) throw badRequest('Contact book not found', [{ path: ['contactBookId'], message: 'Contact book not found' }]);
  const html = campaignHtml(body);
  requireUnsubscribeLink(html, body.content !== undefined ? 'content' : 'html');
  requireRampWindow(body.ramp, body.batchWindowMinutes ?? 0);

  let scheduledAt: Date | null = null;
  if (body.sendNow) scheduledAt = now;
  else if (body.scheduledAt) scheduledAt = parseScheduledAt(body.scheduledAt, now, deps.config.CAMPAIGN_TIMEZONE);
  const segment = body.segmentId ? await campaignSegment(deps.db, auth.teamId, book.id, body.segmentId) : null;
  // Created to be sent: the pre-send check's errors refuse it (its warnings never do).
  if (scheduledAt) {
    const draft = { teamId: auth.teamId, from: body.from, subject: body.subject, previewText: body.previewText ?? null, html };
    requireReadyToSend(await checkBeforeSending(deps, auth, { ...draft, contactBookId: book.id, segment, started: null }));
  }

  const created = await deps.db.campaign.create({
    data: {
      id: newId(),
      teamId: auth.teamId,
      domainId: domain.id,
      name: body.name,
      from: body.from,
      subject: body.subject,
      previewText: body.previewText ?? null,
      contactBookId: book.id,
      segmentId: segment?.id ?? null,
      html,
      content: body.content ?? null,
      status: scheduledAt ? 'SCHEDULED' : 'DRAFT',
      scheduledAt,
      batchSize: body.batchSize ?? 500,
      batchWindowMinutes: body.batchWindowMinutes ?? 0,
      ...rampColumns(body.ramp ?? null),
      replyTo: body.replyTo ?? [],
      cc: body.cc ?? [],
      bcc: body.bcc ?? [],
    },
  });
  return campaignView(created);
}

export async function listCampaigns(deps: ApiDeps, auth: AuthContext, q: ListCampaignsQuery) {
  const where: Prisma.CampaignWhereInput = visibleTo(auth);
  if (q.status) where.status = q.status;
  if (q.search) {
    where.OR = [{ name: { contains: q.search, mode: 'insensitive' } }, { subject: { contains: q.search, mode: 'insensitive' } }];
  }
  const [rows, count] = await Promise.all([
    deps.db.campaign.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: (q.page - 1) * PAGE_SIZE, take: PAGE_SIZE }),
    deps.db.campaign.count({ where }),
  ]);
  // Counters with the deltas not folded yet (counter-deltas.ts).
  const pending = await pendingCampaignCounters(
    prismaExecutor(deps.db),
    rows.map((c) => c.id),
  );
  return {
    campaigns: rows
      .map((row) => withPendingCounters(row, pending))
      .map((c) => ({
        id: c.id,
        name: c.name,
        from: c.from,
        subject: c.subject,
        createdAt: c.createdAt.toISOString(),
        updatedAt: c.updatedAt.toISOString(),
        status: c.status,
        scheduledAt: iso(c.scheduledAt),
        total: c.total,
        sent: c.sent,
        delivered: c.delivered,
        unsubscribed: c.unsubscribed,
      })),
    totalPage: Math.ceil(count / PAGE_SIZE),
  };
}

/** The campaign with its counters and, once its audience is fixed, its recipients by outcome (issue 42) and its windows, planned against actual. */
export async function getCampaign(deps: ApiDeps, auth: AuthContext, id: string) {
  const c = await findCampaign(deps, auth, id);
  const sql = prismaExecutor(deps.db);
  const [pending, recipientOutcomes, windows] = await Promise.all([
    pendingCampaignCounters(sql, [c.id]),
    campaignRecipientCounts(sql, c),
    c.batchWindowMinutes > 0 && c.recipientsReadyAt
      ? deps.db.campaignWindow.findMany({ where: { campaignId: c.id }, orderBy: { number: 'asc' } })
      : Promise.resolve(null),
  ]);
  // What is left to send is the audience minus the recipients skipped so far (they get no email).
  const toSend = recipientOutcomes ? c.total - recipientOutcomes.suppressed - recipientOutcomes.unsubscribed : 0;
  const plan = windows && windowPlan({ ramp: rampOf(c), batchSize: c.batchSize }, windows, toSend);
  return { ...campaignView(withPendingCounters(c, pending)), recipientOutcomes, windowPlan: plan };
}

/** A refused transition: 404 when the campaign is not visible to the key, else 400 naming its status. */
async function refuse(deps: ApiDeps, auth: AuthContext, id: string, action: string, allowed: CampaignStatus[]): Promise<never> {
  const c = await findCampaign(deps, auth, id);
  throw badRequest(`Cannot ${action} a campaign that is ${c.status}; allowed from ${allowed.join(' or ')}`);
}

// A PAUSED campaign may be scheduled again: it resumes at the new time where it stopped.
const SCHEDULABLE: CampaignStatus[] = ['DRAFT', 'SCHEDULED', 'PAUSED'];

export async function scheduleCampaign(deps: ApiDeps, auth: AuthContext, id: string, body: ScheduleCampaignBody) {
  const now = deps.clock.now();
  const c = await findCampaign(deps, auth, id);
  if (!SCHEDULABLE.includes(c.status)) return refuse(deps, auth, id, 'schedule', SCHEDULABLE);
  const scheduledAt = body.scheduledAt ? parseScheduledAt(body.scheduledAt, now, deps.config.CAMPAIGN_TIMEZONE) : now;
  if (!c.contactBookId) throw badRequest('No contact book found for campaign');
  if (!c.html) throw badRequest('No content added for campaign');
  if (body.segmentId !== undefined && c.recipientsReadyAt)
    throw badRequest('The recipients of this campaign are fixed already', [{ path: ['segmentId'], message: 'Recipients already fixed' }]);
  const segmentId = body.segmentId !== undefined ? body.segmentId : c.segmentId;
  const segment = segmentId ? await campaignSegment(deps.db, auth.teamId, c.contactBookId, segmentId) : null;
  requireRampWindow(body.ramp !== undefined ? body.ramp : rampOf(c), body.batchWindowMinutes ?? c.batchWindowMinutes);
  // The pre-send check's errors refuse it (its warnings never do: a useSend client is not refused).
  requireReadyToSend(await checkBeforeSending(deps, auth, { ...c, segment, started: c.recipientsReadyAt ? c : null }));
  // Every check above ran: a dry run answers what a real one would do, and changes nothing.
  if (body.dryRun) return { scheduledAt: scheduledAt.toISOString(), timeZone: deps.config.CAMPAIGN_TIMEZONE };
  const { count } = await deps.db.campaign.updateMany({
    where: { id, ...visibleTo(auth), status: { in: SCHEDULABLE } },
    data: {
      status: 'SCHEDULED',
      scheduledAt,
      ...(body.batchSize !== undefined ? { batchSize: body.batchSize } : {}),
      ...(body.batchWindowMinutes !== undefined ? { batchWindowMinutes: body.batchWindowMinutes } : {}),
      ...(body.ramp !== undefined ? rampColumns(body.ramp) : {}),
      ...(body.segmentId !== undefined ? { segmentId: body.segmentId } : {}),
    },
  });
  if (count === 0) return refuse(deps, auth, id, 'schedule', SCHEDULABLE);
  return { success: true as const };
}

// Editable until the audience is fixed: a SCHEDULED campaign that had started (paused, then
// scheduled again) already has its recipients and part of its mail sent, so it is not.
const EDITABLE: CampaignStatus[] = ['DRAFT', 'SCHEDULED'];
const notEditable = (c: Campaign) =>
  conflict(
    `Cannot edit a campaign that is ${c.status}${c.recipientsReadyAt ? ' and has started sending' : ''}; allowed while DRAFT or SCHEDULED before it starts`,
  );

/**
 * PATCH: the fields given, checked as create checks them (the sender domain, the book, the content
 * and its unsubscribe link, the ramp against the resulting window), then one conditional UPDATE so
 * a campaign the engine starts meanwhile is answered 409, never changed.
 */
export async function updateCampaign(deps: ApiDeps, auth: AuthContext, id: string, body: UpdateCampaignBody) {
  const c = await findCampaign(deps, auth, id);
  if (!EDITABLE.includes(c.status) || c.recipientsReadyAt) throw notEditable(c);
  const data: Prisma.CampaignUncheckedUpdateManyInput = {};
  if (body.name !== undefined) data.name = body.name;
  if (body.from !== undefined) {
    data.domainId = (await senderDomain(deps, auth, body.from)).id;
    data.from = body.from;
  }
  if (body.subject !== undefined) data.subject = body.subject;
  if (body.previewText !== undefined) data.previewText = body.previewText;
  if (body.contactBookId !== undefined) {
    const book = await deps.db.contactBook.findFirst({ where: { id: body.contactBookId, teamId: auth.teamId }, select: { id: true } });
    if (!book) throw badRequest('Contact book not found', [{ path: ['contactBookId'], message: 'Contact book not found' }]);
    if (c.status === 'SCHEDULED') await requireSubscribedContacts(deps, book.id);
    data.contactBookId = book.id;
  }
  // The segment must be of the resulting book (a new book with the old segment is a 400, never a
  // silent switch to the whole book).
  const segmentId = body.segmentId !== undefined ? body.segmentId : c.segmentId;
  const bookId = body.contactBookId ?? c.contactBookId;
  if (segmentId && bookId && (body.segmentId !== undefined || body.contactBookId !== undefined)) {
    const segment = await campaignSegment(deps.db, auth.teamId, bookId, segmentId);
    if (c.status === 'SCHEDULED') await requireSubscribedInSegment(deps, segment);
  }
  if (body.segmentId !== undefined) data.segmentId = body.segmentId;
  if (body.content !== undefined || body.html !== undefined) {
    data.html = campaignHtml(body);
    requireUnsubscribeLink(data.html, body.content !== undefined ? 'content' : 'html');
    data.content = body.content ?? null;
  }
  if (body.replyTo !== undefined) data.replyTo = body.replyTo;
  if (body.cc !== undefined) data.cc = body.cc;
  if (body.bcc !== undefined) data.bcc = body.bcc;
  if (body.batchSize !== undefined) data.batchSize = body.batchSize;
  if (body.batchWindowMinutes !== undefined) data.batchWindowMinutes = body.batchWindowMinutes;
  if (body.ramp !== undefined) Object.assign(data, rampColumns(body.ramp));
  requireRampWindow(body.ramp !== undefined ? body.ramp : rampOf(c), body.batchWindowMinutes ?? c.batchWindowMinutes);

  const { count } = await deps.db.campaign.updateMany({
    where: { id, ...visibleTo(auth), status: { in: EDITABLE }, recipientsReadyAt: null },
    data,
  });
  const updated = await findCampaign(deps, auth, id);
  if (count === 0) throw notEditable(updated);
  return campaignView(updated);
}

/** See pauseCampaignAndHoldEmails: emails not claimed yet are held back until resume. */
export async function pauseCampaign(deps: ApiDeps, auth: AuthContext, id: string) {
  const paused = await pauseCampaignAndHoldEmails(deps.db, { id, ...visibleTo(auth) }, deps.clock.now());
  if (!paused) return refuse(deps, auth, id, 'pause', PAUSABLE_STATUSES);
  return { success: true as const };
}

export async function resumeCampaign(deps: ApiDeps, auth: AuthContext, id: string) {
  const resumed = await resumePausedCampaign(deps.db, { id, ...visibleTo(auth) }, deps.clock.now());
  if (!resumed) return refuse(deps, auth, id, 'resume', ['PAUSED']);
  return { success: true as const };
}

/** Refused while RUNNING (pause first). Recipient rows go with it; its Email rows stay. */
export async function deleteCampaign(deps: ApiDeps, auth: AuthContext, id: string) {
  const c = await findCampaign(deps, auth, id);
  const { count } = await deps.db.campaign.deleteMany({ where: { id, ...visibleTo(auth), status: { not: 'RUNNING' } } });
  if (count === 0) return refuse(deps, auth, id, 'delete', ['DRAFT', 'SCHEDULED', 'PAUSED', 'SENT']);
  return campaignView(c);
}

/** The pre-send check of a stored campaign, with its segment (GET /campaigns/{id}/check). */
export async function checkCampaign(deps: ApiDeps, auth: AuthContext, id: string): Promise<PreSendCheck> {
  const c = await findCampaign(deps, auth, id);
  const segment = c.segmentId && c.contactBookId ? await campaignSegment(deps.db, auth.teamId, c.contactBookId, c.segmentId) : null;
  return checkBeforeSending(deps, auth, { ...c, segment, started: c.recipientsReadyAt ? c : null });
}
