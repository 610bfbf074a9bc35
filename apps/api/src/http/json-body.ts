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
// Routes whose JSON body is read by the route itself, with readJsonBody, once it has taken its
// place in a budget: a campaign preview (up to CAMPAIGN_PREVIEW_MAX_MB of HTML or editor JSON)
// refused for a full budget is then refused unparsed, without its parse costing the event loop.
const LATE_JSON_ROUTE = /\/campaigns\/[^/]+\/preview\/?$/;
const readsJsonLate = (req: { method: string; path: string }) => req.method === 'POST' && LATE_JSON_ROUTE.test(req.path);

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
  return [requireJson, ...jsonParsers(limit, (req) => !readsJsonLate(req as express.Request))];
}

function jsonParsers(limit: string, when: (req: express.Request) => boolean): RequestHandler[] {
  return [
    express.json({ limit, strict: false, type: (req) => when(req as express.Request) && isJsonType(req.headers['content-type']) }),
    rejectUnsafeBody,
  ];
}

/** Reads and checks the JSON body of a route that jsonBody left unread (LATE_JSON_ROUTE), as jsonBody would have. */
export async function readJsonBody(req: express.Request, res: express.Response, limit: string): Promise<void> {
  for (const handler of jsonParsers(limit, () => true)) {
    await new Promise<void>((resolve, reject) => void handler(req, res, (err?: unknown) => (err ? reject(err as Error) : resolve())));
  }
}
