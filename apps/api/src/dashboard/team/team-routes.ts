import { Router } from 'express';
import type { ApiDeps } from '../../deps';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import type { ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import { parseOrThrow } from '../../http/validate';
import { addApiKey, apiKeyIdParam, createApiKeyBody, listApiKeys, revokeTeamApiKey } from '../api-keys/api-keys';
import { emailLogPage, emailLogQuery } from '../email-log/email-log';
import { createInvitationBody, invitationIdParam, inviteMember, listInvitations, revokeInvitation } from '../invitations/invitations';
import type { DashboardMailer } from '../mail/dashboard-mail';
import { listMembers, memberUserIdParam, removeMember, updateMemberBody, updateMemberRole } from '../members/members';
import { overview } from '../overview/overview';
import { teamSettings, updateSettingsBody, updateTeamSettings } from '../settings/settings';
import { memberOf, requireAdmin } from './team-access';

/** Dashboard-only routes of one team (after teamAccess): what the public API does not offer. */
export function teamRoutes(
  deps: ApiDeps,
  opts: { mailer: DashboardMailer | null; metrics?: Metrics; apiKeyCache: ApiKeyCache | null },
): Router {
  const r = Router();

  r.get('/email-log', async (req, res) => {
    res.json(await emailLogPage(deps, req.auth, parseOrThrow(emailLogQuery, req.query, 'query')));
  });

  r.get('/overview', async (req, res) => {
    res.json(await overview(deps, req.auth));
  });

  r.get('/api-keys', requireAdmin, async (req, res) => {
    res.json(await listApiKeys(deps, req.auth));
  });
  r.post('/api-keys', requireAdmin, async (req, res) => {
    res.json(await addApiKey(deps, req.auth, parseOrThrow(createApiKeyBody, req.body ?? {})));
  });
  r.delete('/api-keys/:id', requireAdmin, async (req, res) => {
    res.json(
      await revokeTeamApiKey(
        { ...deps, metrics: opts.metrics, apiKeyCache: opts.apiKeyCache },
        req.auth,
        parseOrThrow(apiKeyIdParam, req.params, 'path').id,
      ),
    );
  });

  r.get('/members', async (req, res) => {
    res.json(await listMembers(deps, memberOf(req).teamId));
  });
  r.patch('/members/:userId', requireAdmin, async (req, res) => {
    const { userId } = parseOrThrow(memberUserIdParam, req.params, 'path');
    res.json(await updateMemberRole(deps, memberOf(req).teamId, userId, parseOrThrow(updateMemberBody, req.body ?? {}).role));
  });
  r.delete('/members/:userId', requireAdmin, async (req, res) => {
    const { userId } = parseOrThrow(memberUserIdParam, req.params, 'path');
    res.json(await removeMember(deps, memberOf(req).teamId, userId));
  });

  r.get('/invitations', async (req, res) => {
    res.json(await listInvitations(deps, memberOf(req).teamId));
  });
  r.post('/invitations', requireAdmin, async (req, res) => {
    const member = memberOf(req);
    res.json(await inviteMember(deps, opts.mailer, member.teamId, member.userId, parseOrThrow(createInvitationBody, req.body ?? {})));
  });
  r.delete('/invitations/:id', requireAdmin, async (req, res) => {
    res.json(await revokeInvitation(deps, memberOf(req).teamId, parseOrThrow(invitationIdParam, req.params, 'path').id));
  });

  r.get('/settings', async (req, res) => {
    const member = memberOf(req);
    res.json(await teamSettings(deps, member.teamId, member.role));
  });
  r.patch('/settings', requireAdmin, async (req, res) => {
    const member = memberOf(req);
    res.json(await updateTeamSettings(deps, member.teamId, member.role, parseOrThrow(updateSettingsBody, req.body ?? {})));
  });

  return r;
}
