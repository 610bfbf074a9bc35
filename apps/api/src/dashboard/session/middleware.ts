import type { RequestHandler } from 'express';
import { ApiError } from '@mailrail/core/errors/api-error';
import type { ApiDeps } from '../../deps';
import { clearSessionCookie, readSessionCookie } from './cookie';
import { csrfTokenError, csrfTokenMatches } from './csrf';
import { findLiveSession, type DashboardSession } from './sessions';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The dashboard session of the request, set by loadSession when the cookie is live. */
      session?: DashboardSession;
    }
  }
}

export const notSignedIn = () => new ApiError('UNAUTHORIZED', 'Not signed in, or the session has ended');

/** Sets req.session from the cookie when it names a live session; a dead cookie is cleared. */
export function loadSession(deps: ApiDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const token = readSessionCookie(req);
      if (token) {
        const session = await findLiveSession(deps, token);
        if (session) req.session = session;
        else clearSessionCookie(res, deps.config);
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** 401 without a session; 403 for a state-changing request without the session's CSRF token. */
export const requireSession: RequestHandler = (req, _res, next) => {
  if (!req.session) return next(notSignedIn());
  if (!csrfTokenMatches(req, req.session.csrfToken)) return next(csrfTokenError());
  next();
};

/** The signed-in session (after requireSession). */
export function sessionOf(req: Express.Request): DashboardSession {
  if (!req.session) throw notSignedIn();
  return req.session;
}
