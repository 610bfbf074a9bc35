import { ApiError } from '@mailrail/domain/errors/api-error';
import { createSystemMailer, type SystemMailer } from '@mailrail/domain/system-mail/system-mail';
import type { SendContext } from '../../emails/send-emails';

// The dashboard's mail (invitations, password resets) is mailrail's system mail
// (packages/domain/src/system-mail): the API's send intake carries it, the worker's reputation
// alerts use the same mailer on the worker's own intake.

export const mailNotConfigured = () =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    'Dashboard mail is not configured on this server (DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID); ask the operator',
  );

/** null when the server has no dashboard sender configured. */
export const createDashboardMailer = (send: SendContext): SystemMailer | null => createSystemMailer(send.intake, send.deps.config);
