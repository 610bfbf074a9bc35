import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import type { ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import type { ApiDeps } from '../deps';
import type { SendContext } from '../emails/send-emails';
import { notFoundHandler } from '../http/errors';
import { bindRoutes, routerOf } from '../http/api-route';
import { createRateLimit } from '../http/rate-limit';
import { createLoginThrottle, TooManyAttempts } from './auth/login-throttle';
import { authRoutes } from './auth/routes';
import { invitationAcceptRoutes } from './invitations/routes';
import { createDashboardMailer } from './mail/dashboard-mail';
import { instanceRoutes } from './instance/routes';
import { requireSameOrigin } from './session/csrf';
import { loadSession, requireSession } from './session/middleware';
import { teamAccess } from './team/team-access';
import { TEAM_PREFIX, teamRoutes } from './team/team-routes';

/** Where app.ts mounts these routes. */
const DASHBOARD_PREFIX = '/api/dashboard';
// Sign-in, invitation and account forms are small; the team routes take BODY_LIMIT like /api/v1.
const SMALL_BODY = '64kb';

const noStore: RequestHandler = (_req, res, next) => {
  // Answers carry session data and, once, secrets: never cached by the browser or a proxy.
  res.setHeader('Cache-Control', 'no-store');
  next();
};

const retryAfter: ErrorRequestHandler = (err, _req, res, next) => {
  if (err instanceof TooManyAttempts) res.setHeader('Retry-After', String(err.retryAfter));
  next(err);
};

/**
 * /api/dashboard (docs/dashboard-api.md). `publicApi` is the router of /api/v1's resources: it is
 * mounted per team at /teams/:teamId/v1 behind a session and a membership instead of an API key,
 * so validation, errors and team scoping are the API's own code.
 */
export function dashboardRoutes(
  deps: ApiDeps,
  opts: { publicApi: Router; send: SendContext; metrics?: Metrics; apiKeyCache: ApiKeyCache },
): Router {
  const mailer = createDashboardMailer(opts.send);
  const r = Router();
  r.use(noStore, requireSameOrigin(deps.config), loadSession(deps));

  const team = Router({ mergeParams: true });
  team.use('/v1', opts.publicApi); // reads each route's body itself (routerOf)
  const teamDeps = { ...deps, mailer, send: opts.send, metrics: opts.metrics, apiKeyCache: opts.apiKeyCache };
  team.use(routerOf([bindRoutes(teamRoutes, teamDeps)], TEAM_PREFIX, { bodyLimit: deps.config.BODY_LIMIT, mergeParams: true }));
  // Session and membership first, then the team's rate limit, and only then is a body read.
  r.use('/teams/:teamId', requireSession, teamAccess(deps), createRateLimit(deps), team);

  const authDeps = { ...deps, mailer, logins: createLoginThrottle(deps, 'login'), resets: createLoginThrottle(deps, 'reset') };
  r.use(
    routerOf(
      [bindRoutes(instanceRoutes, deps), bindRoutes(invitationAcceptRoutes, deps), bindRoutes(authRoutes, authDeps)],
      DASHBOARD_PREFIX,
      { bodyLimit: SMALL_BODY },
    ),
  );
  r.use(notFoundHandler);
  r.use(retryAfter);
  return r;
}
