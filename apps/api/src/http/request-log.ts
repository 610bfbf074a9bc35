import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import pinoHttp from 'pino-http';
import type { Logger } from '@mailrail/platform/log/logger';

// Query parameters whose value is a credential: the queue dashboard's ?token=, signed links'
// sig/signature, anything called key, secret, password, auth, session. One alternation: linear.
const SECRET_PARAM = /token|secret|sig|passw|key|auth|credential|session|code/i;
export const REDACTED = '[REDACTED]';

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
 * One JSON log line per request, and `req.log` carrying the request id on every line. When the
 * level is above info no request line would be written, so the per-request child logger is only
 * made if a handler logs (warnings and errors still carry the request id).
 */
export function requestLogger(log: Logger): RequestHandler {
  if (!log.isLevelEnabled('info')) {
    return (req, res, next) => {
      const id = requestId(req.headers['x-request-id']);
      res.setHeader('X-Request-Id', id);
      let child: Logger | undefined;
      Object.defineProperty(req, 'log', { configurable: true, get: () => (child ??= log.child({ reqId: id })) });
      next();
    };
  }
  return pinoHttp({
    logger: log,
    genReqId: (req, res) => {
      const id = requestId(req.headers['x-request-id']);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    serializers: {
      // Never headers (Authorization, cookies), and no credential from the query string.
      req: (req) => ({ id: req.id, method: req.method, url: redactUrl(String(req.url)) }),
      res: (res) => ({ statusCode: res.statusCode }),
    },
  });
}
