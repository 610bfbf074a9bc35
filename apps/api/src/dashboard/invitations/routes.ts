import { z } from 'zod';
import { TeamRole } from '@mailrail/platform/db/generated/enums';
import type { ApiDeps } from '../../deps';
import { declareRoute } from '../../http/api-route';
import { tokenBody } from '../auth/sign-in';
import { sessionFields, sessionView, startSession } from '../session/session-view';
import { acceptInvitation, acceptInvitationBody, lookupInvitation } from './invitations';

const route = declareRoute<ApiDeps>();
const tag = 'Invitations';
// No session needed (the link is the proof); the same-origin check runs before these.
const noSession = { public: true, errors: [403] };
const accepted = { accepted: z.literal(true), teamId: z.number().int() };

/** Accepting an invitation (docs/dashboard-api.md). */
export const invitationAcceptRoutes = [
  route({
    method: 'post',
    path: '/api/dashboard/invitations/lookup',
    tag,
    summary: 'What the accept page shows of an invitation link',
    ...noSession,
    body: tokenBody,
    response: z.object({
      teamName: z.string(),
      email: z.string(),
      role: z.enum(TeamRole),
      expiresAt: z.iso.datetime(),
      needsPassword: z.boolean().describe('The address has no account with a password yet: accepting sets one'),
    }),
    handle: (deps, { body }) => lookupInvitation(deps, body.token),
  }),
  route({
    method: 'post',
    path: '/api/dashboard/invitations/accept',
    tag,
    summary: 'Accepts an invitation; signs in when a new password was set here (or the session is already that user)',
    ...noSession,
    body: acceptInvitationBody,
    response: z.union([
      z.object({ ...accepted, signedIn: z.literal(true), ...sessionFields }),
      z.object({ ...accepted, signedIn: z.literal(false) }),
    ]),
    serve: async (deps, { body }, req, res) => {
      const done = await acceptInvitation(deps, body);
      const base = { accepted: true, teamId: done.teamId };
      // A new password was just chosen here: sign in. Otherwise the account's owner signs in as usual
      // (and a session of that same user simply sees the new team).
      if (done.setPassword) return void res.json({ ...base, signedIn: true, ...(await startSession(deps, res, done.userId)) });
      if (req.session?.userId === done.userId) return void res.json({ ...base, signedIn: true, ...(await sessionView(deps, req.session)) });
      res.json({ ...base, signedIn: false });
    },
  }),
];
