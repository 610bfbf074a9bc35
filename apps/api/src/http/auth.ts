import type { ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { type Metrics } from '@mailrail/platform/metrics/metrics';
import { createApiKeyVerifier, TooManyAuthFailures, type AuthContext } from '@mailrail/domain/teams/api-key-auth';
import type { ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import type { ApiDeps } from '../deps';

export type { AuthContext };

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth: AuthContext;
    }
  }
}

/** What the check reads of a request: express's, or node's bare one as the accept lane hands it on. */
type AuthRequest = Pick<Request, 'headers' | 'ip' | 'socket' | 'originalUrl'>;

/**
 * Bearer API key check (the verification itself, its caches and the per-IP failure limit are in
 * core's api-key-auth.ts, shared with the SMTP relay). A SENDING key reaches only the email routes.
 */
export interface Auth {
  /** The request's key context, or a throw (ApiError; TooManyAuthFailures carries Retry-After). */
  authenticate: (req: AuthRequest) => Promise<AuthContext>;
  middleware: RequestHandler;
  /** The verified keys this app holds: the app's own revocations evict them (announceApiKeyRevocations). */
  apiKeyCache: ApiKeyCache;
  close: () => void;
}

// The key context of each authenticated request, kept even when the request is then refused (a
// SENDING key off the email routes), for the request log (request-log/record-requests.ts).
const authenticated = new WeakMap<object, AuthContext>();

/** The key context the request authenticated with, if it got that far. */
export const authOf = (req: object): AuthContext | undefined => authenticated.get(req);

export function createAuth(deps: ApiDeps, metrics?: Metrics): Auth {
  const verifier = createApiKeyVerifier(deps, metrics);

  const authenticate = async (req: AuthRequest): Promise<AuthContext> => {
    const header = req.headers.authorization;
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m) throw new ApiError('UNAUTHORIZED', 'No Authorization header provided');
    const auth = await verifier.verify(m[1], req.ip ?? req.socket.remoteAddress ?? 'unknown');
    authenticated.set(req, auth);
    // SENDING keys reach only the email routes; the path check here covers every future route.
    if (auth.permission === 'SENDING' && !/^\/api\/v1\/emails(\/|$)/.test(req.originalUrl.split('?')[0])) {
      throw new ApiError('FORBIDDEN', 'This API key has SENDING permission and can only send emails');
    }
    return auth;
  };

  const middleware: RequestHandler = async (req, res, next) => {
    try {
      req.auth = await authenticate(req);
      next();
    } catch (err) {
      next(withRetryAfter(res, err));
    }
  };

  return { authenticate, middleware, apiKeyCache: verifier, close: () => verifier.close() };
}

/** Sets Retry-After when `err` is a per-IP refusal; answers `err` for the error handler. */
export function withRetryAfter(res: ServerResponse, err: unknown): unknown {
  if (err instanceof TooManyAuthFailures) res.setHeader('Retry-After', String(err.retryAfter));
  return err;
}
