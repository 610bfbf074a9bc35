import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { RequestHandler, Router } from 'express';
import { safeEqualHex, hmacHex } from '@mailrail/core';
import type { ApiDeps } from '../deps';
import { observedQueues } from './metrics';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * Bull Board at /admin/queues, behind ADMIN_TOKEN (a bearer header, or ?token= once, which sets a
 * cookie so the dashboard's own asset and API calls pass). Absent token: the dashboard is off.
 */
export function queueDashboard(deps: ApiDeps): { guard: RequestHandler; router: Router } | null {
  const token = deps.config.ADMIN_TOKEN;
  if (!token) return null;
  const adapter = new ExpressAdapter();
  adapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({ queues: observedQueues(deps).map((name) => new BullMQAdapter(deps.queues.get(name))), serverAdapter: adapter });

  // Compare digests so the check takes the same time whatever the guess.
  const expected = hmacHex(deps.config.SECRET, token);
  const matches = (candidate: string | undefined) => candidate !== undefined && safeEqualHex(hmacHex(deps.config.SECRET, candidate), expected);
  const guard: RequestHandler = (req, res, next) => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const cookie = /(?:^|;\s*)mailrail_admin=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const query = typeof req.query.token === 'string' ? req.query.token : undefined;
    if (matches(bearer) || matches(cookie && decodeURIComponent(cookie))) return next();
    if (matches(query)) {
      res.cookie('mailrail_admin', query, { httpOnly: true, sameSite: 'strict', path: QUEUE_DASHBOARD_PATH });
      return next();
    }
    res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'Admin token required' } });
  };
  return { guard, router: adapter.getRouter() as Router };
}
