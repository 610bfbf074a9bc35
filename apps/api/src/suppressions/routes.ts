import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import {
  addSuppression,
  listSuppressions,
  removeSuppression,
  addSuppressionBody,
  listSuppressionsQuery,
  suppressionEmailParam,
  suppressionReason,
} from './suppressions';

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

const route = declareRoute<ApiDeps>();
const tag = 'Suppressions';

export const suppressionRoutes = [
  route({
    method: 'get',
    path: '/api/v1/suppressions',
    tag,
    summary: 'List suppressed addresses, newest first',
    query: listSuppressionsQuery,
    response: z.object({ data: z.array(suppression), count: z.number().int() }),
    handle: (deps, { auth, query }) => listSuppressions(deps, auth, query),
  }),
  route({
    method: 'post',
    path: '/api/v1/suppressions',
    tag,
    summary: 'Suppress an address (idempotent)',
    body: addSuppressionBody,
    response: suppression,
    example: { email: 'old@example.org', reason: 'MANUAL' },
    handle: (deps, { auth, body }) => addSuppression(deps, auth, body),
  }),
  route({
    method: 'delete',
    path: '/api/v1/suppressions/:email',
    tag,
    summary: 'Remove an address from the list',
    params: suppressionEmailParam,
    response: z.object({ email: z.string(), success: z.literal(true), message: z.string() }),
    handle: (deps, { auth, params }) => removeSuppression(deps, auth, params.email),
  }),
];
