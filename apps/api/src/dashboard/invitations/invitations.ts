import { z } from 'zod';
import { ApiError, badRequest, conflict, notFound } from '@mailrail/domain/errors/api-error';
import { TeamRole, type SuppressionReason } from '@mailrail/platform/db/generated/enums';
import { storedSkippedRecipients } from '@mailrail/domain/emails/recipient-outcomes';
import { normalisedEmailField } from '@mailrail/domain/emails/address';
import { dashboardLink, hashSecretToken, looksLikeSecretToken, newSecretToken } from '@mailrail/domain/users/link-tokens';
import { hashPassword } from '@mailrail/domain/users/passwords';
import type { ApiDeps } from '../../deps';
import { linkMessage, type SystemMailer } from '@mailrail/domain/system-mail/system-mail';
import { mailNotConfigured } from '../mail/dashboard-mail';
import { invalidLink, newPasswordField } from '../auth/sign-in';

export const createInvitationBody = z.object({ email: normalisedEmailField(), role: z.enum(TeamRole).default('MEMBER') });
export const invitationIdParam = z.object({
  id: z
    .string()
    .max(10)
    .regex(/^\d{1,10}$/, 'must be a positive integer')
    .transform(Number),
});
export const acceptInvitationBody = z.object({ token: z.string().max(200), password: newPasswordField.optional() });

type InvitationDeps = Pick<ApiDeps, 'db' | 'config' | 'clock' | 'log'>;

interface InvitationRow {
  id: number;
  email: string;
  role: TeamRole;
  createdAt: Date;
  expiresAt: Date;
  invitedBy: { email: string } | null;
}
const SELECT = { id: true, email: true, role: true, createdAt: true, expiresAt: true, invitedBy: { select: { email: true } } } as const;
const view = (i: InvitationRow, now: Date) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invitedBy: i.invitedBy?.email ?? null,
  createdAt: i.createdAt,
  expiresAt: i.expiresAt,
  expired: i.expiresAt <= now,
});

/** Pending (not accepted) invitations, newest first; expired ones stay listed (flagged) until replaced or revoked. */
export async function listInvitations(deps: InvitationDeps, teamId: number) {
  const rows = await deps.db.invitation.findMany({
    where: { teamId, acceptedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: SELECT,
  });
  const now = deps.clock.now();
  return { data: rows.map((r) => view(r, now)) };
}

/**
 * Invites an address: a new single-use link (its hash stored), emailed through the normal
 * pipeline. Inviting the same address again replaces the pending invitation, so only the
 * newest link works. If the mail cannot be sent, nothing is kept.
 */
export async function inviteMember(
  deps: InvitationDeps,
  mailer: SystemMailer | null,
  teamId: number,
  invitedById: number,
  input: z.infer<typeof createInvitationBody>,
) {
  if (!mailer) throw mailNotConfigured();
  const already = await deps.db.membership.findFirst({ where: { teamId, user: { email: input.email } }, select: { userId: true } });
  if (already) throw conflict(`${input.email} is already a member of this team`);
  const now = deps.clock.now();
  const token = newSecretToken();
  const [, invitation, team] = await deps.db.$transaction([
    deps.db.invitation.deleteMany({ where: { teamId, email: input.email, acceptedAt: null } }),
    deps.db.invitation.create({
      data: {
        teamId,
        email: input.email,
        role: input.role,
        tokenHash: hashSecretToken(token),
        invitedById,
        createdAt: now,
        expiresAt: new Date(now.getTime() + deps.config.DASHBOARD_INVITATION_DAYS * 86_400_000),
      },
      select: SELECT,
    }),
    deps.db.team.findUniqueOrThrow({ where: { id: teamId }, select: { name: true } }),
  ]);
  const inviter = invitation.invitedBy?.email ?? 'An administrator';
  let emailId: string;
  try {
    emailId = await mailer(
      linkMessage(
        input.email,
        `You are invited to ${team.name} on mailrail`,
        [
          `${inviter} invited you to join the team "${team.name}" on mailrail as ${input.role === 'ADMIN' ? 'an admin' : 'a member'}.`,
          `The link works once, for ${deps.config.DASHBOARD_INVITATION_DAYS} days.`,
        ],
        { label: 'Accept the invitation', url: dashboardLink(deps.config.PUBLIC_URL, 'invitations/accept', token) },
      ),
    );
  } catch (err) {
    await deps.db.invitation.deleteMany({ where: { id: invitation.id } });
    deps.log.error({ err, teamId }, 'invitation mail not sent');
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      `The invitation email could not be sent${err instanceof ApiError ? `: ${err.message}` : ''}; nothing was saved`,
    );
  }
  const suppressed = await suppressionOf(deps, emailId);
  if (suppressed) {
    // Nobody has the link: an invitation kept would only look sent.
    await deps.db.invitation.deleteMany({ where: { id: invitation.id } });
    const because = suppressed.reason ? ` (${SUPPRESSED_BECAUSE[suppressed.reason]})` : '';
    const message = `The invitation email was not sent: ${input.email} is on the dashboard mail's suppression list${because}; nothing was saved. Invite another address, or ask the operator to remove it from the suppression list of the dashboard mail team`;
    throw badRequest(message, [{ path: ['email'], message: 'This address is suppressed: mail to it is not sent' }]);
  }
  return view(invitation, now);
}

