import { documentRoutes, generateOpenApiDocument, type DocumentStyle, type RouteDoc } from '../openapi/registry';
import { authRoutes } from './auth/routes';
import { instanceRoutes } from './instance/routes';
import { invitationAcceptRoutes } from './invitations/routes';
import { TEAM_PREFIX, teamRoutes } from './team/team-routes';

// The dashboard's own routes (not /teams/:teamId/v1, which is the public API's router) as an
// OpenAPI document, made from the same declarations dashboard/routes.ts serves. It is not served:
// `npm run api:types` generates the web app's wire types from it (apps/web/src/api/generated/dashboard.ts),
// and the route tests hold every answer to it (testing/response-contract.ts).

const isTeamRoute = (doc: RouteDoc) => doc.path.startsWith(`${TEAM_PREFIX}/`);
const changesState = (doc: RouteDoc) => doc.method !== 'get';

/** A session cookie on every route but the sign-in and invitation forms; X-CSRF-Token on every state-changing one. */
const dashboardStyle: DocumentStyle = {
  security: (doc): Record<string, string[]>[] =>
    doc.public ? [] : [changesState(doc) ? { sessionCookie: [], csrfToken: [] } : { sessionCookie: [] }],
  // A bad URL (400) and PostgreSQL or Redis unreachable (503) anywhere; a body too large (413) and
  // the same-origin or CSRF check (403) on a state-changing request; no session (401); not a member
  // of the team, or no such team (404), and the team's rate limit (429).
  sharedErrors: (doc) => [
    400,
    503,
    ...(changesState(doc) ? [403, 413] : []),
    ...(doc.public ? [] : [401]),
    ...(isTeamRoute(doc) ? [404, 429] : []),
  ],
  errorDescriptions: {
    401: 'Not signed in, the session has ended, or (sign-in) a wrong email or password',
    403: 'CSRF check failed (Origin, X-CSRF-Token), or the route needs the ADMIN role',
    404: 'Not found, or a team the user is not a member of',
    429: "Too many sign-in attempts from this address or for this account, or the team's rate limit (see Retry-After)",
  },
};

export const dashboardCapabilities = [teamRoutes, authRoutes, invitationAcceptRoutes, instanceRoutes];

export function dashboardApiDocumentation(serverUrl: string) {
  return generateOpenApiDocument(
    dashboardCapabilities.map((routes) => documentRoutes(routes, dashboardStyle)),
    serverUrl,
    {
      title: 'mailrail dashboard API',
      description:
        'The routes the web dashboard calls under /api/dashboard (docs/dashboard-api.md), besides /api/dashboard/teams/{teamId}/v1, which is the public API under a session. For the web app only.',
      securitySchemes: {
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'mailrail_session', description: 'Set by the sign-in routes; httpOnly' },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: "The session's csrfToken (GET /api/dashboard/session), with an Origin header of the dashboard's own origin",
        },
      },
    },
  );
}
