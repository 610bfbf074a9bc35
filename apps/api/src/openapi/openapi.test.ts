// The OpenAPI document is walked as plain JSON: its shape is the spec's, not a type of ours.
/* eslint-disable @typescript-eslint/no-explicit-any */
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import type { Express } from 'express';
import request from 'supertest';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { UNDOCUMENTED_PATHS } from '../testing/response-contract';
import { matchingOrder } from '../http/api-route';
import { dashboardApiDocumentation } from '../dashboard/openapi';
import { toOpenApiPath } from './registry';

let api: TestApi;
let doc: any;
beforeAll(async () => {
  api = await startTestApi();
  const res = await request(api.app).get('/api/v1/doc');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => {
  await api.close();
});

interface Layer {
  rawPath?: string | string[];
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** Every (method, path) Express will answer, read from the router stack (router 2.x keeps rawPath). */
function servedRoutes(app: Express): string[] {
  const out: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const m of Object.keys(layer.route.methods)) out.push(`${m.toUpperCase()} ${toOpenApiPath(prefix + layer.route.path)}`);
      } else if (layer.handle.stack) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return [...new Set(out)].filter((r) => !UNDOCUMENTED_PATHS.some((p) => p.test(r.split(' ')[1])));
}

const DASHBOARD_PUBLIC_API = /^\/api\/dashboard\/teams\/\{teamId\}\/v1\//;
/** The routes of this document: the dashboard's own are in the dashboard's (below); its /teams/{teamId}/v1 mounts the very routers documented here. */
const expressRoutes = (app: Express) => servedRoutes(app).filter((r) => !r.split(' ')[1].startsWith('/api/dashboard/'));
/** The dashboard's own routes (not the public API it mounts under /teams/{teamId}/v1). */
const dashboardRoutes = (app: Express) =>
  servedRoutes(app).filter((r) => r.split(' ')[1].startsWith('/api/dashboard/') && !DASHBOARD_PUBLIC_API.test(r.split(' ')[1]));

const operationsOf = (document: any) =>
  Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
  );

