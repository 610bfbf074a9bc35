import type { IncomingMessage, ServerResponse } from 'node:http';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { dashboardApiDocumentation } from '../dashboard/openapi';
import { apiDocumentation } from '../openapi/document';

// Every response a route test receives is checked against the OpenAPI document (the one
// GET /api/v1/doc serves): its status must be listed for the route, its content type too, and a
// JSON body must match that status's schema, with no field the document does not name. So the
// route tests are contract tests, and the document cannot drift from the code unnoticed. The
// dashboard's own routes are held to their document (dashboard/openapi.ts, the source of the web
// app's types) the same way for their success answers; their errors, to the one error shape.

/** Served but deliberately not in the document: the queue dashboard and the docs page's assets. */
export const UNDOCUMENTED_PATHS = [/^\/admin\/queues(\/|$)/i, /^\/api\/v1\/ui\//i];
const DASHBOARD_PUBLIC_API = /^\/api\/dashboard\/teams\/[^/]+\/v1(?=\/|$)/i;
const DASHBOARD_OWN = /^\/api\/dashboard(\/|$)/i;

/* eslint-disable @typescript-eslint/no-explicit-any -- the dereferenced document is plain JSON */
interface Operation {
  template: string;
  method: string;
  matcher: RegExp;
  params: number;
  responses: Record<string, { content?: Record<string, { schema?: any }> }>;
}

export interface ObservedResponse {
  method: string;
  url: string;
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

export interface ResponseContract {
  /** What is wrong with this response according to the document; empty when it conforms. */
  problems(r: ObservedResponse): string[];
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function pathMatcher(template: string): RegExp {
  // Express matches paths case-insensitively and ignores one trailing slash.
  const pattern = template
    .split(/\{\w+\}/)
    .map(escapeRegex)
    .join('[^/]+');
  return new RegExp(`^${pattern}/?$`, 'i');
}

/** Objects the document describes field by field admit no other field: an undocumented field is drift. */
function closeObjects(schema: any, seen = new Set<unknown>()): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  if (schema.properties && schema.additionalProperties === undefined && !schema.allOf) schema.additionalProperties = false;
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) (schema[key] ?? []).forEach((s: unknown) => closeObjects(s, seen));
  for (const s of Object.values(schema.properties ?? {})) closeObjects(s, seen);
  if (schema.items) closeObjects(schema.items, seen);
  if (typeof schema.additionalProperties === 'object') closeObjects(schema.additionalProperties, seen);
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function describe(errors: ValidateFunction['errors']): string {
  return (errors ?? [])
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath || '(body)'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : ''}`,
    )
    .join('; ');
}

const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** A document's operations, a literal segment before a parameter (/contacts/bulk before /contacts/{contactId}). */
async function operationsOf(document: unknown): Promise<{ doc: any; operations: Operation[] }> {
  const doc: any = await SwaggerParser.dereference(structuredClone(document) as any);
  const operations: Operation[] = [];
  for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      operations.push({
        template,
        method: method.toUpperCase(),
        matcher: pathMatcher(template),
        params: (template.match(/\{/g) ?? []).length,
        responses: op.responses,
      });
    }
  }
  operations.sort((a, b) => a.params - b.params);
  return { doc, operations };
}

async function buildContract(): Promise<ResponseContract> {
  const { doc, operations } = await operationsOf(apiDocumentation('http://localhost'));
  const dashboard = await operationsOf(dashboardApiDocumentation('http://localhost'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date-time', (s: string) => ISO_DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)));

  const validators = new Map<unknown, ValidateFunction>();
  const validatorFor = (schema: any) => {
    let v = validators.get(schema);
    if (!v) {
      const closed = structuredClone(schema);
      closeObjects(closed);
      v = ajv.compile(closed);
      validators.set(schema, v);
    }
    return v;
  };
  const errorSchema = doc.components.schemas.Error;

  const checkJson = (schema: any, body: Buffer, where: string): string[] => {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return [`${where}: the body is not JSON: ${clip(body.toString('utf8'))}`];
    }
    const validate = validatorFor(schema);
    return validate(value) ? [] : [`${where}: ${describe(validate.errors)}; body: ${clip(JSON.stringify(value))}`];
  };

  /** The status, content type and body of an answer against one operation of a document. */
  const conforms = (op: Operation, r: ObservedResponse, media: string | undefined, where: string): string[] => {
    const { method, status, body } = r;
    const route = `${op.method} ${op.template}`;
    const response = op.responses[String(status)];
    if (!response)
      return [`${where}: status ${status} is not documented for ${route} (documented: ${Object.keys(op.responses).join(', ')})`];
    if (method === 'HEAD' || (!response.content && body.length === 0)) return [];
    const documented = response.content ?? {};
    const entry = media ? documented[media] : undefined;
    if (!entry)
      return [
        `${where}: content type ${media ?? '(none)'} is not documented for ${route} ${status} (documented: ${Object.keys(documented).join(', ') || 'no body'})`,
      ];
    return media === 'application/json' && entry.schema ? checkJson(entry.schema, body, `${where} (${route})`) : [];
  };

  return {
    problems(r) {
      const { method, url, status, contentType, body } = r;
      const requested = url.split('?')[0];
      if (UNDOCUMENTED_PATHS.some((p) => p.test(requested))) return [];
      // The dashboard's /teams/:id/v1/... is the public API's own router: held to the same document.
      const path = requested.replace(DASHBOARD_PUBLIC_API, '/api/v1');
      const asked = method === 'HEAD' ? 'GET' : method;
      const where = `${method} ${requested} → ${status}`;
      const media = contentType?.split(';')[0].trim().toLowerCase();
      // The dashboard's own routes: a success as its document says, an error in the one error shape.
      if (DASHBOARD_OWN.test(path)) {
        if (method === 'HEAD') return [];
        if (status >= 400)
          return media === 'application/json'
            ? checkJson(errorSchema, body, `${where} (dashboard)`)
            : [`${where}: an error must be JSON in the error shape, got ${media}`];
        const op = dashboard.operations.find((o) => o.method === asked && o.matcher.test(path));
        if (!op) return [`${where}: answered, but the dashboard's document has no ${asked} route for this path`];
        return conforms(op, r, media, where);
      }
      // The dashboard app (HTML, its assets) outside /api.
      if (!/^\/api(\/|$)/i.test(path) && status < 400 && media !== 'application/json') return [];
      const op = operations.find((o) => o.method === asked && o.matcher.test(path));
      if (!op) {
        // No such route: only an error in the one error shape may answer.
        if (status < 400) return [`${where}: answered, but the document has no ${asked} route for this path`];
        if (method === 'HEAD') return [];
        return media === 'application/json'
          ? checkJson(errorSchema, body, `${where} (undocumented route)`)
          : [`${where}: an error must be JSON in the error shape, got ${media}`];
      }
      // The dashboard's own gate (session 401, CSRF 403, "Team not found" 404) answers before the API's route.
      if (!op.responses[String(status)] && path !== requested && [401, 403, 404].includes(status))
        return checkJson(errorSchema, body, `${where} (dashboard gate)`);
      return conforms(op, r, media, where);
    },
  };
}

