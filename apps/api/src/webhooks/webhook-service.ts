import { z } from 'zod';
import { ApiError, badRequest, notFound, type Issue } from '@mailrail/domain/errors/api-error';
import { checkWebhookTarget, type ResolveHost } from '@mailrail/domain/webhooks/ssrf';
import { encryptSecret } from '@mailrail/platform/crypto/secrets';
import { INT4_MAX } from '@mailrail/domain/date-range';
import { newId } from '@mailrail/platform/ids';
import { newWebhookSecret } from '@mailrail/domain/webhooks/signing';
import { recordWebhookEvent } from '@mailrail/domain/webhooks/outbox';
import { WebhookDeliveryStatus } from '@mailrail/platform/db/generated/enums';
import { webhookEventTypes } from '@mailrail/domain/webhooks/events';
import { type Prisma, type Webhook } from '@mailrail/platform/db/generated/client';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { idString, MAX_URL_LENGTH } from '../http/limits';
import { intString } from '../http/query';

// ------------------------------------------------------------------ input

const webhookUrl = z
  .string()
  .trim()
  .max(MAX_URL_LENGTH)
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http or https URL');

// An empty list (the default) means every event type, including ones added later.
const eventList = z
  .array(z.enum(webhookEventTypes, { error: `must be one of ${webhookEventTypes.join(', ')}` }))
  .max(webhookEventTypes.length * 2)
  .transform((list) => [...new Set(list)]);
const domainIdList = z
  .array(z.number().int().positive().max(INT4_MAX))
  .max(100)
  .transform((list) => [...new Set(list)]);
const description = z.string().trim().max(500).nullable();

export const createWebhookBody = z.object({
  url: webhookUrl,
  events: eventList.default([]),
  domainIds: domainIdList.optional(),
  description: description.optional(),
});

export const updateWebhookBody = z.object({
  url: webhookUrl.optional(),
  events: eventList.optional(),
  domainIds: domainIdList.optional(),
  description: description.optional(),
  enabled: z.boolean().optional(),
});

/** Webhook ids in paths. */
export const webhookIdParam = z.object({ id: idString() });

export const listDeliveriesQuery = z.object({
  page: intString(1, 1_000_000).default(1),
  limit: intString(1, 100).default(20),
  status: z.enum(WebhookDeliveryStatus).optional(),
});

export type CreateWebhookInput = z.infer<typeof createWebhookBody>;
export type UpdateWebhookInput = z.infer<typeof updateWebhookBody>;
export type ListDeliveriesQuery = z.infer<typeof listDeliveriesQuery>;

/** What the service needs beyond ApiDeps: a DNS port, so tests can pretend a name resolves. */
export interface WebhookServiceDeps extends Pick<ApiDeps, 'db' | 'config'> {
  resolveHost?: ResolveHost;
}

// ------------------------------------------------------------------ output

