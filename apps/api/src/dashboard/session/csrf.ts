import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { ApiError } from '@mailrail/domain/errors/api-error';
import type { Config } from '@mailrail/platform/config/schema';

// CSRF defence for the dashboard (docs/dashboard.md): besides SameSite=Lax cookies, every
// state-changing request must come from our own origin (Origin, else Referer) and, once there is
// a session, carry X-CSRF-Token equal to the session's token, which another site cannot read.

export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const isStateChanging = (req: Request) => !SAFE_METHODS.has(req.method);

const csrfFailed = (why: string) => new ApiError('FORBIDDEN', `CSRF check failed: ${why}`);

function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** Origins a dashboard request may come from: PUBLIC_URL's, and the request's own (its Host, as the browser sent it). */
function allowedOrigins(req: Request, config: Pick<Config, 'PUBLIC_URL'>): string[] {
  const own = req.headers.host ? originOf(`${req.protocol}://${req.headers.host}`) : null;
  return [originOf(config.PUBLIC_URL), own].filter((o): o is string => o !== null);
}

/** Refuses a state-changing request that does not come from the dashboard's own origin. */
export function requireSameOrigin(config: Pick<Config, 'PUBLIC_URL'>): RequestHandler {
  return (req, _res, next) => {
    if (!isStateChanging(req)) return next();
    const origin = req.headers.origin;
    const referer = req.headers.referer;
    const claimed =
      origin !== undefined ? (origin === 'null' ? null : originOf(origin)) : referer !== undefined ? originOf(referer) : undefined;
    if (claimed === undefined) return next(csrfFailed('the request has no Origin header'));
    if (claimed === null || !allowedOrigins(req, config).includes(claimed))
      return next(csrfFailed('the request comes from another origin'));
    next();
  };
}

/** X-CSRF-Token must equal the session's token on every state-changing request of a session. */
export function csrfTokenMatches(req: Request, sessionCsrfToken: string): boolean {
  if (!isStateChanging(req)) return true;
  const sent = req.headers[CSRF_HEADER];
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(sessionCsrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

export const csrfTokenError = () => csrfFailed('the X-CSRF-Token header is missing or wrong');
