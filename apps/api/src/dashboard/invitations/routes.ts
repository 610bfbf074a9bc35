import { Router } from 'express';
import type { ApiDeps } from '../../deps';
import { parseOrThrow } from '../../http/validate';
import { tokenBody } from '../auth/sign-in';
import { sessionView, startSession } from '../session/session-view';
import { acceptInvitation, acceptInvitationBody, lookupInvitation } from './invitations';

/** Accepting an invitation: no session needed (the same-origin check runs before these). */
export function invitationAcceptRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.post('/lookup', async (req, res) => {
    res.json(await lookupInvitation(deps, parseOrThrow(tokenBody, req.body ?? {}).token));
  });
  r.post('/accept', async (req, res) => {
    const accepted = await acceptInvitation(deps, parseOrThrow(acceptInvitationBody, req.body ?? {}));
    const base = { accepted: true, teamId: accepted.teamId };
    // A new password was just chosen here: sign in. Otherwise the account's owner signs in as usual
    // (and a session of that same user simply sees the new team).
    if (accepted.setPassword) return void res.json({ ...base, signedIn: true, ...(await startSession(deps, res, accepted.userId)) });
    if (req.session?.userId === accepted.userId)
      return void res.json({ ...base, signedIn: true, ...(await sessionView(deps, req.session)) });
    res.json({ ...base, signedIn: false });
  });
  return r;
}
