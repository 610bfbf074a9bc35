import { z } from 'zod';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import type { ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import { ApiPermission, EmailSource, EmailStatus, TeamRole } from '@mailrail/platform/db/generated/enums';
import type { SystemMailer } from '@mailrail/domain/system-mail/system-mail';
import type { ApiDeps } from '../../deps';
import type { SendContext } from '../../emails/send-emails';
import { declareRoute } from '../../http/api-route';
import { intString } from '../../http/query';
import { outcomeCountsSchema, outcomeRatesSchema, reputationResponse, timeSeriesResponse } from '../../analytics/routes';
import { addApiKey, apiKeyIdParam, createApiKeyBody, listApiKeys, revokeTeamApiKey } from '../api-keys/api-keys';
import { emailLogPage, emailLogQuery } from '../email-log/email-log';
import { createInvitationBody, invitationIdParam, inviteMember, listInvitations, revokeInvitation } from '../invitations/invitations';
import { smtpSettings } from '../instance/smtp-settings';
import { sendTestEmail } from '../instance/test-email';
import { listMembers, memberUserIdParam, removeMember, updateMemberBody, updateMemberRole } from '../members/members';
import { overview } from '../overview/overview';
import { teamSettings, updateSettingsBody, updateTeamSettings } from '../settings/settings';
import { memberOf, requireAdmin } from './team-access';

// The dashboard-only routes of one team (after the session, teamAccess and the team's rate
// limit): what the public API does not offer. Declared like /api/v1's routes: dashboard/routes.ts
// serves them, dashboard/openapi.ts documents them for the web app's generated types.

/** What the team routes' handlers take. */
export type TeamRouteDeps = ApiDeps & {
  mailer: SystemMailer | null;
  send: SendContext;
  metrics?: Metrics;
  apiKeyCache: ApiKeyCache | null;
};

/** Where the team routes are mounted; teamAccess has checked the membership before any of them. */
export const TEAM_PREFIX = '/api/dashboard/teams/:teamId';
const teamPath = z.object({ teamId: intString(1) });

const id = z.number().int();
const dateTime = z.iso.datetime();
const removedById = z.object({ id, success: z.literal(true) });

const emailLogItem = z
  .object({
    id: z.string(),
    from: z.string(),
    to: z.array(z.string()),
    subject: z.string(),
    latestStatus: z.enum(EmailStatus),
    source: z.enum(EmailSource),
    domainId: id.nullable(),
    campaignId: z.string().nullable(),
    scheduledAt: dateTime.nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'EmailLogItem' });

const apiKeyFields = {
  id,
  name: z.string(),
  permission: z.enum(ApiPermission),
  domainId: id.nullable(),
  partialToken: z.string(),
  lastUsed: dateTime.nullable(),
  createdAt: dateTime,
};
const apiKey = z.object(apiKeyFields).meta({ id: 'ApiKey' });

const member = z.object({ userId: id, email: z.string(), role: z.enum(TeamRole), joinedAt: dateTime }).meta({ id: 'Member' });

const invitation = z
  .object({
    id,
    email: z.string(),
    role: z.enum(TeamRole),
    invitedBy: z.string().nullable().describe("The inviter's email (null once their account is gone)"),
    createdAt: dateTime,
    expiresAt: dateTime,
    expired: z.boolean(),
  })
  .meta({ id: 'Invitation' });

const teamSettingsResponse = z
  .object({
    id,
    name: z.string(),
    apiRateLimit: id.nullable().describe("The team's own rate (requests per second); null for the server's default"),
    effectiveRateLimit: id,
    defaultRateLimit: id,
    role: z.enum(TeamRole).describe("The signed-in user's role in this team"),
  })
  .meta({ id: 'TeamSettings' });

const rateThresholds = z.object({ review: z.number(), pause: z.number() });

const route = declareRoute<TeamRouteDeps>();
const tag = 'Team';
const admin = { middleware: [requireAdmin], errors: [403, 404] };

export const teamRoutes = [
  route({
    method: 'get',
    path: `${TEAM_PREFIX}/email-log`,
    tag,
    summary: 'The team\'s emails, newest first, keyset-paged (docs/dashboard.md, "Email log at scale")',
    params: teamPath,
    query: emailLogQuery,
    response: z.object({
      data: z.array(emailLogItem),
      nextCursor: z.string().nullable(),
      estimatedTotal: z
        .number()
        .int()
        .optional()
        .describe('The planner\'s estimate of the emails matching (first page only): shown as "about"'),
    }),
    handle: (deps, { auth, query }) => emailLogPage(deps, auth, query),
  }),
  route({
    method: 'get',
    path: `${TEAM_PREFIX}/overview`,
    tag,
    summary: 'The Overview page in one answer, from the same figures as /v1/analytics',
    params: teamPath,
    response: z.object({
      today: outcomeCountsSchema,
      todayRates: outcomeRatesSchema,
      last30Days: outcomeCountsSchema,
      last30DaysRates: outcomeRatesSchema,
      series: timeSeriesResponse.shape.result,
      reputation: reputationResponse,
      thresholds: z.object({ bounceRate: rateThresholds, complaintRate: rateThresholds }),
    }),
    handle: (deps, { auth }) => overview(deps, auth),
  }),
  route({
    method: 'get',
    path: `${TEAM_PREFIX}/smtp-settings`,
    tag,
    summary: 'What an application needs to reach the SMTP relay',
    params: teamPath,
    response: z
      .object({
        host: z.string(),
        ports: z.array(z.object({ port: id, security: z.enum(['STARTTLS', 'TLS']) })),
        username: z.string(),
        certificate: z.object({ source: z.enum(['FILE', 'GENERATED_AT_START']), fingerprint256: z.string().nullable() }),
      })
      .meta({ id: 'SmtpSettings' }),
    handle: (deps) => smtpSettings(deps),
  }),
  route({
    method: 'post',
    path: `${TEAM_PREFIX}/test-email`,
    tag,
    summary: "A test email from the team's first verified domain to the signed-in user",
    params: teamPath,
    response: z.object({ emailId: z.string(), from: z.string(), to: z.string() }),
    serve: async (deps, { auth }, req, res) => void res.json(await sendTestEmail(deps.send, auth, memberOf(req).userId)),
  }),
  route({
    method: 'get',
    path: `${TEAM_PREFIX}/api-keys`,
    tag,
    summary: "The team's API keys (never their secrets)",
    ...admin,
    params: teamPath,
    response: z.object({ data: z.array(apiKey) }),
    handle: (deps, { auth }) => listApiKeys(deps, auth),
  }),
  route({
    method: 'post',
    path: `${TEAM_PREFIX}/api-keys`,
    tag,
    summary: 'Creates an API key; the answer holds the key, the only time it is shown',
    ...admin,
    params: teamPath,
    body: createApiKeyBody,
    response: z.object({ ...apiKeyFields, apiKey: z.string() }),
    handle: (deps, { auth, body }) => addApiKey(deps, auth, body),
  }),
  route({
    method: 'delete',
    path: `${TEAM_PREFIX}/api-keys/:id`,
    tag,
    summary: 'Revokes an API key at once on every API replica',
    ...admin,
    params: teamPath.extend(apiKeyIdParam.shape),
    response: removedById,
    handle: (deps, { auth, params }) => revokeTeamApiKey(deps, auth, params.id),
  }),
  route({
    method: 'get',
    path: `${TEAM_PREFIX}/members`,
    tag,
    summary: "The team's members, oldest first",
    params: teamPath,
    response: z.object({ data: z.array(member) }),
    handle: (deps, { auth }) => listMembers(deps, auth.teamId),
  }),
  route({
    method: 'patch',
    path: `${TEAM_PREFIX}/members/:userId`,
    tag,
    summary: "Changes a member's role (a team keeps at least one ADMIN)",
    ...admin,
    params: teamPath.extend(memberUserIdParam.shape),
    body: updateMemberBody,
    response: member,
    handle: (deps, { auth, params, body }) => updateMemberRole(deps, auth.teamId, params.userId, body.role),
  }),
  route({
    method: 'delete',
    path: `${TEAM_PREFIX}/members/:userId`,
    tag,
    summary: 'Removes a member (a team keeps at least one ADMIN)',
    ...admin,
    params: teamPath.extend(memberUserIdParam.shape),
    response: z.object({ userId: id, success: z.literal(true) }),
    handle: (deps, { auth, params }) => removeMember(deps, auth.teamId, params.userId),
  }),
  route({
    method: 'get',
    path: `${TEAM_PREFIX}/invitations`,
    tag,
    summary: 'Pending invitations, newest first (expired ones flagged)',
    params: teamPath,
    response: z.object({ data: z.array(invitation) }),
    handle: (deps, { auth }) => listInvitations(deps, auth.teamId),
  }),
  route({
    method: 'post',
    path: `${TEAM_PREFIX}/invitations`,
    tag,
    summary: 'Invites an address by email (replacing its pending invitation)',
    ...admin,
    errors: [403, 404, 409],
    params: teamPath,
    body: createInvitationBody,
    response: invitation,
    serve: async (deps, { auth, body }, req, res) =>
      void res.json(await inviteMember(deps, deps.mailer, auth.teamId, memberOf(req).userId, body)),
  }),
  route({
    method: 'delete',
    path: `${TEAM_PREFIX}/invitations/:id`,
    tag,
    summary: 'Revokes a pending invitation',
    ...admin,
    params: teamPath.extend(invitationIdParam.shape),
    response: removedById,
    handle: (deps, { auth, params }) => revokeInvitation(deps, auth.teamId, params.id),
  }),
  route({
    method: 'get',
    path: `${TEAM_PREFIX}/settings`,
    tag,
    summary: "The team's name and rate limit",
    params: teamPath,
    response: teamSettingsResponse,
    serve: async (deps, { auth }, req, res) => void res.json(await teamSettings(deps, auth.teamId, memberOf(req).role)),
  }),
  route({
    method: 'patch',
    path: `${TEAM_PREFIX}/settings`,
    tag,
    summary: "Changes the team's name or rate limit",
    ...admin,
    params: teamPath,
    body: updateSettingsBody,
    response: teamSettingsResponse,
    serve: async (deps, { auth, body }, req, res) => void res.json(await updateTeamSettings(deps, auth.teamId, memberOf(req).role, body)),
  }),
];
