import type { Request } from 'express';
import { z } from 'zod';
import { issueUserToken, consumeUserToken } from '@mailrail/domain/users/user-tokens';
import { dashboardLink } from '@mailrail/domain/users/link-tokens';
import type { ApiDeps } from '../../deps';
import { declareRoute } from '../../http/api-route';
import { linkMessage, type SystemMailer } from '@mailrail/domain/system-mail/system-mail';
import { clearSessionCookie } from '../session/cookie';
import { csrfTokenError, csrfTokenMatches } from '../session/csrf';
import { requireSession, sessionOf } from '../session/middleware';
import { sessionResponse, sessionView, startSession } from '../session/session-view';
import { endSession, endUserSessions } from '../session/sessions';
import type { LoginThrottle } from './login-throttle';
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

/** What the session and sign-in routes' handlers take: the throttles are made once per app. */
export type AuthRouteDeps = ApiDeps & { mailer: SystemMailer | null; logins: LoginThrottle; resets: LoginThrottle };

const success = z.object({ success: z.literal(true) });
const route = declareRoute<AuthRouteDeps>();
const tag = 'Session';
// Routes without a session yet: the same-origin check (403) and, for sign-in, the throttle (429).
const noSession = { public: true, errors: [403] };

/** Session, sign-in and account routes (docs/dashboard-api.md). Same-origin checks run before these. */
export const authRoutes = [
  route({
    method: 'get',
    path: '/api/dashboard/session',
    tag,
    summary: 'The signed-in user, their teams and the CSRF token',
    middleware: [requireSession],
    errors: [],
    response: sessionResponse,
    serve: async (deps, _input, req, res) => void res.json(await sessionView(deps, sessionOf(req))),
  }),
  route({
    method: 'post',
    path: '/api/dashboard/auth/login',
    tag,
    summary: 'Signs in with email and password (sets the session cookie)',
    ...noSession,
    errors: [401, 403, 429],
    body: loginBody,
    response: sessionResponse,
    serve: async (deps, { body }, req, res) => {
      const userId = await checkCredentials(deps, deps.logins, clientIp(req), body);
      res.json(await startSession(deps, res, userId));
    },
  }),
  // No session needed: signing out twice, or with an expired cookie, is not an error.
  route({
    method: 'post',
    path: '/api/dashboard/auth/logout',
    tag,
    summary: 'Signs out this session (none is not an error)',
    ...noSession,
    response: success,
    serve: async (deps, _input, req, res) => {
      if (req.session && !csrfTokenMatches(req, req.session.csrfToken)) throw csrfTokenError();
      if (req.session) await endSession(deps, req.session.id);
      clearSessionCookie(res, deps.config);
      res.json({ success: true });
    },
  }),
  route({
    method: 'post',
    path: '/api/dashboard/auth/logout-everywhere',
    tag,
    summary: 'Ends every session of the user, this one included',
    middleware: [requireSession],
    errors: [],
    response: z.object({ success: z.literal(true), sessionsEnded: z.number().int() }),
    serve: async (deps, _input, req, res) => {
      const sessionsEnded = await endUserSessions(deps, sessionOf(req).userId);
      clearSessionCookie(res, deps.config);
      res.json({ success: true, sessionsEnded });
    },
  }),
  route({
    method: 'post',
    path: '/api/dashboard/auth/link',
    tag,
    summary: 'Signs in with a single-use link from an email',
    ...noSession,
    body: tokenBody,
    response: sessionResponse,
    serve: async (deps, { body }, _req, res) => {
      const userId = await consumeUserToken(deps.db, body.token, 'SIGN_IN', deps.clock.now());
      if (!userId) throw invalidLink();
      res.json(await startSession(deps, res, userId));
    },
  }),
  // Always the same answer; the mail (if any) leaves after it, so timing tells nothing either.
  route({
    method: 'post',
    path: '/api/dashboard/auth/password-reset/request',
    tag,
    summary: 'Emails a password reset link if the address has an account (always the same answer)',
    ...noSession,
    errors: [403, 429],
    body: emailOnlyBody,
    response: success,
    serve: async (deps, { body: { email } }, req, res) => {
      // Every request counts (nothing gives it back), before any work.
      await deps.resets.reserve(clientIp(req), email);
      res.json({ success: true });
      const mailer = deps.mailer;
      if (!mailer) return deps.log.warn('password reset requested, but dashboard mail is not configured (DASHBOARD_MAIL_FROM)');
      void sendResetLink(deps, mailer, email).catch((err) => deps.log.error({ err }, 'password reset mail not sent'));
    },
  }),
  route({
    method: 'post',
    path: '/api/dashboard/auth/password-reset/confirm',
    tag,
    summary: 'Sets a new password with a reset link, signs out everywhere and signs in',
    ...noSession,
    body: resetConfirmBody,
    response: sessionResponse,
    serve: async (deps, { body: { token, password } }, _req, res) => {
      const userId = await consumeUserToken(deps.db, token, 'PASSWORD_RESET', deps.clock.now());
      if (!userId) throw invalidLink();
      await setPassword(deps, userId, password);
      // Whoever held the old password is signed out everywhere; the new session starts clean.
      await endUserSessions(deps, userId);
      res.json(await startSession(deps, res, userId));
    },
  }),
  route({
    method: 'post',
    path: '/api/dashboard/account/password',
    tag,
    summary: "Changes the user's password; their other sessions end",
    middleware: [requireSession],
    errors: [429],
    body: changePasswordBody,
    response: success,
    serve: async (deps, { body }, req, res) => {
      const session = sessionOf(req);
      await changePassword(deps, deps.logins, clientIp(req), session.userId, body);
      await endUserSessions(deps, session.userId, session.id);
      res.json({ success: true });
    },
  }),
];

async function sendResetLink(deps: ApiDeps, mailer: SystemMailer, email: string): Promise<void> {
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