export function webhookResponse(w: Webhook) {
  return {
    id: w.id,
    url: w.url,
    description: w.description,
    events: w.events,
    domainIds: w.domainIds,
    status: w.status,
    enabled: w.status === 'ACTIVE',
    consecutiveFailures: w.consecutiveFailures,
    lastSuccessAt: w.lastSuccessAt,
    lastFailureAt: w.lastFailureAt,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

// ------------------------------------------------------------------ checks

async function assertSafeUrl(deps: WebhookServiceDeps, url: string): Promise<void> {
  const check = await checkWebhookTarget(url, { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE, resolveHost: deps.resolveHost });
  if (!check.ok) {
    const message = `${check.reason}; webhooks may only call public addresses`;
    throw badRequest(`Invalid request body: url: ${message}`, [{ path: ['url'], message }]);
  }
}

/**
 * A key bound to a domain may only manage webhooks limited to that domain; without a list it
 * gets exactly that one. Every listed domain must belong to the team.
 */
async function resolveDomainIds(
  deps: WebhookServiceDeps,
  auth: AuthContext,
  requested: number[] | undefined,
): Promise<number[] | undefined> {
  const ids = requested ?? (auth.domainId !== null ? [auth.domainId] : undefined);
  if (ids === undefined) return undefined;
  if (auth.domainId !== null && (ids.length !== 1 || ids[0] !== auth.domainId)) {
    throw new ApiError('FORBIDDEN', "API key doesn't have access to this domain");
  }
  if (ids.length === 0) return ids;
  const owned = await deps.db.domain.findMany({ where: { teamId: auth.teamId, id: { in: ids } }, select: { id: true } });
  const ownedIds = new Set(owned.map((d) => d.id));
  const issues: Issue[] = ids.flatMap((id, i) => (ownedIds.has(id) ? [] : [{ path: ['domainIds', i], message: `domain ${id} not found` }]));
  if (issues.length) throw badRequest(`Invalid request body: domainIds.${issues[0].path[1]}: ${issues[0].message}`, issues);
  return ids;
}

/** The webhooks a caller may see: the team's, and for a domain-bound key only its domain's. */
function visibleTo(auth: AuthContext): Prisma.WebhookWhereInput {
  return { teamId: auth.teamId, ...(auth.domainId !== null ? { domainIds: { equals: [auth.domainId] } } : {}) };
}

async function findVisible(deps: WebhookServiceDeps, auth: AuthContext, id: string): Promise<Webhook> {
  const w = await deps.db.webhook.findFirst({ where: { id, ...visibleTo(auth) } });
  if (!w) throw notFound('Webhook not found');
  return w;
}

// ------------------------------------------------------------------ operations

/** The secret is returned here and on rotation only; the database keeps it encrypted. */
export async function createWebhook(deps: WebhookServiceDeps, auth: AuthContext, input: CreateWebhookInput) {
  await assertSafeUrl(deps, input.url);
  const domainIds = await resolveDomainIds(deps, auth, input.domainIds);
  const secret = newWebhookSecret();
  const w = await deps.db.webhook.create({
    data: {
      id: newId(),
      teamId: auth.teamId,
      url: input.url,
      description: input.description ?? null,
      events: input.events,
      domainIds: domainIds ?? [],
      secretEnc: encryptSecret(deps.config.SECRET, secret),
    },
  });
  return { ...webhookResponse(w), secret };
}

export async function listWebhooks(deps: WebhookServiceDeps, auth: AuthContext) {
  const rows = await deps.db.webhook.findMany({ where: visibleTo(auth), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  return { data: rows.map(webhookResponse), count: rows.length };
}

export async function getWebhook(deps: WebhookServiceDeps, auth: AuthContext, id: string) {
  return webhookResponse(await findVisible(deps, auth, id));
}

/**
 * `enabled: false` pauses; `enabled: true` makes a paused or auto-disabled endpoint active again
 * with a clean failure count.
 */
export async function updateWebhook(deps: WebhookServiceDeps, auth: AuthContext, id: string, input: UpdateWebhookInput) {
  const current = await findVisible(deps, auth, id);
  if (input.url !== undefined) await assertSafeUrl(deps, input.url);
  const domainIds = input.domainIds !== undefined ? await resolveDomainIds(deps, auth, input.domainIds) : undefined;
  const data: Prisma.WebhookUpdateInput = {
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.events !== undefined ? { events: input.events } : {}),
    ...(domainIds !== undefined ? { domainIds } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
  };
  if (input.enabled === false) data.status = 'PAUSED';
  if (input.enabled === true && current.status !== 'ACTIVE') Object.assign(data, { status: 'ACTIVE', consecutiveFailures: 0 });
  const w = await deps.db.webhook.update({ where: { id: current.id }, data });
  return webhookResponse(w);
}

export async function deleteWebhook(deps: WebhookServiceDeps, auth: AuthContext, id: string) {
  const w = await findVisible(deps, auth, id);
  await deps.db.webhook.delete({ where: { id: w.id } });
  return { id: w.id, success: true, message: 'Webhook deleted successfully' };
}

export async function rotateWebhookSecret(deps: WebhookServiceDeps, auth: AuthContext, id: string) {
  const w = await findVisible(deps, auth, id);
  const secret = newWebhookSecret();
  const updated = await deps.db.webhook.update({ where: { id: w.id }, data: { secretEnc: encryptSecret(deps.config.SECRET, secret) } });
  return { ...webhookResponse(updated), secret };
}

/**
 * Writes a `webhook.test` event naming this webhook into the outbox; the dispatcher sends it to
 * this webhook only, whatever its event and domain filters.
 */
export async function sendTestEvent(deps: WebhookServiceDeps, auth: AuthContext, id: string) {
  const w = await findVisible(deps, auth, id);
  if (w.status !== 'ACTIVE') throw badRequest(`Webhook is ${w.status}; enable it before sending a test event`);
  const eventId = await recordWebhookEvent(deps.db, {
    teamId: auth.teamId,
    type: 'webhook.test',
    data: { test: true, webhookId: w.id, sentAt: new Date().toISOString() },
  });
  return { success: true, eventId };
}

export async function listDeliveries(deps: WebhookServiceDeps, auth: AuthContext, id: string, q: ListDeliveriesQuery) {
  const w = await findVisible(deps, auth, id);
  const where: Prisma.WebhookDeliveryWhereInput = { webhookId: w.id, ...(q.status ? { status: q.status } : {}) };
  const [rows, count] = await Promise.all([
    deps.db.webhookDelivery.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (q.page - 1) * q.limit,
      take: q.limit,
      include: { event: { select: { type: true, createdAt: true } } },
    }),
    deps.db.webhookDelivery.count({ where }),
  ]);
  return {
    data: rows.map((d) => ({
      id: d.id,
      eventId: d.eventId,
      eventType: d.event.type,
      status: d.status,
      attempt: d.attempt,
      responseStatus: d.responseStatus,
      durationMs: d.durationMs,
      responseText: d.responseText,
      lastError: d.lastError,
      nextAttemptAt: d.nextAttemptAt,
      createdAt: d.createdAt,
      updatedAt: d.updatedAt,
    })),
    count,
  };
}
