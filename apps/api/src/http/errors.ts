import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from '@mailrail/platform/log/logger';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { isUnavailable } from '@mailrail/domain/errors/unavailable';
import { writeJson } from './json-response';
import { malformedPathError } from './unsafe-text';
import { BudgetFull } from '@mailrail/platform/budgets/budget-gate';
import { noteErrorForRequestLog } from '../request-log/record-requests';

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError('NOT_FOUND', `Route ${req.method} ${req.path} not found`));
};

// zlib's own codes (gzip/deflate Z_DATA_ERROR..., brotli ERR__ERROR_FORMAT_..., zstd ZSTD_error_...).
const DECOMPRESSION_ERROR = /^(Z_|ERR__ERROR_|ZSTD_)/;

// body-parser reports its failures with a `type`; map them to the documented error shape. A body
// that does not decode as its Content-Encoding comes without one: zlib's error, given status 400.
type BodyParserError = { type?: string; status?: number; code?: unknown } | null | undefined;

function fromBodyParser(err: BodyParserError): ApiError | null {
  if (!err) return null;
  if (err.type === undefined && err.status === 400 && typeof err.code === 'string' && DECOMPRESSION_ERROR.test(err.code)) {
    return new ApiError('BAD_REQUEST', 'Request body is not valid for its Content-Encoding');
  }
  switch (err.type) {
    case 'entity.parse.failed':
      return new ApiError('BAD_REQUEST', 'Malformed JSON in request body');
    case 'entity.too.large':
      return new ApiError('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('BAD_REQUEST', 'Unsupported request body encoding');
    case 'request.aborted':
      return new ApiError('BAD_REQUEST', 'Request aborted');
    default:
      return null;
  }
}

/**
 * Every error as the documented JSON shape. It reads only the request's logger and writes the bare
 * node response, so the accept lane (which answers before express) uses it as the routes do.
 */
export function errorHandler(err: unknown, req: { log?: Logger }, res: ServerResponse, _next: unknown): void {
  let apiError: ApiError;
  const parserError = err instanceof ApiError ? null : fromBodyParser(err as BodyParserError);
  if (err instanceof ApiError) apiError = err;
  else if (parserError) apiError = parserError;
  // express throws a URIError when a route parameter's percent-encoding is malformed (%ff%fe).
  else if (err instanceof URIError) apiError = malformedPathError();
  // A heavy operation over its budget (docs/security.md, "Resource budgets"): the team's own limit
  // is the team's to wait for (429), the global one is the server's (503); both are retried.
  else if (err instanceof BudgetFull) {
    apiError = new ApiError(err.scope === 'team' ? 'RATE_LIMITED' : 'SERVICE_UNAVAILABLE', err.message);
    res.setHeader('Retry-After', '1');
  } else if (isUnavailable(err)) {
    req.log?.warn({ err }, 'dependency unavailable');
    apiError = new ApiError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable, retry shortly');
    res.setHeader('Retry-After', '1');
  } else {
    req.log?.error({ err }, 'unhandled error');
    apiError = new ApiError('INTERNAL_SERVER_ERROR', 'something unexpected happened');
  }
  if (res.headersSent) return;
  noteErrorForRequestLog(res, apiError);
  writeJson(res, apiError.status, apiError.toBody());
}
