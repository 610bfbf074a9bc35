import { z } from 'zod';
import { badRequest, notFound } from '@mailrail/domain/errors/api-error';
import { TeamRole } from '@mailrail/platform/db/generated/enums';
import type { ApiDeps } from '../../deps';

export const memberUserIdParam = z.object({
  userId: z
    .string()
    .max(10)
    .regex(/^\d{1,10}$/, 'must be a positive integer')
    .transform(Number),
});
export const updateMemberBody = z.object({ role: z.enum(TeamRole) });

type MemberRow = { userId: number; role: TeamRole; createdAt: Date; user: { email: string } };
const SELECT = { userId: true, role: true, createdAt: true, user: { select: { email: true } } } as const;
const view = (m: MemberRow) => ({ userId: m.userId, email: m.user.email, role: m.role, joinedAt: m.createdAt });

const memberNotFound = () => notFound('Member not found');
const lastAdmin = () => badRequest('A team needs at least one admin');

export async function listMembers(deps: Pick<ApiDeps, 'db'>, teamId: number) {
  const rows = await deps.db.membership.findMany({ where: { teamId }, orderBy: [{ createdAt: 'asc' }, { userId: 'asc' }], select: SELECT });
  return { data: rows.map(view) };
}

/**
 * Changes a member's role or removes them, never leaving the team without an ADMIN. The team row
 * is locked first, so two admins demoting each other at once cannot both succeed.
 */
async function changeMembership(deps: Pick<ApiDeps, 'db'>, teamId: number, userId: number, change: { role: TeamRole } | 'remove') {
  return deps.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "Team" WHERE id = ${teamId} FOR UPDATE`;
    const member = await tx.membership.findUnique({ where: { userId_teamId: { userId, teamId } }, select: SELECT });
    if (!member) throw memberNotFound();
    const losesAdmin = member.role === 'ADMIN' && (change === 'remove' || change.role !== 'ADMIN');
    if (losesAdmin && (await tx.membership.count({ where: { teamId, role: 'ADMIN' } })) <= 1) throw lastAdmin();
    if (change === 'remove') {
      await tx.membership.delete({ where: { userId_teamId: { userId, teamId } } });
      return null;
    }
    return view(await tx.membership.update({ where: { userId_teamId: { userId, teamId } }, data: { role: change.role }, select: SELECT }));
  });
}

export const updateMemberRole = (deps: Pick<ApiDeps, 'db'>, teamId: number, userId: number, role: TeamRole) =>
  changeMembership(deps, teamId, userId, { role }) as Promise<ReturnType<typeof view>>;

export async function removeMember(deps: Pick<ApiDeps, 'db'>, teamId: number, userId: number) {
  await changeMembership(deps, teamId, userId, 'remove');
  return { userId, success: true };
}
