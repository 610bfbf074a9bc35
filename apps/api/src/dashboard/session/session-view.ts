import type { Response } from 'express';
import { z } from 'zod';
import { TeamRole } from '@mailrail/platform/db/generated/enums';
import type { ApiDeps } from '../../deps';
import { isOperatorEmail } from '../instance/operators';
import { setSessionCookie } from './cookie';
import { createSession, type DashboardSession } from './sessions';

/** The fields of sessionView's answer, for answers that carry more (accepting an invitation). */
export const sessionFields = {
  user: z.object({
    id: z.number().int(),
    email: z.string(),
    hasPassword: z.boolean(),
    operator: z.boolean().describe("One of the instance's operators (DASHBOARD_OPERATORS), who may create teams"),
  }),
  teams: z.array(z.object({ id: z.number().int(), name: z.string(), role: z.enum(TeamRole) })).describe('Ordered by name'),
  lastTeamId: z.number().int().nullable().describe('The team opened last: where `/` and signing in land'),
  csrfToken: z.string().describe('Sent back as X-CSRF-Token on every state-changing request'),
  expiresAt: z.iso.datetime(),
};
export const sessionResponse = z.object(sessionFields).meta({ id: 'Session' });

/**
 * GET /api/dashboard/session's answer: the user, their teams (for the switcher), the team they used
 * last (where `/` and signing in land), whether they are an operator, the CSRF token.
 */
export async function sessionView(deps: Pick<ApiDeps, 'db' | 'config'>, session: DashboardSession) {
  const user = await deps.db.user.findUniqueOrThrow({
    where: { id: session.userId },
    select: {
      id: true,
      email: true,
      passwordHash: true,
      lastTeamId: true,
      memberships: { select: { role: true, team: { select: { id: true, name: true } } } },
    },
  });
  const teams = user.memberships
    .map((m) => ({ id: m.team.id, name: m.team.name, role: m.role }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
  return {
    user: { id: user.id, email: user.email, hasPassword: user.passwordHash !== null, operator: isOperatorEmail(deps.config, user.email) },
    teams,
    // A team left since (or deleted) is not offered: the first team by name is.
    lastTeamId: teams.some((t) => t.id === user.lastTeamId) ? user.lastTeamId : (teams[0]?.id ?? null),
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
  };
}

/** Starts a session for the user, sets the cookie and answers the session view. */
export async function startSession(deps: ApiDeps, res: Response, userId: number) {
  const { token, session } = await createSession(deps, userId);
  setSessionCookie(res, deps.config, token, session.absoluteExpiresAt);
  return sessionView(deps, session);
}
