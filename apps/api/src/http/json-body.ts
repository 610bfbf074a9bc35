import express, { type RequestHandler } from 'express';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { rejectUnsafeBody } from './unsafe-text';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i;
/** Is this Content-Type JSON (application/json, application/<x>+json), whatever its parameters? */
export const isJsonType = (contentType: string | undefined): boolean => JSON_TYPE.test(contentType ?? '');
// Routes that read a body of another type themselves: a CSV import's upload (multipart, streamed
// into PostgreSQL) and preview (text/csv). Matched under /api/v1 and the dashboard's /v1 alike.
const OWN_BODY_ROUTE = /\/contactBooks\/[^/]+\/imports(?:\/preview)?\/?$/;
const readsOwnBody = (req: { method: string; path: string }) => req.method === 'POST' && OWN_BODY_ROUTE.test(req.path);

/**
 * JSON bodies only: a body of another Content-Type is a 400, not silently an empty object; a string
 * with a NUL or a lone surrogate anywhere in it is a 400 too (see unsafe-text.ts).
 */
export function jsonBody(limit: string): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !readsOwnBody(req) && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      return next(new ApiError('BAD_REQUEST', 'Content-Type must be application/json'));
    }
    next();
  };
  return [
    requireJson,
    express.json({ limit, strict: false, type: (req) => JSON_TYPE.test(String(req.headers['content-type'] ?? '')) }),
    rejectUnsafeBody,
  ];
}
