import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import type { Express } from 'express';
import request from 'supertest';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { toOpenApiPath } from './registry';

let api: TestApi;
let doc: any; // eslint-disable-line @typescript-eslint/no-explicit-any
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
function expressRoutes(app: Express): string[] {
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
  return [...new Set(out)].filter((r) => !r.includes('/admin/queues') && !r.includes('/api/v1/ui/'));
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('documents every route the API serves', () => {
    const documented = new Set(
      Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    const routes = expressRoutes(api.app);
    expect(routes.length).toBeGreaterThan(5);
    expect(routes.filter((r) => !documented.has(r))).toEqual([]);
  });

  it('accepts every documented example request, and its schema rejects a wrong one', async () => {
    const deref: any = await SwaggerParser.dereference(structuredClone(doc)); // eslint-disable-line @typescript-eslint/no-explicit-any
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    let checked = 0;
    for (const [path, ops] of Object.entries(deref.paths as Record<string, Record<string, any>>)) { // eslint-disable-line @typescript-eslint/no-explicit-any
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
