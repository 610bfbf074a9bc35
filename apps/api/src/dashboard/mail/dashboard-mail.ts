import MailComposer from 'nodemailer/lib/mail-composer';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { submitEmails } from '@mailrail/domain/emails/email-intake';
import type { Db } from '@mailrail/platform/db/client';
import type { AuthContext } from '../../http/auth';
import { parseOrThrow } from '../../http/validate';
import { sendEmailPayload } from '../../emails/schemas';
import { buildDrafts } from '../../emails/build-drafts';
import type { SendContext } from '../../emails/send-emails';

// Invitations and password resets travel through mailrail's own pipeline: the same intake and
// worker as POST /api/v1/emails, as an email of DASHBOARD_MAIL_TEAM_ID from DASHBOARD_MAIL_FROM
// (its domain verified, its suppressions and limits applied). Their links hand over accounts, so
// no tenant may read them: the mail team must have no members, API keys or webhooks (checked on
// every send), and the row's html/text hold only a note; the real message travels as the row's
// rawMessage, which no API or dashboard route reads and which is cleared once SES accepted it.

export interface DashboardMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export type DashboardMailer = (message: DashboardMessage) => Promise<string>;

/** What the email log shows of a dashboard message instead of its body. */
export const STORED_SYSTEM_MAIL_TEXT = 'Dashboard mail from mailrail: its body carried a single-use link and is not kept.';

export const mailNotConfigured = () =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    'Dashboard mail is not configured on this server (DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID); ask the operator',
  );

/** Why DASHBOARD_MAIL_TEAM_ID cannot carry dashboard mail, or null when it can. */
export async function mailTeamProblem(db: Db, teamId: number): Promise<string | null> {
  const team = await db.team.findUnique({
    where: { id: teamId },
    select: { _count: { select: { memberships: true, apiKeys: { where: { revokedAt: null } }, webhooks: true } } },
  });
  if (!team) return `DASHBOARD_MAIL_TEAM_ID ${teamId} is not a team`;
  const { memberships, apiKeys, webhooks } = team._count;
  if (memberships + apiKeys + webhooks === 0) return null;
  return (
    `DASHBOARD_MAIL_TEAM_ID ${teamId} has ${memberships} member(s), ${apiKeys} API key(s) and ${webhooks} webhook(s), ` +
    'who could read its mail; dashboard mail needs a team of its own with none of them'
  );
}

/** null when the server has no dashboard sender configured. */
export function createDashboardMailer(send: SendContext): DashboardMailer | null {
  const { DASHBOARD_MAIL_FROM: from, DASHBOARD_MAIL_TEAM_ID: teamId } = send.deps.config;
  if (!from || !teamId) return null;
  const auth: AuthContext = { teamId, apiKeyId: null, permission: 'FULL', domainId: null, rateLimit: 0 };
  // Said once at start, so that the operator learns it before the first invitation fails.
  void mailTeamProblem(send.deps.db, teamId)
    .then((problem) => problem && send.deps.log.error(`dashboard mail refused until fixed: ${problem}`))
    .catch((err) => send.deps.log.warn({ err }, 'could not check DASHBOARD_MAIL_TEAM_ID'));
  return async (message) => {
    const problem = await mailTeamProblem(send.deps.db, teamId);
    if (problem) {
      send.deps.log.error(`dashboard mail refused: ${problem}`);
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'Dashboard mail is misconfigured on this server (DASHBOARD_MAIL_TEAM_ID); ask the operator',
      );
    }
    // The stored fields (what the email log shows) carry the note; the sender rule, suppressions
    // and size checks run on them as on any email.
    const payload = parseOrThrow(sendEmailPayload, { from, to: [message.to], subject: message.subject, text: STORED_SYSTEM_MAIL_TEXT });
    const raw = await new MailComposer({ from, to: message.to, subject: message.subject, text: message.text, html: message.html })
      .compile()
      .build();
    const [emailId] = await submitEmails(send.intake, auth, {
      idempotencyKey: undefined,
      body: payload,
      build: async () =>
        (await buildDrafts(send, auth, [payload], false)).map((draft) => ({ ...draft, source: 'SYSTEM' as const, rawMessage: raw })),
    });
    return emailId;
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A short message with one button-like link; the plain-text part carries the same link. */
export function linkMessage(to: string, subject: string, lines: string[], action: { label: string; url: string }): DashboardMessage {
  const text = `${lines.join('\n\n')}\n\n${action.label}: ${action.url}\n`;
  const html =
    lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('') +
    `<p><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a></p>` +
    `<p style="color:#666;font-size:12px">${escapeHtml(action.url)}</p>`;
  return { to, subject, text, html };
}
