import type { IncomingMessage, ServerResponse } from 'node:http';
import bytes from 'bytes';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { BODY_LIMIT_PATTERN } from '@mailrail/platform/config/schema';
import type { Logger } from '@mailrail/platform/log/logger';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import { withRetryAfter, type Auth } from '../http/auth';
import type { errorHandler } from '../http/errors';
import { isJsonType } from '../http/json-body';
import { writeJson } from '../http/json-response';
import type { ApplyRateLimit } from '../http/rate-limit';
import { assertSafeJsonBody } from '../http/unsafe-text';
import type { RequestLogger } from '../http/request-log';
import type { RecordRequest } from '../request-log/record-requests';
import { recordRouteMetrics } from '../ops/metrics';
import { parseRouteBody, type ApiRoute } from '../http/api-route';
import { sendBatchRoute, sendEmailRoute } from './routes';
import type { SendContext } from './send-emails';

// POST /api/v1/emails and /api/v1/emails/batch, the API's hot routes, answered by the server's
// request listener before express sees the request: no app, router layers, prototype swap,
// express.json or res.json (docs/emails.md, "Performance"). The steps are the same, in the same
// order, by the same functions: request log and metrics, API key (auth.ts), per-team rate
// (rate-limit.ts), JSON Content-Type, body size, JSON, NUL / lone-surrogate check, then the
// routes' own declarations (routes.ts: method, path, body schema, handler), and errors through
// the app's errorHandler. Only the body is
// read by hand: one Buffer, one JSON.parse. Anything unusual (a query string, a trailing slash,
// another charset, Content-Encoding, chunked or large bodies) is left to the express app.

/** Bodies above this go the express way (streamed by body-parser): attachments, mostly. */
const LANE_MAX_BODY = 1024 * 1024;
const UTF8_PARAMS = /^;\s*charset="?utf-8"?\s*$/i;

export interface AcceptLaneDeps {
  send: SendContext;
  auth: Auth;
  rateLimit: ApplyRateLimit;
  metrics: Metrics;
  /** The app's request log middleware (request id, one line per request). */
  logRequest: RequestLogger;
  /** The team's request log (request-log/record-requests.ts). */
  recordRequest: RecordRequest;
  errorHandler: typeof errorHandler;
  /** The client's address as express's req.ip reads it (the app's trust proxy setting). */
  clientAddress: (req: IncomingMessage) => string | undefined;
  /** BODY_LIMIT ("55mb"). */
  bodyLimit: string;
}

/** BODY_LIMIT in bytes, read by the parser body-parser uses (`bytes`), in the form the configuration accepts. */
export function bodyLimitBytes(limit: string): number {
  const n = BODY_LIMIT_PATTERN.test(limit) ? bytes.parse(limit) : null;
  if (n === null) throw new Error(`BODY_LIMIT ${limit} is not <n>kb or <n>mb`);
  return n;
}

/** A UTF-8 JSON body of a known, small length, nothing that asks for a decoder: the lane's case. */
function laneTakes(req: IncomingMessage, maxBody: number): boolean {
  const type = req.headers['content-type'];
  if (!type || !isJsonType(type)) return false;
  const params = type.indexOf(';');
  if (params >= 0 && !UTF8_PARAMS.test(type.slice(params))) return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (req.headers['transfer-encoding'] !== undefined) return false;
  const length = Number(req.headers['content-length']);
  return length > 0 && length <= maxBody;
}

/** The body as one string (at most `length` bytes, the Content-Length), without a UTF-8 BOM. */
function readBody(req: IncomingMessage, length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (received !== length) return reject(new ApiError('BAD_REQUEST', 'Request aborted'));
      const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      // body-parser's decoder drops a byte order mark; JSON.parse would not.
      const bom = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
      resolve(buf.toString('utf8', bom ? 3 : 0));
    };
    const onAbort = () => {
      cleanup();
      reject(new ApiError('BAD_REQUEST', 'Request aborted'));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAbort);
      req.off('error', onAbort);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAbort);
    req.on('error', onAbort);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('BAD_REQUEST', 'Malformed JSON in request body');
  }
}

/**
 * Node's request as the lane hands it to the app's shared handlers: with the two properties they
 * read that express's router would otherwise have set (the full URL and the client address).
 */
interface LaneRequest extends IncomingMessage {
  method: string;
  originalUrl: string;
  ip: string | undefined;
  /** Set by the request log. */
  log?: Logger;
  /** The parsed body, for the team's request log. */
  body?: unknown;
}

/** Takes the request (true) or leaves it untouched for the express app (false). */
export type AcceptLane = (req: IncomingMessage, res: ServerResponse) => boolean;

/** One route the lane serves, read from its declaration once. */
interface LaneRoute {
  method: string;
  path: string;
  route: ApiRoute<SendContext>;
  handle: NonNullable<ApiRoute<SendContext>['handle']>;
  count: (req: IncomingMessage, res: ServerResponse) => void;
}

function laneRoute(route: ApiRoute<SendContext>, metrics: Metrics): LaneRoute {
  if (!route.handle || route.params || route.query || route.ownBody || route.middleware) {
    throw new Error(`the accept lane serves only JSON-body routes answered by handle (${route.path})`);
  }
  return {
    method: route.method.toUpperCase(),
    path: route.path,
    route,
    handle: route.handle,
    count: recordRouteMetrics(metrics, route.path),
  };
}

export function emailAcceptLane(deps: AcceptLaneDeps): AcceptLane {
  const maxBody = Math.min(LANE_MAX_BODY, bodyLimitBytes(deps.bodyLimit));
  const single = laneRoute(sendEmailRoute, deps.metrics);
  const batch = laneRoute(sendBatchRoute, deps.metrics);
  const noop = () => undefined;

  async function accept(req: LaneRequest, res: ServerResponse, lane: LaneRoute): Promise<void> {
    const auth = await deps.auth.authenticate(req);
    await deps.rateLimit(auth, res);
    // Authenticated and counted before a byte of the body is read, as on the express path.
    const text = await readBody(req, Number(req.headers['content-length']));
    const body = parseJson(text);
    req.body = body;
    assertSafeJsonBody(text, body);
    const input = { auth, params: undefined, query: undefined, body: parseRouteBody(lane.route, body), headers: req.headers };
    writeJson(res, lane.route.status ?? 200, await lane.handle(deps.send, input));
  }

  return (req, res) => {
    const lane = req.url === single.path ? single : req.url === batch.path ? batch : undefined;
    if (!lane || req.method !== lane.method || !laneTakes(req, maxBody)) return false;
    const laneReq = req as LaneRequest;
    laneReq.originalUrl = lane.path;
    laneReq.ip = deps.clientAddress(req);
    deps.logRequest(laneReq, res, noop);
    deps.recordRequest(laneReq, res, noop);
    lane.count(req, res);
    accept(laneReq, res, lane).catch((err: unknown) => deps.errorHandler(withRetryAfter(res, err), laneReq, res, noop));
    return true;
  };
}
