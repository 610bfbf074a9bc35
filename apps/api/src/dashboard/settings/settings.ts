import { z } from 'zod';
import type { TeamRole } from '@mailrail/platform/db/generated/enums';
import type { ApiDeps } from '../../deps';

export const updateSettingsBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  apiRateLimit: z.number().int().min(0).max(100_000).nullable().optional(),
});

export async function teamSettings(deps: Pick<ApiDeps, 'db' | 'config'>, teamId: number, role: TeamRole) {
  const team = await deps.db.team.findUniqueOrThrow({ where: { id: teamId }, select: { id: true, name: true, apiRateLimit: true } });
  return {
    id: team.id,
    name: team.name,
    apiRateLimit: team.apiRateLimit,
    effectiveRateLimit: team.apiRateLimit ?? deps.config.API_RATE_LIMIT,
    defaultRateLimit: deps.config.API_RATE_LIMIT,
    role,
  };
}

export async function updateTeamSettings(
  deps: Pick<ApiDeps, 'db' | 'config'>,
  teamId: number,
  role: TeamRole,
  input: z.infer<typeof updateSettingsBody>,
) {
  const data = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  if (Object.keys(data).length) await deps.db.team.update({ where: { id: teamId }, data });
  return teamSettings(deps, teamId, role);
}
