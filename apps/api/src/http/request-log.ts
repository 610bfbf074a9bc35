import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import pinoHttp from 'pino-http';
import type { Logger } from '@mailrail/core';

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
      req: (req) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res) => ({ statusCode: res.statusCode }),
    },
  });
}
