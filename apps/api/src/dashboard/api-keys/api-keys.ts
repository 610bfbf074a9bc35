import { z } from 'zod';
import { announceApiKeyRevocations, createApiKey, type ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import { badRequest, notFound } from '@mailrail/domain/errors/api-error';
import { ApiPermission } from '@mailrail/platform/db/generated/enums';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import type { ApiDeps } from '../../deps';
import type { AuthContext } from '../../http/auth';

export const createApiKeyBody = z.object({
  name: z.string().trim().min(1).max(100),
  permission: z.enum(ApiPermission).default('FULL'),
  domainId: z.number().int().positive().max(2_147_483_647).nullable().optional(),
});

export const apiKeyIdParam = z.object({
  id: z
    .string()
    .max(10)
    .regex(/^\d{1,10}$/, 'must be a positive integer')
    .transform(Number),
});

// Never the hash: the secret is shown once, at creation, and only its last characters after.
const SELECT = { id: true, name: true, permission: true, domainId: true, partialToken: true, lastUsed: true, createdAt: true } as const;

export async function listApiKeys(deps: Pick<ApiDeps, 'db'>, auth: AuthContext) {
  const data = await deps.db.apiKey.findMany({
    where: { teamId: auth.teamId, revokedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: SELECT,
  });
  return { data };
}

/** The same key maker as the admin CLI; the answer holds the key, the only time it is shown. */
export async function addApiKey(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, input: z.infer<typeof createApiKeyBody>) {
  if (input.domainId != null) {
    const domain = await deps.db.domain.findFirst({ where: { id: input.domainId, teamId: auth.teamId }, select: { id: true } });
    if (!domain)
      throw badRequest('Invalid request body: domainId: not a domain of this team', [
        { path: ['domainId'], message: 'not a domain of this team' },
      ]);
  }
  const { apiKey, id } = await createApiKey(deps.db, {
    teamId: auth.teamId,
    name: input.name,
    permission: input.permission,
    domainId: input.domainId ?? null,
  });
  const row = await deps.db.apiKey.findUniqueOrThrow({ where: { id }, select: SELECT });
  return { ...row, apiKey };
}

/** Revoked in PostgreSQL, then announced so every API replica drops its cached copy now. */
export async function revokeTeamApiKey(
  deps: ApiDeps & { metrics?: Pick<Metrics, 'apiKeyRevocationsUnannounced'>; apiKeyCache: ApiKeyCache | null },
  auth: AuthContext,
  id: number,
) {
  const key = await deps.db.apiKey.findFirst({ where: { id, teamId: auth.teamId, revokedAt: null }, select: { id: true, clientId: true } });
  if (!key) throw notFound('API key not found');
  const revoked = await deps.db.apiKey.updateMany({ where: { id: key.id, revokedAt: null }, data: { revokedAt: deps.clock.now() } });
  if (revoked.count === 0) throw notFound('API key not found');
  await announceApiKeyRevocations(deps, [key.clientId]);
  return { id: key.id, success: true };
}
