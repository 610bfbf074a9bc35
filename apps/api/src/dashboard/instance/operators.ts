import { z } from 'zod';
import { forbidden } from '@mailrail/domain/errors/api-error';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { normaliseUserEmail } from '@mailrail/domain/users/users';
import type { ApiDeps } from '../../deps';

// The instance's operators are the people who run it: they set its environment and run its admin
// CLI. DASHBOARD_OPERATORS names their dashboard accounts, so the same people may do in the
// dashboard what the CLI's `team create` does (docs/dashboard.md, "Operators"). Being ADMIN of a
// team says nothing about the instance, so no team role makes an operator.

type OperatorDeps = Pick<ApiDeps, 'db' | 'config'>;

/** The normalised addresses of DASHBOARD_OPERATORS. */
function operatorEmails(config: OperatorDeps['config']): Set<string> {
  return new Set(
    (config.DASHBOARD_OPERATORS ?? '')
      .split(',')
      .map((a) => normaliseUserEmail(a))
      .filter(Boolean),
  );
}

export const isOperatorEmail = (config: OperatorDeps['config'], email: string) => operatorEmails(config).has(normaliseUserEmail(email));

export const createTeamBody = z.object({ name: z.string().trim().min(1).max(100) });

/**
 * POST /api/dashboard/teams: the CLI's createTeam, by an operator, who becomes the new team's
 * ADMIN (the CLI prints an API key instead; in the dashboard the admin creates keys on its page).
 */
export async function createTeamAsOperator(deps: OperatorDeps, userId: number, input: z.infer<typeof createTeamBody>) {
  const user = await deps.db.user.findUniqueOrThrow({ where: { id: userId }, select: { email: true } });
  if (!isOperatorEmail(deps.config, user.email))
    throw forbidden("Only the instance's operators (DASHBOARD_OPERATORS) can create teams; ask the person who runs this mailrail");
  const team = await deps.db.$transaction(async (tx) => {
    const created = await createTeam(tx, input.name);
    await tx.membership.create({ data: { userId, teamId: created.id, role: 'ADMIN' } });
    return created;
  });
  return { id: team.id, name: team.name, role: 'ADMIN' as const };
}
