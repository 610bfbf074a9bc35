import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';

export function documentHealthRoutes(r: DocRegistry) {
  documentRoute(r, { method: 'get', path: '/health', tag: 'Operations', summary: 'Liveness probe', public: true, errors: [], response: z.object({ status: z.literal('ok') }) });
  documentRoute(r, {
    method: 'get',
    path: '/ready',
    tag: 'Operations',
    summary: 'Readiness probe: PostgreSQL and Redis reachable (503 otherwise)',
    public: true,
    errors: [503],
    response: z.object({ status: z.enum(['ok', 'unavailable']), postgres: z.enum(['ok', 'unavailable']), redis: z.enum(['ok', 'unavailable']) }),
  });
}
