import type * as BullBoardApi from '@bull-board/api';
import type * as BullBoardBullMq from '@bull-board/api/bullMQAdapter';
import type * as BullBoardExpress from '@bull-board/express';
import type { RequestHandler } from 'express';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';
import { safeEqualHex, hmacHex } from '@mailrail/platform/crypto/secrets';
import type { ApiDeps } from '../deps';
import { observedQueues } from './metrics';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/** How long a dashboard session (the cookie set after ?token=) lasts. */
export const ADMIN_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const SESSION_COOKIE = 'mailrail_admin';
// "<expiry ms>.<hmac>": the cookie never holds the token, expires by itself, and changing
// ADMIN_TOKEN or SECRET ends every session. Anything else in the cookie counts as no cookie.
const SESSION_VALUE = /^(\d{1,15})\.([0-9a-f]{64})$/;

// Bull Board with its UI server (lodash, ejs, valibot: about 2 MB of source) is loaded by the
// first request that passes the guard, not at start-up: most processes never serve it.
const bullBoardApi = loadOnFirstUse<typeof BullBoardApi>('@bull-board/api');
const bullBoardBullMq = loadOnFirstUse<typeof BullBoardBullMq>('@bull-board/api/bullMQAdapter');
const bullBoardExpress = loadOnFirstUse<typeof BullBoardExpress>('@bull-board/express');

/**
 * Bull Board at /admin/queues, behind ADMIN_TOKEN: a bearer header, or ?token= once, which answers
 * with a redirect to the same page without the token and a signed session cookie (HttpOnly,
 * SameSite=Strict, Secure when PUBLIC_URL is https) so the dashboard's own asset and API calls
 * pass. Absent token: the dashboard is off.
 */
export function queueDashboard(deps: ApiDeps): { guard: RequestHandler; router: RequestHandler } | null {
  const token = deps.config.ADMIN_TOKEN;
  if (!token) return null;
  let board: RequestHandler | undefined;
  const router: RequestHandler = (req, res, next) => {
    if (!board) {
      const adapter = new (bullBoardExpress().ExpressAdapter)();
      adapter.setBasePath(QUEUE_DASHBOARD_PATH);
      const queues = observedQueues(deps).map((name) => new (bullBoardBullMq().BullMQAdapter)(deps.queues.get(name)));
      bullBoardApi().createBullBoard({ queues, serverAdapter: adapter });
      board = adapter.getRouter() as RequestHandler;
    }
    board(req, res, next);
  };

  // Compare digests so the check takes the same time whatever the guess.
  const expected = hmacHex(deps.config.SECRET, token);
  const matches = (candidate: string | undefined) =>
    candidate !== undefined && safeEqualHex(hmacHex(deps.config.SECRET, candidate), expected);
  const sessionMac = (expiresAt: string) => hmacHex(deps.config.SECRET, `admin-session:${expiresAt}:${expected}`);
  const validSession = (value: string | undefined) => {
    const m = value ? SESSION_VALUE.exec(value) : null;
    return !!m && Number(m[1]) > deps.clock.now().getTime() && safeEqualHex(m[2], sessionMac(m[1]));
  };
  const secure = deps.config.PUBLIC_URL.startsWith('https:');

  const guard: RequestHandler = (req, res, next) => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const cookie = /(?:^|;) *mailrail_admin=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
    const query = typeof req.query.token === 'string' ? req.query.token : undefined;
    if (matches(bearer) || validSession(cookie)) return next();
    if (matches(query)) {
      const expiresAt = String(deps.clock.now().getTime() + ADMIN_SESSION_TTL_MS);
      res.cookie(SESSION_COOKIE, `${expiresAt}.${sessionMac(expiresAt)}`, {
        httpOnly: true,
        sameSite: 'strict',
        secure,
        path: QUEUE_DASHBOARD_PATH,
        maxAge: ADMIN_SESSION_TTL_MS,
      });
      // The same page without the token, so it stays out of the history and Referer headers.
      const url = new URL(req.originalUrl, 'http://dashboard.invalid');
      url.searchParams.delete('token');
      res.redirect(303, url.pathname + url.search);
      return;
    }
    res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'Admin token required' } });
  };
  return { guard, router };
}
