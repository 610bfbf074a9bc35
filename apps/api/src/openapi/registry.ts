import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z, type ZodType } from 'zod';

// The OpenAPI document is generated from the zod schemas the routes validate with: each
// capability's openapi.ts registers its routes here with those same schemas. A test fails when an
// Express route has no entry.

export type DocRegistry = OpenAPIRegistry;

export const errorBody = z
  .object({
    error: z.object({
      code: z.enum(['BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'NOT_UNIQUE', 'PAYLOAD_TOO_LARGE', 'RATE_LIMITED', 'INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE']),
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
  409: 'Conflict (NOT_UNIQUE)',
  413: 'Request body too large',
  429: 'Rate limit exceeded (see Retry-After)',
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
  /** The 200 answer; `contentType` for non-JSON answers (HTML pages). */
  response: ZodType;
  contentType?: string;
  /** A valid request body; the OpenAPI test validates it against the document. */
  example?: unknown;
  /** Routes outside bearer auth (probes, docs, SNS, public pages). */
  public?: boolean;
  errors?: number[];
}

export const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');

export function documentRoute(registry: DocRegistry, doc: RouteDoc): void {
  const errors = doc.errors ?? (doc.public ? [400] : [400, 401, 403, 404, 429]);
  registry.registerPath({
    method: doc.method,
    path: toOpenApiPath(doc.path),
    tags: [doc.tag],
    summary: doc.summary,
    description: doc.description,
    security: doc.public ? [] : [{ bearerAuth: [] }],
    request: {
      ...(doc.params ? { params: doc.params } : {}),
      ...(doc.query ? { query: doc.query } : {}),
      ...(doc.headers ? { headers: doc.headers } : {}),
      ...(doc.body ? { body: { required: true, content: { 'application/json': { schema: doc.body, ...(doc.example !== undefined ? { example: doc.example } : {}) } } } } : {}),
    },
    responses: {
      200: { description: 'Success', content: { [doc.contentType ?? 'application/json']: { schema: doc.response } } },
      ...Object.fromEntries(errors.map((s) => [s, { description: errorDescriptions[s] ?? 'Error', content: { 'application/json': { schema: errorBody } } }])),
    },
  });
}

export function generateOpenApiDocument(register: ((r: DocRegistry) => void)[], serverUrl: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', description: 'API key `us_<clientId>_<secret>`' });
  for (const fn of register) fn(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'mailrail API',
      version: '1.0.0',
      description: 'Email sending and audience API on Amazon SES, wire-compatible with the useSend v1 public API.',
    },
    servers: [{ url: serverUrl }],
  });
}
