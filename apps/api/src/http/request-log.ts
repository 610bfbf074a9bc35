import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { Logger } from '@mailrail/platform/log/logger';

// Query parameters whose value is a credential: the queue dashboard's ?token=, signed links'
// sig/signature, anything called key, secret, password, auth, session. One alternation: linear.
const SECRET_PARAM = /token|secret|sig|passw|key|auth|credential|session|code/i;
export const REDACTED = '[REDACTED]';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The process logger with this request's id (see requestLogger). */
      log: Logger;
    }
  }
}

/** What the log reads of a request, so node's bare request (the accept lane's) serves as well as express's. */
type LoggedRequest = Pick<Request, 'headers' | 'method' | 'originalUrl'>;
/** A middleware (express calls it with its request) that the accept lane calls too. */
export type RequestLogger = (req: LoggedRequest, res: ServerResponse, next: () => void) => void;

/** The URL as it may be logged: the value of every credential-like query parameter replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // A malformed name is judged as written.
      }
      return eq >= 0 && SECRET_PARAM.test(name) ? `${rawName}=${REDACTED}` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

function requestId(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
}

/**
 * One JSON log line per request (at info; warn for a 4xx, error for a 5xx or an aborted request),
 * and `req.log` carrying the request id on every line, made only if a handler logs. Written by
 * hand rather than with pino-http, whose per-request child logger and serializers cost about a
 * fifth of the CPU of a POST /api/v1/emails (docs/emails.md, "Performance").
 */
export function requestLogger(log: Logger): RequestLogger {
  const logRequests = log.isLevelEnabled('info');
  return (req, res, next) => {
    const id = requestId(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', id);
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, get: () => (child ??= log.child({ reqId: id })) });
    if (logRequests) {
      const start = performance.now();
      res.once('close', () => {
        const line = {
          // Never headers (Authorization, cookies), and no credential from the query string.
          req: { id, method: req.method, url: redactUrl(req.originalUrl) },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - start),
        };
        if (!res.writableFinished) log.error(line, 'request aborted');
        else if (res.statusCode >= 500) log.error(line, 'request errored');
        else if (res.statusCode >= 400) log.warn(line, 'request completed');
        else log.info(line, 'request completed');
      });
    }
    next();
  };
}