const SUPPRESSED_BECAUSE: Record<SuppressionReason, string> = {
  HARD_BOUNCE: 'an earlier email to it bounced permanently',
  COMPLAINT: 'its owner marked an earlier email as spam',
  MANUAL: 'added by hand',
};

/** Set when the intake kept the dashboard email SUPPRESSED (its address is on the mail team's list), with why. */
async function suppressionOf(deps: InvitationDeps, emailId: string): Promise<{ reason: SuppressionReason | undefined } | null> {
  const email = await deps.db.email.findUnique({ where: { id: emailId }, select: { latestStatus: true, skippedRecipients: true } });
  if (email?.latestStatus !== 'SUPPRESSED') return null;
  return { reason: storedSkippedRecipients(email.skippedRecipients)[0]?.reason };
}

export async function revokeInvitation(deps: InvitationDeps, teamId: number, id: number) {
  const gone = await deps.db.invitation.deleteMany({ where: { id, teamId, acceptedAt: null } });
  if (gone.count === 0) throw notFound('Invitation not found');
  return { id, success: true };
}

async function pendingInvitation(deps: InvitationDeps, token: string) {
  if (!looksLikeSecretToken(token)) throw invalidLink();
  const invitation = await deps.db.invitation.findUnique({
    where: { tokenHash: hashSecretToken(token) },
    select: { id: true, teamId: true, email: true, role: true, expiresAt: true, acceptedAt: true, team: { select: { name: true } } },
  });
  if (!invitation || invitation.acceptedAt || invitation.expiresAt <= deps.clock.now()) throw invalidLink();
  const user = await deps.db.user.findUnique({ where: { email: invitation.email }, select: { id: true, passwordHash: true } });
  return { invitation, user };
}

/** What the accept page shows; the link holder learns only what the invitation mail told them. */
export async function lookupInvitation(deps: InvitationDeps, token: string) {
  const { invitation, user } = await pendingInvitation(deps, token);
  return {
    teamName: invitation.team.name,
    email: invitation.email,
    role: invitation.role,
    expiresAt: invitation.expiresAt,
    needsPassword: !user?.passwordHash,
  };
}

/**
 * Accepts once (a conditional update marks the invitation used). The link proves the address:
 * the membership is added to that address's account, created with the given password if it has
 * none. Answers whether the caller should be signed in as that user now (new password set here).
 */
export async function acceptInvitation(
  deps: InvitationDeps,
  input: z.infer<typeof acceptInvitationBody>,
): Promise<{ teamId: number; userId: number; setPassword: boolean }> {
  const { invitation, user } = await pendingInvitation(deps, input.token);
  const setPassword = !user?.passwordHash;
  if (setPassword && !input.password)
    throw badRequest('Invalid request body: password: choose a password for your new account', [
      { path: ['password'], message: 'choose a password for your new account' },
    ]);
  const passwordHash = setPassword ? await hashPassword(input.password!) : null;
  const now = deps.clock.now();
  const userId = await deps.db.$transaction(async (tx) => {
    const used = await tx.invitation.updateMany({
      where: { id: invitation.id, acceptedAt: null, expiresAt: { gt: now } },
      data: { acceptedAt: now },
    });
    if (used.count !== 1) throw invalidLink();
    const account = await tx.user.upsert({
      where: { email: invitation.email },
      create: { email: invitation.email, passwordHash },
      update: passwordHash ? { passwordHash } : {},
      select: { id: true },
    });
    // An existing membership keeps its role: an invitation never demotes an admin.
    await tx.membership.upsert({
      where: { userId_teamId: { userId: account.id, teamId: invitation.teamId } },
      create: { userId: account.id, teamId: invitation.teamId, role: invitation.role },
      update: {},
    });
    return account.id;
  });
  return { teamId: invitation.teamId, userId, setPassword };
}
