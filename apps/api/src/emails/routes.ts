import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { getEmail } from './get-email';
import { readIdempotencyKey } from './idempotency';
import { listEmailsQuery, streamEmailList } from './list-emails';
import { cancelEmail, rescheduleEmail } from './schedule-email';
import { batchPayload, emailIdParam, rescheduleBody, sendEmailPayload } from './schemas';
import { createSendContext, sendEmails, type SendContext } from './send-emails';

export function emailRoutes(deps: ApiDeps, ctx: SendContext = createSendContext(deps)): Router {
  const r = Router();

  r.post('/', async (req, res) => {
    const payload = parseOrThrow(sendEmailPayload, req.body);
    const idempotencyKey = readIdempotencyKey(req.headers['idempotency-key']);
    const [emailId] = await sendEmails(ctx, req.auth, { payloads: [payload], batch: false, idempotencyKey, body: payload });
    res.json({ emailId });
  });

  r.post('/batch', async (req, res) => {
    const payloads = parseOrThrow(batchPayload, req.body);
    const idempotencyKey = readIdempotencyKey(req.headers['idempotency-key']);
    const ids = await sendEmails(ctx, req.auth, { payloads, batch: true, idempotencyKey, body: payloads });
    res.json({ data: ids.map((emailId) => ({ emailId })) });
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
