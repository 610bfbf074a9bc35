import MailComposer from 'nodemailer/lib/mail-composer';
import type { Config } from '@mailrail/platform/config/schema';
import type { Db } from '@mailrail/platform/db/client';
import { ApiError } from '../errors/api-error';
import { parseAddress } from '../emails/address';
import { checkSender, maxMessageBytes, submitEmails, type EmailIntake } from '../emails/email-intake';
import type { AuthContext } from '../teams/api-key-auth';

// Mail mailrail sends on its own behalf (invitations and password resets from the API, reputation
// alerts from the worker) travels through its own pipeline: the same intake and worker as
// POST /api/v1/emails, as an email of DASHBOARD_MAIL_TEAM_ID from DASHBOARD_MAIL_FROM (its domain
// verified, its suppressions and limits applied). Some of it hands over accounts, so no tenant may
// read it: the mail team must have no members, API keys or webhooks (checked on every send), and
// the row's html/text hold only a note; the real message travels as the row's rawMessage, which no
// API or dashboard route reads and which is cleared once SES accepted it.

export interface SystemMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends one message; resolves to its email id (suppressed recipients included: the caller may look). */
export type SystemMailer = (message: SystemMessage) => Promise<string>;

/** What the email log shows of a system message instead of its body. */
export const STORED_SYSTEM_MAIL_TEXT =
  'Dashboard mail from mailrail (an invitation, a sign-in or reset link, an alert): its body is not kept.';

/** Why DASHBOARD_MAIL_TEAM_ID cannot carry system mail, or null when it can. */
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

const misconfigured = (what: string) =>
  new ApiError('SERVICE_UNAVAILABLE', `Dashboard mail is misconfigured on this server (${what}); ask the operator`);

/** null when the server has no system sender configured (DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID). */
export function createSystemMailer(
  intake: EmailIntake,
  config: Pick<Config, 'DASHBOARD_MAIL_FROM' | 'DASHBOARD_MAIL_TEAM_ID' | 'EMAIL_MAX_MESSAGE_MB'>,
): SystemMailer | null {
  const { DASHBOARD_MAIL_FROM: from, DASHBOARD_MAIL_TEAM_ID: teamId } = config;
  if (!from || !teamId) return null;
  const { db, log } = intake.deps;
  const sender = parseAddress(from);
  const auth: AuthContext = { teamId, apiKeyId: null, permission: 'FULL', domainId: null, rateLimit: 0 };
  // Said once at start, so that the operator learns it before the first message fails.
  if (!sender) log.error(`dashboard mail refused until fixed: DASHBOARD_MAIL_FROM "${from}" is not an email address`);
  void mailTeamProblem(db, teamId)
    .then((problem) => problem && log.error(`dashboard mail refused until fixed: ${problem}`))
    .catch((err) => log.warn({ err }, 'could not check DASHBOARD_MAIL_TEAM_ID'));
  return async (message) => {
    if (!sender) throw misconfigured('DASHBOARD_MAIL_FROM');
    const problem = await mailTeamProblem(db, teamId);
    if (problem) {
      log.error(`dashboard mail refused: ${problem}`);
      throw misconfigured('DASHBOARD_MAIL_TEAM_ID');
    }
    const to = parseAddress(message.to);
    if (!to) throw new ApiError('BAD_REQUEST', `${message.to} is not an email address`);
    const raw = await new MailComposer({ from, to: to.address, subject: message.subject, text: message.text, html: message.html })
      .compile()
      .build();
    if (raw.length > maxMessageBytes(intake.deps.config)) throw new ApiError('PAYLOAD_TOO_LARGE', 'The dashboard message is too large');
    const [emailId] = await submitEmails(intake, auth, {
      idempotencyKey: undefined,
      body: undefined,
      build: async () => {
        const check = await checkSender(intake, auth, sender.domain);
        if (!check.ok) {
          log.error(`dashboard mail refused: DASHBOARD_MAIL_FROM: ${check.message}`);
          throw misconfigured(`DASHBOARD_MAIL_FROM: ${check.message}`);
        }
        // The stored fields (what the email log shows) carry the note; suppressions apply to `to` as on any email.
        return [
          {
            teamId,
            domainId: check.domain.id,
            region: check.domain.region,
            source: 'SYSTEM',
            apiKeyId: null,
            from: from.trim(),
            to: [to.address],
            subject: message.subject,
            text: STORED_SYSTEM_MAIL_TEXT,
            rawMessage: raw,
            lane: 'transactional',
          },
        ];
      },
    });
    return emailId;
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A short message with one button-like link; the plain-text part carries the same link. */
export function linkMessage(to: string, subject: string, lines: string[], action: { label: string; url: string }): SystemMessage {
  const text = `${lines.join('\n\n')}\n\n${action.label}: ${action.url}\n`;
  const html =
    lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('') +
    `<p><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a></p>` +
    `<p style="color:#666;font-size:12px">${escapeHtml(action.url)}</p>`;
  return { to, subject, text, html };
}
