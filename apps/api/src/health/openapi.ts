import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';

const readiness = z.object({
  status: z.enum(['ok', 'unavailable']),
  postgres: z.enum(['ok', 'unavailable']),
  redis: z.enum(['ok', 'unavailable']),
});

export function documentHealthRoutes(r: DocRegistry) {
  documentRoute(r, {
    method: 'get',
    path: '/health',
    tag: 'Operations',
    summary: 'Liveness probe',
    public: true,
    errors: [],
    response: z.object({ status: z.literal('ok') }),
  });
  documentRoute(r, {
    method: 'get',
    path: '/ready',
    tag: 'Operations',
    summary: 'Readiness probe: PostgreSQL and Redis reachable (503 otherwise)',
    public: true,
    errors: [],
    response: readiness,
    responses: { 503: { description: 'PostgreSQL or Redis unreachable: which one, in the same shape', schema: readiness } },
  });
}
