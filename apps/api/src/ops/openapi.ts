import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';

export function documentOpsRoutes(r: DocRegistry) {
  documentRoute(r, {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics (bearer METRICS_TOKEN when configured)',
    public: true,
    errors: [401],
    contentType: 'text/plain',
    response: z.string(),
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/doc',
    tag: 'Operations',
    summary: 'This OpenAPI 3.1 document',
    public: true,
    errors: [],
    response: z.record(z.string(), z.unknown()),
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/ui',
    tag: 'Operations',
    summary: 'Interactive API documentation page',
    public: true,
    errors: [],
    contentType: 'text/html',
    response: z.string(),
  });
}
