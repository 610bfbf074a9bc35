import type { RequestHandler } from 'express';
import { ApiError, notFound } from '@mailrail/domain/errors/api-error';
import type { TeamRole } from '@mailrail/platform/db/generated/enums';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { effectiveTeamRateLimit } from '@mailrail/domain/teams/team-rate-limit';
import type { ApiDeps } from '../../deps';
import { sessionOf } from '../session/middleware';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The signed-in user's membership of the team in the path (dashboard team routes). */
      member?: { userId: number; teamId: number; role: TeamRole };
    }
  }
}

const MAX_INT4 = 2_147_483_647;
// Not a member, no such team, or a malformed id: one answer, so a team's existence never leaks.
const teamNotFound = () => notFound('Team not found');

/**
 * For /teams/:teamId/...: the signed-in user must be a member. Sets req.member and the same
 * req.auth an API key sets (FULL, no domain binding, the team's rate limit), so the public API's
 * routes and services run unchanged for the dashboard.
 */
export function teamAccess(deps: ApiDeps): RequestHandler {
  return async (req, _res, next) => {
    try {
      const session = sessionOf(req);
      const raw = req.params.teamId;
      const teamId = typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : 0;
      if (teamId < 1 || teamId > MAX_INT4) throw teamNotFound();
      // One statement on every team request (Prisma would read the membership and the team apart).
      const db = prismaExecutor(deps.db);
      const [membership] = await db.query<{ role: TeamRole; apiRateLimit: number | null; lastTeamId: number | null }>(
        `SELECT m.role, t."apiRateLimit", u."lastTeamId" FROM "Membership" m JOIN "Team" t ON t.id = m."teamId" JOIN "User" u ON u.id = m."userId"
          WHERE m."userId" = $1 AND m."teamId" = $2`,
        [session.userId, teamId],
      );
      if (!membership) throw teamNotFound();
      // Signing in lands on the team used last: written only when the user moves to another team.
      if (membership.lastTeamId !== teamId) await db.execute(`UPDATE "User" SET "lastTeamId" = $2 WHERE id = $1`, [session.userId, teamId]);
      req.member = { userId: session.userId, teamId, role: membership.role };
      req.auth = {
        teamId,
        apiKeyId: null,
        permission: 'FULL',
        domainId: null,
        rateLimit: effectiveTeamRateLimit(membership.apiRateLimit, deps.config),
      };
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** ADMIN manages members, invitations, API keys and team settings. */
export const requireAdmin: RequestHandler = (req, _res, next) => {
  if (req.member?.role !== 'ADMIN') return next(new ApiError('FORBIDDEN', 'This action needs the ADMIN role in this team'));
  next();
};

export function memberOf(req: Express.Request): NonNullable<Express.Request['member']> {
  if (!req.member) throw teamNotFound();
  return req.member;
}