let contract: Promise<ResponseContract> | undefined;
/** The contract of the document, built once per test file. */
export function responseContract(): Promise<ResponseContract> {
  contract ??= buildContract();
  return contract;
}

type Handler = (req: IncomingMessage, res: ServerResponse, next?: unknown) => unknown;

/** Keeps a copy of what the app writes, and hands the finished response to `onResponse`. */
function observe(req: IncomingMessage, res: ServerResponse, onResponse: (r: ObservedResponse) => void): void {
  const url = req.url ?? '/'; // before express rewrites it for mounted routers
  const method = req.method ?? 'GET';
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array),
    );
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as typeof res.end;
  // A response cut short (the client left, or the stream failed after it began) has no body to judge.
  res.once('finish', () => {
    const type = res.getHeader('content-type');
    onResponse({
      method,
      url,
      status: res.statusCode,
      contentType: type === undefined ? undefined : String(type),
      body: Buffer.concat(chunks),
    });
  });
}

/**
 * The app, unchanged for its callers (supertest, app.listen, its router), but every response it
 * gives is checked against the document; what does not conform goes to `onViolation`.
 */
export function checkedAgainstDocument<App extends Handler>(
  app: App,
  contract: ResponseContract,
  onViolation: (problem: string) => void,
): App {
  return new Proxy(app, {
    apply(target, thisArg, args: Parameters<Handler>) {
      const [req, res] = args;
      observe(req, res, (r) => contract.problems(r).forEach(onViolation));
      return Reflect.apply(target, thisArg, args);
    },
  });
}
