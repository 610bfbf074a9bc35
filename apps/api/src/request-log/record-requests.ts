import type { ServerResponse } from 'node:http';
import type { ApiError } from '@mailrail/domain/errors/api-error';
import { redactRequestBody } from '@mailrail/domain/request-log/redact-body';
import type { RequestLogWriter } from '@mailrail/domain/request-log/request-log-writer';
import { authOf } from '../http/auth';

// Every /api/v1 request of a known team goes to the team's request log (docs/request-log.md):
// read when the response closes, handed to the batched writer, never awaited. A request refused
// before its key is known (no key: 401; a wrong one: 403) has no team and is not logged: a table an
// attacker's guesses could fill is what the per-IP failure limit is there to avoid.

const errors = new WeakMap<ServerResponse, ApiError>();

/** Called by the error handler: the code and message the response carries. */
export function noteErrorForRequestLog(res: ServerResponse, error: ApiError): void {
  errors.set(res, error);
}

/** What is read of a request: express's, or node's bare one as the accept lane hands it on. */
interface RecordedRequest {
  method?: string;
  originalUrl: string;
  body?: unknown;
}

export type RecordRequest = (req: RecordedRequest, res: ServerResponse, next: () => void) => void;

export function recordRequests(writer: RequestLogWriter): RecordRequest {
  return (req, res, next) => {
    const start = performance.now();
    const createdAt = new Date();
    res.once('close', () => {
      const auth = authOf(req);
      if (!auth) return;
      const error = errors.get(res);
      const q = req.originalUrl.indexOf('?');
      writer.record({
        teamId: auth.teamId,
        apiKeyId: auth.apiKeyId,
        source: 'api',
        method: req.method ?? 'GET',
        path: q < 0 ? req.originalUrl : req.originalUrl.slice(0, q),
        status: res.writableFinished ? res.statusCode : 499,
        errorCode: error?.code ?? null,
        errorMessage: error?.message ?? null,
        durationMs: performance.now() - start,
        requestBody: redactRequestBody(req.body),
        createdAt,
      });
    });
    next();
  };
}
