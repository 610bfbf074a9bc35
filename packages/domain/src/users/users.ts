import type { Db } from '@mailrail/platform/db/client';
import type { TeamRole } from '@mailrail/platform/db/generated/enums';

/** Lower-cased and trimmed: the form User.email and Invitation.email are stored and looked up in. */
export function normaliseUserEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The user with this address (created without a password if new), member of the team with this
 * role (an existing membership takes the role given).
 */
export async function ensureUserInTeam(
  db: Db,
  input: { email: string; teamId: number; role: TeamRole },
): Promise<{ userId: number; created: boolean }> {
  const email = normaliseUserEmail(input.email);
  return db.$transaction(async (tx) => {
    const existing = await tx.user.findUnique({ where: { email }, select: { id: true } });
    const user = existing ?? (await tx.user.create({ data: { email }, select: { id: true } }));
    await tx.membership.upsert({
      where: { userId_teamId: { userId: user.id, teamId: input.teamId } },
      create: { userId: user.id, teamId: input.teamId, role: input.role },
      update: { role: input.role },
    });
    return { userId: user.id, created: !existing };
  });
}
