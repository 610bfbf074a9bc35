import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import { addSuppressionBody, listSuppressionsQuery, suppressionEmailParam, suppressionReason } from './suppressions';

const suppression = z
  .object({
    id: z.string(),
    email: z.string(),
    reason: suppressionReason,
    source: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Suppression' });

export function documentSuppressionRoutes(r: DocRegistry) {
  const tag = 'Suppressions';
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/suppressions',
    tag,
    summary: 'List suppressed addresses, newest first',
    query: listSuppressionsQuery,
    response: z.object({ data: z.array(suppression), count: z.number().int() }),
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/suppressions',
    tag,
    summary: 'Suppress an address (idempotent)',
    body: addSuppressionBody,
    response: suppression,
    example: { email: 'old@example.org', reason: 'MANUAL' },
  });
  documentRoute(r, {
    method: 'delete',
    path: '/api/v1/suppressions/:email',
    tag,
    summary: 'Remove an address from the list',
    params: suppressionEmailParam,
    response: z.object({ email: z.string(), success: z.literal(true), message: z.string() }),
  });
}
