import express, { type RequestHandler } from 'express';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { rejectUnsafeBody } from './unsafe-text';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i;
/** Is this Content-Type JSON (application/json, application/<x>+json), whatever its parameters? */
export const isJsonType = (contentType: string | undefined): boolean => JSON_TYPE.test(contentType ?? '');
/**
 * JSON bodies only: a body of another Content-Type is a 400, not silently an empty object; a string
 * with a NUL or a lone surrogate anywhere in it is a 400 too (see unsafe-text.ts). The public API's
 * router puts it before each declared route except those that read their own body (`ownBody` in
 * api-route.ts: a CSV upload, a preview read once it has its budget place).
 */
export function jsonBody(limit: string): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      return next(new ApiError('BAD_REQUEST', 'Content-Type must be application/json'));
    }
    next();
  };
  return [requireJson, ...jsonParsers(limit)];
}

function jsonParsers(limit: string): RequestHandler[] {
  return [express.json({ limit, strict: false, type: (req) => isJsonType(req.headers['content-type']) }), rejectUnsafeBody];
}

/** Reads and checks the JSON body of a `late-json` route, which jsonBody left unread, as jsonBody would have. */
export async function readJsonBody(req: express.Request, res: express.Response, limit: string): Promise<void> {
  for (const handler of jsonParsers(limit)) {
    await new Promise<void>((resolve, reject) => void handler(req, res, (err?: unknown) => (err ? reject(err as Error) : resolve())));
  }
}
