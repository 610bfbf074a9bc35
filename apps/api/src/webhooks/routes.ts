import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import {
  createWebhook,
  createWebhookBody,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listDeliveriesQuery,
  listWebhooks,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  updateWebhookBody,
  webhookIdParam,
  type WebhookServiceDeps,
} from './webhook-service';

export function webhookRoutes(deps: ApiDeps, extra: Pick<WebhookServiceDeps, 'resolveHost'> = {}): Router {
  const svc: WebhookServiceDeps = { db: deps.db, config: deps.config, ...extra };
  const webhookId = (params: unknown) => parseOrThrow(webhookIdParam, params, 'path').id;
  const r = Router();
  r.post('/', async (req, res) => {
    res.json(await createWebhook(svc, req.auth, parseOrThrow(createWebhookBody, req.body)));
  });
  r.get('/', async (req, res) => {
    res.json(await listWebhooks(svc, req.auth));
  });
  r.get('/:id', async (req, res) => {
    res.json(await getWebhook(svc, req.auth, webhookId(req.params)));
  });
  r.patch('/:id', async (req, res) => {
    res.json(await updateWebhook(svc, req.auth, webhookId(req.params), parseOrThrow(updateWebhookBody, req.body)));
  });
  r.delete('/:id', async (req, res) => {
    res.json(await deleteWebhook(svc, req.auth, webhookId(req.params)));
  });
  r.post('/:id/rotate-secret', async (req, res) => {
    res.json(await rotateWebhookSecret(svc, req.auth, webhookId(req.params)));
  });
  r.post('/:id/test', async (req, res) => {
    res.json(await sendTestEvent(svc, req.auth, webhookId(req.params)));
  });
  r.get('/:id/deliveries', async (req, res) => {
    res.json(await listDeliveries(svc, req.auth, webhookId(req.params), parseOrThrow(listDeliveriesQuery, req.query, 'query')));
  });
  return r;
}
