import { Router, type Request } from 'express';
import { issueUserToken, consumeUserToken } from '@mailrail/domain/users/user-tokens';
import { dashboardLink } from '@mailrail/domain/users/link-tokens';
import type { ApiDeps } from '../../deps';
import { parseOrThrow } from '../../http/validate';
import { linkMessage, type DashboardMailer } from '../mail/dashboard-mail';
import { clearSessionCookie } from '../session/cookie';
import { csrfTokenError, csrfTokenMatches } from '../session/csrf';
import { requireSession, sessionOf } from '../session/middleware';
import { sessionView, startSession } from '../session/session-view';
import { endSession, endUserSessions } from '../session/sessions';
import { createLoginThrottle } from './login-throttle';
import {
  changePassword,
  changePasswordBody,
  checkCredentials,
  emailOnlyBody,
  invalidLink,
  loginBody,
  resetConfirmBody,
  setPassword,
  tokenBody,
} from './sign-in';

const clientIp = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** Session, sign-in and account routes (docs/dashboard-api.md). Same-origin checks run before these. */
export function authRoutes(deps: ApiDeps, mailer: DashboardMailer | null): Router {
  const logins = createLoginThrottle(deps, 'login');
  const resets = createLoginThrottle(deps, 'reset');
  const r = Router();

  r.get('/session', requireSession, async (req, res) => {
    res.json(await sessionView(deps, sessionOf(req)));
  });

  r.post('/auth/login', async (req, res) => {
    const input = parseOrThrow(loginBody, req.body ?? {});
    const userId = await checkCredentials(deps, logins, clientIp(req), input);
    res.json(await startSession(deps, res, userId));
  });

  // No session needed: signing out twice, or with an expired cookie, is not an error.
  r.post('/auth/logout', async (req, res) => {
    if (req.session && !csrfTokenMatches(req, req.session.csrfToken)) throw csrfTokenError();
    if (req.session) await endSession(deps, req.session.id);
    clearSessionCookie(res, deps.config);
    res.json({ success: true });
  });

  r.post('/auth/logout-everywhere', requireSession, async (req, res) => {
    const sessionsEnded = await endUserSessions(deps, sessionOf(req).userId);
    clearSessionCookie(res, deps.config);
    res.json({ success: true, sessionsEnded });
  });

  r.post('/auth/link', async (req, res) => {
    const { token } = parseOrThrow(tokenBody, req.body ?? {});
    const userId = await consumeUserToken(deps.db, token, 'SIGN_IN', deps.clock.now());
    if (!userId) throw invalidLink();
    res.json(await startSession(deps, res, userId));
  });

  // Always the same answer; the mail (if any) leaves after it, so timing tells nothing either.
  r.post('/auth/password-reset/request', async (req, res) => {
    const { email } = parseOrThrow(emailOnlyBody, req.body ?? {});
    // Every request counts (nothing gives it back), before any work.
    await resets.reserve(clientIp(req), email);
    res.json({ success: true });
    if (!mailer) return deps.log.warn('password reset requested, but dashboard mail is not configured (DASHBOARD_MAIL_FROM)');
    void sendResetLink(deps, mailer, email).catch((err) => deps.log.error({ err }, 'password reset mail not sent'));
  });

  r.post('/auth/password-reset/confirm', async (req, res) => {
    const { token, password } = parseOrThrow(resetConfirmBody, req.body ?? {});
    const userId = await consumeUserToken(deps.db, token, 'PASSWORD_RESET', deps.clock.now());
    if (!userId) throw invalidLink();
    await setPassword(deps, userId, password);
    // Whoever held the old password is signed out everywhere; the new session starts clean.
    await endUserSessions(deps, userId);
    res.json(await startSession(deps, res, userId));
  });

  r.post('/account/password', requireSession, async (req, res) => {
    const session = sessionOf(req);
    await changePassword(deps, logins, clientIp(req), session.userId, parseOrThrow(changePasswordBody, req.body ?? {}));
    await endUserSessions(deps, session.userId, session.id);
    res.json({ success: true });
  });

  return r;
}

async function sendResetLink(deps: ApiDeps, mailer: DashboardMailer, email: string): Promise<void> {
  const user = await deps.db.user.findUnique({ where: { email }, select: { id: true } });
  if (!user) return;
  const token = await issueUserToken(deps.db, {
    userId: user.id,
    purpose: 'PASSWORD_RESET',
    ttlMs: deps.config.DASHBOARD_LINK_MINUTES * 60_000,
    now: deps.clock.now(),
  });
  await mailer(
    linkMessage(
      email,
      'Reset your mailrail password',
      [
        'Someone (hopefully you) asked to reset the password of your mailrail dashboard account.',
        `The link works once, for ${deps.config.DASHBOARD_LINK_MINUTES} minutes. If you did not ask for it, ignore this message: your password stays as it is.`,
      ],
      { label: 'Choose a new password', url: dashboardLink(deps.config.PUBLIC_URL, 'reset-password', token) },
    ),
  );
}
