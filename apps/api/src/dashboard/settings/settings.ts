import { z } from 'zod';
import { badRequest } from '@mailrail/domain/errors/api-error';
import { effectiveTeamRateLimit } from '@mailrail/domain/teams/team-rate-limit';
import type { TeamRole } from '@mailrail/platform/db/generated/enums';
import type { ApiDeps } from '../../deps';

export const updateSettingsBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  apiRateLimit: z.number().int().min(0).max(100_000).nullable().optional(),
});

type SettingsDeps = Pick<ApiDeps, 'db' | 'config'>;

export async function teamSettings(deps: SettingsDeps, teamId: number, role: TeamRole) {
  const team = await deps.db.team.findUniqueOrThrow({ where: { id: teamId }, select: { id: true, name: true, apiRateLimit: true } });
  return {
    id: team.id,
    name: team.name,
    apiRateLimit: team.apiRateLimit,
    effectiveRateLimit: effectiveTeamRateLimit(team.apiRateLimit, deps.config),
    defaultRateLimit: deps.config.API_RATE_LIMIT,
    role,
  };
}

/** A team's own rate stays within the operator's API_RATE_LIMIT_MAX: the rate limit is what bounds its heavy operations. */
function checkRateLimitCeiling(config: SettingsDeps['config'], apiRateLimit: number | null | undefined): void {
  const ceiling = config.API_RATE_LIMIT_MAX;
  if (apiRateLimit === null || apiRateLimit === undefined || ceiling === 0) return;
  if (apiRateLimit === 0 || apiRateLimit > ceiling) {
    const message = `This server allows a team at most ${ceiling} requests per second (API_RATE_LIMIT_MAX)${apiRateLimit === 0 ? '; 0 (unlimited) is not allowed' : ''}`;
    throw badRequest(message, [{ path: ['apiRateLimit'], message: `Must be between 1 and ${ceiling}, or null for the server's default` }]);
  }
}

export async function updateTeamSettings(deps: SettingsDeps, teamId: number, role: TeamRole, input: z.infer<typeof updateSettingsBody>) {
  checkRateLimitCeiling(deps.config, input.apiRateLimit);
  const data = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  if (Object.keys(data).length) await deps.db.team.update({ where: { id: teamId }, data });
  return teamSettings(deps, teamId, role);
}
