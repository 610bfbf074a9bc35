import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { getEmail } from './get-email';
import { listEmailsQuery, streamEmailList } from './list-emails';
import { cancelEmail, rescheduleEmail } from './schedule-email';
import { emailIdParam, rescheduleBody } from './schemas';
import { acceptBatch, acceptEmail, type SendContext } from './send-emails';

export function emailRoutes(deps: ApiDeps, ctx: SendContext): Router {
  const r = Router();

  // The API's own POST / and /batch are answered ahead of the router by accept-lane.ts; these serve
  // what it hands on (the dashboard's team routes, unusual bodies) with the same functions.
  r.post('/', async (req, res) => {
    res.json(await acceptEmail(ctx, req.auth, req.body, req.headers['idempotency-key']));
  });

  r.post('/batch', async (req, res) => {
    res.json(await acceptBatch(ctx, req.auth, req.body, req.headers['idempotency-key']));
  });

  r.get('/', async (req, res) => {
    const q = parseOrThrow(listEmailsQuery, req.query, 'query');
    // Streamed: a page may hold 100 bodies of up to 40 MB each.
    await streamEmailList(deps, req.auth, q, res);
  });

  r.get('/:emailId', async (req, res) => {
    const { emailId } = parseOrThrow(emailIdParam, req.params, 'path');
    // One email is answered whole (its bodies are bounded by the send limit). While res.json runs,
    // the row, its JSON text and express's Buffer of it (for Content-Length and ETag) are alive
    // together, about three times the body; afterwards only the Buffer being sent remains.
    res.json(await getEmail(deps, req.auth, emailId));
  });

  r.patch('/:emailId', async (req, res) => {
    const { emailId } = parseOrThrow(emailIdParam, req.params, 'path');
    const { scheduledAt } = parseOrThrow(rescheduleBody, req.body ?? {});
    res.json(await rescheduleEmail(deps, req.auth, emailId, scheduledAt));
  });

  r.post('/:emailId/cancel', async (req, res) => {
    const { emailId } = parseOrThrow(emailIdParam, req.params, 'path');
    res.json(await cancelEmail(deps, req.auth, emailId));
  });

  return r;
}
