import { ApiError } from '@mailrail/domain/errors/api-error';
import type { AuthContext } from '../../http/auth';
import { parseOrThrow } from '../../http/validate';
import { sendEmailPayload } from '../../emails/schemas';
import { sendEmails, type SendContext } from '../../emails/send-emails';

// Invitations and password resets travel through mailrail's own pipeline: the same send service
// as POST /api/v1/emails, as an email of DASHBOARD_MAIL_TEAM_ID from DASHBOARD_MAIL_FROM (its
// domain verified, its suppressions and limits applied, the message in its email log). In
// development that is the demo team, so the mail shows on the local SES emulator's page.

export interface DashboardMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export type DashboardMailer = (message: DashboardMessage) => Promise<string>;

export const mailNotConfigured = () =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    'Dashboard mail is not configured on this server (DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID); ask the operator',
  );

/** null when the server has no dashboard sender configured. */
export function createDashboardMailer(send: SendContext): DashboardMailer | null {
  const { DASHBOARD_MAIL_FROM: from, DASHBOARD_MAIL_TEAM_ID: teamId } = send.deps.config;
  if (!from || !teamId) return null;
  const auth: AuthContext = { teamId, apiKeyId: null, permission: 'FULL', domainId: null, rateLimit: 0 };
  return async (message) => {
    const payload = parseOrThrow(sendEmailPayload, {
      from,
      to: [message.to],
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
    const [emailId] = await sendEmails(send, auth, { payloads: [payload], batch: false, idempotencyKey: undefined, body: payload });
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
