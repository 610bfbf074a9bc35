import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { errorStatus, type ErrorCode } from '@mailrail/domain/errors/api-error';
import { z, type ZodType } from 'zod';

// The OpenAPI document is generated from the zod schemas the routes validate with: each /api/v1
// route's declaration (http/api-route.ts) is registered here by documentRoutes; the routes outside
// /api/v1 (health, ops, SES notifications, subscription pages) register theirs with documentRoute.
// A test fails when an Express route has no entry.

export type DocRegistry = OpenAPIRegistry;

export const errorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      issues: z.array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });

const errorDescriptions: Record<number, string> = {
  400: 'Invalid input; `issues` names each bad field',
  401: 'Missing or malformed Authorization header',
  403: 'Invalid or revoked API key, or a key without the permission',
  404: 'Not found (or another team’s)',
  409: 'Conflict: NOT_UNIQUE, or (pages) a state the link can no longer change',
  410: 'Gone: the link has expired',
  413: 'Request body too large',
  429: 'Rate limit exceeded, or too many failed authentications from this address (see Retry-After)',
  503: 'PostgreSQL or Redis unavailable; retry',
};

export interface RouteDoc {
  method: RouteConfig['method'];
  /** Express-style path (`/api/v1/emails/:emailId`); converted to `{emailId}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: ZodType;
  /** The body's media type when it is not JSON (a CSV, a multipart form). */
  bodyContentType?: string;
  /** The success status when it is not 200 (202 for work queued). */
  status?: number;
  /** The 200 answer; `contentType` for non-JSON answers (HTML pages). */
  response: ZodType;
  contentType?: string;
  /** A valid request body; the OpenAPI test validates it against the document. */
  example?: unknown;
  /** Routes outside bearer auth (probes, docs, SNS, public pages). */
  public?: boolean;
  /** Error statuses of this route besides the shared ones (see EVERY_ROUTE_ERRORS); default 404 behind auth. */
  errors?: number[];
  /** Other answers with a body of their own (not the error shape), by status. */
  responses?: Record<number, { description: string; schema: ZodType }>;
}

// A page (text/html) explains its own errors with a page; the checks every route shares (a NUL
// in the URL, bad percent-encoding...) answer before it, in the JSON error shape.
const errorPage = z.string().describe('An HTML page explaining the error');
const errorContent = (doc: RouteDoc) => ({
  ...(doc.contentType === 'text/html' ? { 'text/html': { schema: errorPage } } : {}),
  'application/json': { schema: errorBody },
});

export const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');

// The URL checks every route shares (a NUL or an unpaired surrogate in the path or query,
// malformed percent-encoding) answer 400 before any route runs (http/unsafe-text.ts).
const EVERY_ROUTE_ERRORS = [400];
// Every /api/v1 route passes the same gate first: the API key (401, 403), the rate limits (429),
// the JSON body limit (413), and PostgreSQL or Redis being reachable (503).
const EVERY_API_ROUTE_ERRORS = [401, 403, 413, 429, 503];

/** What a document says of every route it holds: how callers authenticate, and the errors every route may answer. */
export interface DocumentStyle {
  security(doc: RouteDoc): Record<string, string[]>[];
  /** The error statuses every such route shares (a route's own `errors` are added). */
  sharedErrors(doc: RouteDoc): number[];
  /** Words for an error status where the public API's would be wrong. */
  errorDescriptions?: Record<number, string>;
}

/** The public API's document: a bearer API key on every route that is not public. */
const publicApiStyle: DocumentStyle = {
  security: (doc) => (doc.public ? [] : [{ bearerAuth: [] }]),
  sharedErrors: (doc) => (doc.public ? EVERY_ROUTE_ERRORS : [...EVERY_ROUTE_ERRORS, ...EVERY_API_ROUTE_ERRORS]),
};

export function documentRoute(registry: DocRegistry, doc: RouteDoc, style: DocumentStyle = publicApiStyle): void {
  const errors = [...new Set([...style.sharedErrors(doc), ...(doc.errors ?? (doc.public ? [] : [404]))])].sort((a, b) => a - b);
  const describeError = (s: number) => style.errorDescriptions?.[s] ?? errorDescriptions[s] ?? 'Error';
  registry.registerPath({
    method: doc.method,
    path: toOpenApiPath(doc.path),
    tags: [doc.tag],
    summary: doc.summary,
    description: doc.description,
    security: style.security(doc),
    request: {
      ...(doc.params ? { params: doc.params } : {}),
      ...(doc.query ? { query: doc.query } : {}),
      ...(doc.headers ? { headers: doc.headers } : {}),
      ...(doc.body
        ? {
            body: {
              required: true,
              content: {
                [doc.bodyContentType ?? 'application/json']: {
                  schema: doc.body,
                  ...(doc.example !== undefined ? { example: doc.example } : {}),
                },
              },
            },
          }
        : {}),
    },
    responses: {
      [doc.status ?? 200]: {
        description: doc.status === 202 ? 'Accepted: the work is queued' : 'Success',
        content: { [doc.contentType ?? 'application/json']: { schema: doc.response } },
      },
      ...Object.fromEntries(errors.map((s) => [s, { description: describeError(s), content: errorContent(doc) }])),
      ...Object.fromEntries(
        Object.entries(doc.responses ?? {}).map(([s, r]) => [
          s,
          { description: r.description, content: { 'application/json': { schema: r.schema } } },
        ]),
      ),
    },
  });
}

/** Documents each declared route (http/api-route.ts): the same declarations the router serves. */
export const documentRoutes =
  (routes: readonly RouteDoc[], style?: DocumentStyle) =>
  (registry: DocRegistry): void => {
    for (const route of routes) documentRoute(registry, route, style);
  };

/** What a key may do; apps/api/src/http/key-scope-matrix.test.ts holds every route to it. */
const API_KEY_RULES = [
  'API key `us_<clientId>_<secret>`.',
  'A `FULL` key may use every route; a `SENDING` key only `/api/v1/emails*` (403 elsewhere).',
  'A key bound to a domain acts only on that domain wherever a resource has one (emails, campaigns, domains, webhooks, analytics):',
  "another domain's resource is a 404 like another team's, a write naming another domain (`from`, `domainIds`) is a 403, lists hold only its domain's,",
  'and it cannot add domains. Contact books, contacts, custom events, templates and suppressions have no domain and are team-wide for it;',
  'double opt-in mail for contacts it adds leaves from its domain only (`doubleOptInFrom` when on that domain, else `hello@<its domain>`).',
].join(' ');

type SecurityScheme = Parameters<OpenAPIRegistry['registerComponent']>[2];

/** A document's title, description and the security schemes its routes name. */
export interface DocumentAbout {
  title: string;
  description: string;
  securitySchemes: Record<string, SecurityScheme>;
}

const publicApiAbout: DocumentAbout = {
  title: 'mailrail API',
  description: 'Email sending and audience API on Amazon SES, wire-compatible with the useSend v1 public API.',
  securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: API_KEY_RULES } },
};

export function generateOpenApiDocument(register: ((r: DocRegistry) => void)[], serverUrl: string, about: DocumentAbout = publicApiAbout) {
  const registry = new OpenAPIRegistry();
  for (const [name, scheme] of Object.entries(about.securitySchemes)) registry.registerComponent('securitySchemes', name, scheme);
  for (const fn of register) fn(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: about.title, version: '1.0.0', description: about.description },
    servers: [{ url: serverUrl }],
  });
}
