import type { RequestHandler } from 'express';
import { ApiError } from '@mailrail/domain/errors/api-error';

// PostgreSQL refuses NUL in text, and a lone UTF-16 surrogate has no UTF-8 form: either one that
// reached a query was a 500 on every route. They are refused here, once for all routes, as a 400.
// isWellFormed (Node 20) is false only for a surrogate that stands alone (emoji pass); both
// checks are native scans, about 3 ms for a 50 MB attachment body (a regex took 75 ms).
const isUnsafeText = (s: string) => s.includes('\u0000') || !(s as string & { isWellFormed(): boolean }).isWellFormed();
const UNSAFE_MESSAGE = 'must not contain NUL (\\u0000) or unpaired surrogate characters';

type IssuePath = (string | number)[];

// Each entry points at its parent instead of carrying a copy of its path: copying made a walk of
// a 100,000-deep JSON array quadratic (130 s of blocked event loop). The path is built on a hit.
interface Visit {
  value: unknown;
  key: string | number | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): IssuePath {
  const path: IssuePath = [];
  for (let v: Visit | null = visit; v && v.key !== null; v = v.parent) path.push(v.key);
  return path.reverse();
}

/** The path of the first string (value or object key) holding a NUL or a lone surrogate. */
export function findUnsafeText(value: unknown): IssuePath | null {
  const stack: Visit[] = [{ value, key: null, parent: null }];
  while (stack.length) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (typeof v === 'string') {
      if (isUnsafeText(v)) return pathOf(visit);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ value: v[i], key: i, parent: visit });
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        if (isUnsafeText(key)) return [...pathOf(visit), key];
        stack.push({ value: item, key, parent: visit });
      }
    }
  }
  return null;
}

function unsafeTextError(what: string, path: IssuePath): ApiError {
  const where = path.length ? `${path.join('.')}: ` : '';
  return new ApiError('BAD_REQUEST', `Invalid ${what}: ${where}${UNSAFE_MESSAGE}`, [{ path, message: UNSAFE_MESSAGE }]);
}

export function malformedPathError(): ApiError {
  return new ApiError('BAD_REQUEST', 'Invalid path: malformed percent-encoding', [{ path: [], message: 'malformed percent-encoding' }]);
}

/**
 * Every path segment must percent-decode (express would throw a URIError, a 500, when a route
 * parameter does not) and, like every query value, be free of NUL and lone surrogates.
 * Mounted before all routes.
 */
export const rejectUnsafeUrl: RequestHandler = (req, _res, next) => {
  for (const segment of req.path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return next(malformedPathError());
    }
    if (isUnsafeText(decoded)) return next(unsafeTextError('path', []));
  }
  const inQuery = findUnsafeText(req.query);
  if (inQuery) return next(unsafeTextError('query', inQuery));
  next();
};

/** The same rule for a parsed JSON body: every string and every key, at any depth (throws the 400). */
export function assertSafeBody(body: unknown): void {
  const inBody = findUnsafeText(body);
  if (inBody) throw unsafeTextError('request body', inBody);
}

/**
 * assertSafeBody for a body JSON.parse read from `text`, without the walk in the common case:
 * JSON can spell a NUL or a lone surrogate only as a `\u` escape (a raw control character is not
 * JSON), so the parsed value of a well-formed text with no `\u` in it holds neither.
 */
export function assertSafeJsonBody(text: string, body: unknown): void {
  if (!text.includes('\\u') && !isUnsafeText(text)) return;
  assertSafeBody(body);
}

export const rejectUnsafeBody: RequestHandler = (req, _res, next) => {
  try {
    assertSafeBody(req.body);
  } catch (err) {
    return next(err);
  }
  next();
};
