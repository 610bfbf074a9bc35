import type { Response } from 'express';
import type { ApiDeps } from '../../deps';
import { setSessionCookie } from './cookie';
import { createSession, type DashboardSession } from './sessions';

/** GET /api/dashboard/session's answer: the user, their teams (for the switcher), the CSRF token. */
export async function sessionView(deps: Pick<ApiDeps, 'db'>, session: DashboardSession) {
  const user = await deps.db.user.findUniqueOrThrow({
    where: { id: session.userId },
    select: {
      id: true,
      email: true,
      passwordHash: true,
      memberships: { select: { role: true, team: { select: { id: true, name: true } } } },
    },
  });
  const teams = user.memberships
    .map((m) => ({ id: m.team.id, name: m.team.name, role: m.role }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
  return {
    user: { id: user.id, email: user.email, hasPassword: user.passwordHash !== null },
    teams,
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
