import { webhookEventTypes } from '@mailrail/domain/webhooks/events';
import { WebhookDeliveryStatus, WebhookStatus } from '@mailrail/platform/db/generated/enums';
import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  type WebhookServiceDeps,
  createWebhookBody,
  listDeliveriesQuery,
  updateWebhookBody,
  webhookIdParam,
} from './webhook-service';

const webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    events: z
      .array(z.enum(webhookEventTypes))
      .describe(
        "The event types it receives; empty: every type. Payloads: docs/webhooks.md. mailrail additions to useSend's list: campaign.recipient_skipped (a campaign contact that gets no email, one event per contact, with its outcome and reason) and reputation.threshold_crossed",
      ),
    domainIds: z.array(z.number().int()),
    status: z.enum(WebhookStatus),
    enabled: z.boolean(),
    consecutiveFailures: z.number().int(),
    lastSuccessAt: z.string().nullable(),
    lastFailureAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Webhook' });

const withSecret = webhook.extend({ secret: z.string().describe('whsec_… shown only here and on rotation') });

const delivery = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  status: z.enum(WebhookDeliveryStatus),
  attempt: z.number().int(),
  responseStatus: z.number().int().nullable(),
  durationMs: z.number().int().nullable(),
  responseText: z.string().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const route = declareRoute<WebhookServiceDeps>();
const tag = 'Webhooks';
const params = webhookIdParam;

export const webhookRoutes = [
  route({
    method: 'post',
    path: '/api/v1/webhooks',
    tag,
    summary: 'Create a webhook endpoint (the secret is shown once)',
    body: createWebhookBody,
    response: withSecret,
    example: { url: 'https://example.com/hooks/mailrail', events: ['email.delivered', 'email.bounced'], description: 'CRM sync' },
    handle: (svc, { auth, body }) => createWebhook(svc, auth, body),
  }),
  route({
    method: 'get',
    path: '/api/v1/webhooks',
    tag,
    summary: 'List webhook endpoints',
    response: z.object({ data: z.array(webhook), count: z.number().int() }),
    handle: (svc, { auth }) => listWebhooks(svc, auth),
  }),
  route({
    method: 'get',
    path: '/api/v1/webhooks/:id',
    tag,
    summary: 'Get a webhook endpoint',
    params,
    response: webhook,
    handle: (svc, { auth, params }) => getWebhook(svc, auth, params.id),
  }),
  route({
    method: 'patch',
    path: '/api/v1/webhooks/:id',
    tag,
    summary: 'Update url, events, domains, description or enabled',
    params,
    body: updateWebhookBody,
    response: webhook,
    example: { enabled: false },
    handle: (svc, { auth, params, body }) => updateWebhook(svc, auth, params.id, body),
  }),
  route({
    method: 'delete',
    path: '/api/v1/webhooks/:id',
    tag,
    summary: 'Delete a webhook endpoint',
    params,
    response: z.object({ id: z.string(), success: z.literal(true), message: z.string() }),
    handle: (svc, { auth, params }) => deleteWebhook(svc, auth, params.id),
  }),
  route({
    method: 'post',
    path: '/api/v1/webhooks/:id/rotate-secret',
    tag,
    summary: 'Replace the signing secret (shown once)',
    params,
    response: withSecret,
    handle: (svc, { auth, params }) => rotateWebhookSecret(svc, auth, params.id),
  }),
  route({
    method: 'post',
    path: '/api/v1/webhooks/:id/test',
    tag,
    summary: 'Send a webhook.test event to this endpoint',
    params,
    response: z.object({ success: z.literal(true), eventId: z.string() }),
    handle: (svc, { auth, params }) => sendTestEvent(svc, auth, params.id),
  }),
  route({
    method: 'get',
    path: '/api/v1/webhooks/:id/deliveries',
    tag,
    summary: 'Recent deliveries with status code, duration and attempt',
    params,
    query: listDeliveriesQuery,
    response: z.object({ data: z.array(delivery), count: z.number().int() }),
    handle: (svc, { auth, params, query }) => listDeliveries(svc, auth, params.id, query),
  }),
];