describe("the dashboard's OpenAPI document (the web app's generated types)", () => {
  const dashboardDoc: any = dashboardApiDocumentation('http://localhost');

  it('is a valid OpenAPI 3.1 document', async () => {
    await expect(SwaggerParser.validate(structuredClone(dashboardDoc))).resolves.toBeTruthy();
  });

  it('holds every route the dashboard serves itself, and no other: the router and the document come from the same declarations', () => {
    const served = dashboardRoutes(api.expressApp);
    const documented = operationsOf(dashboardDoc);
    expect(served.length).toBeGreaterThan(20);
    expect(served.filter((r) => !documented.includes(r))).toEqual([]);
    expect(documented.filter((r) => !served.includes(r))).toEqual([]);
  });

  it('asks for the session cookie, and X-CSRF-Token on a state-changing route, except on the sign-in and invitation forms', () => {
    const security = (method: string, path: string) => dashboardDoc.paths[path][method].security;
    expect(security('get', '/api/dashboard/teams/{teamId}/members')).toEqual([{ sessionCookie: [] }]);
    expect(security('patch', '/api/dashboard/teams/{teamId}/settings')).toEqual([{ sessionCookie: [], csrfToken: [] }]);
    expect(security('post', '/api/dashboard/auth/login')).toEqual([]);
  });
});

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('documents every route the API serves', () => {
    const documented = new Set(
      Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    );
    const routes = expressRoutes(api.expressApp);
    expect(routes.length).toBeGreaterThan(5);
    expect(routes.filter((r) => !documented.has(r))).toEqual([]);
  });

  it('serves every documented route: the router and the document come from the same declarations', () => {
    const served = new Set(expressRoutes(api.expressApp));
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.length).toBeGreaterThan(50);
    expect(documented.filter((r) => !served.has(r))).toEqual([]);
  });

  it('accepts every documented example request, and its schema rejects a wrong one', async () => {
    const deref: any = await SwaggerParser.dereference(structuredClone(doc));
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    let checked = 0;
    for (const [path, ops] of Object.entries(deref.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const media = op.requestBody?.content?.['application/json'];
        if (!media?.example) continue;
        const validate = ajv.compile(media.schema);
        expect({ route: `${method} ${path}`, valid: validate(media.example), errors: validate.errors }).toMatchObject({ valid: true });
        if (media.schema.type === 'object') expect(validate(42)).toBe(false);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

/** Every string a request may carry (body, query, path, header) that has no maxLength, as "route location.path". */
function uncappedRequestStrings(deref: any): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  const walk = (schema: any, where: string) => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    // Enums, constants, formats with an inherent bound (date-time) and patterns anchored to a bounded shape need no cap.
    const bounded = schema.enum || schema.const !== undefined || schema.format === 'date-time';
    if (types.includes('string') && !bounded && schema.maxLength === undefined) out.push(where);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) (schema[key] ?? []).forEach((s: unknown) => walk(s, where));
    for (const [name, s] of Object.entries(schema.properties ?? {})) walk(s, `${where}.${name}`);
    if (schema.items) walk(schema.items, `${where}[]`);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}{}`);
    if (schema.propertyNames) walk({ type: 'string', ...schema.propertyNames }, `${where}{key}`);
    seen.delete(schema);
  };
  for (const [path, ops] of Object.entries(deref.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const route = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) walk(p.schema, `${route} ${p.in}.${p.name}`);
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {}))
        walk((media as { schema: unknown }).schema, `${route} body(${type})`);
    }
  }
  return out;
}

describe('request length caps', () => {
  it('every string a request can carry (body, query, path, header) has a maxLength in the document', async () => {
    const deref = await SwaggerParser.dereference(structuredClone(doc));
    expect(uncappedRequestStrings(deref)).toEqual([]);
  });

  it("and in the dashboard's document", async () => {
    const deref = await SwaggerParser.dereference(structuredClone(dashboardApiDocumentation('http://localhost')) as any);
    expect(uncappedRequestStrings(deref)).toEqual([]);
  });
});

describe('docs page', () => {
  it('serves the page and its assets without auth', async () => {
    const page = await request(api.app).get('/api/v1/ui');
    expect(page.status).toBe(200);
    expect(page.text).toContain('/api/v1/ui/assets/swagger-ui-bundle.js');
    const bundle = await request(api.app).get('/api/v1/ui/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect((await request(api.app).get('/api/v1/ui/init.js')).text).toContain("url: '/api/v1/doc'");
  });
});

describe('enums in the document', () => {
  it('are the database enums and the error vocabulary themselves, never a copy', async () => {
    const { EmailStatus, CampaignStatus, DomainStatus } = await import('@mailrail/platform/db/generated/enums');
    const { errorStatus } = await import('@mailrail/domain/errors/api-error');
    const schemas = doc.components.schemas;
    expect(schemas.Email.properties.latestStatus.enum).toEqual(Object.values(EmailStatus));
    expect(schemas.Error.properties.error.properties.code.enum).toEqual(Object.keys(errorStatus));
    const text = JSON.stringify(doc);
    expect(text).toContain(JSON.stringify(Object.values(CampaignStatus)));
    expect(text).toContain(JSON.stringify(Object.values(DomainStatus)));
  });

  it('are not typed again as literal lists anywhere in the source', async () => {
    const { productionSources } = await import('@mailrail/testing/source-files');
    const enums = await import('@mailrail/platform/db/generated/enums');
    const vocabularies = [
      ...Object.values(enums).map((e) => Object.values(e as Record<string, string>)),
      Object.keys((await import('@mailrail/domain/errors/api-error')).errorStatus),
    ].map((values) => [...values].sort().join(','));
    const copies: string[] = [];
    for (const f of productionSources()) {
      for (const [, list] of f.text.matchAll(/(?:z\.enum\(|new Set(?:<[^>]*>)?\()\[([^\]]*)\]/g)) {
        const values = [...list.matchAll(/'([^']*)'/g)]
          .map((m) => m[1])
          .sort()
          .join(',');
        if (vocabularies.includes(values)) copies.push(`${f.path}: [${list.trim()}]`);
      }
    }
    expect(copies).toEqual([]);
  });
});

describe('route declarations', () => {
  it('are matched literal segment before parameter, whatever the order they are declared in', () => {
    const declared = ['/b/:id', '/a/:id', '/a/:id/x', '/a/bulk', '/a', '/a/:id/y', '/a/export'].map((path) => ({ path }));
    const order = matchingOrder(declared).map((r) => r.path);
    expect(order.indexOf('/a/bulk')).toBeLessThan(order.indexOf('/a/:id'));
    expect(order.indexOf('/a/export')).toBeLessThan(order.indexOf('/b/:id'));
    // Among routes that can match the same URL, the declarations' order stays.
    expect(order.indexOf('/a/:id/x')).toBeLessThan(order.indexOf('/a/:id/y'));
    expect(order.indexOf('/a/bulk')).toBeLessThan(order.indexOf('/a/export'));
  });
});
