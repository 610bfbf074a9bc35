import request from 'supertest';
import { hashSecretToken } from '@mailrail/domain/users/link-tokens';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi } from '../../testing/api-harness';
import { expectBadRequest } from '../../testing/expect-bad-request';
import { addDashboardMailTeam, addUser, browser, dashboardMailToken, PASSWORD, signIn, type Browser } from '../testing';

// What the Settings, API keys and invitation pages do, end to end through the routes (the mail
// itself reaching SES is test/e2e/dashboard-mail.test.ts).

let api: TestApi;
let admin: Browser;
let adminId: number;
let base: string;

beforeAll(async () => {
  api = await startTestApi({
    DASHBOARD_MAIL_FROM: 'mailrail <dashboard@mail.features.test>',
    DASHBOARD_MAIL_TEAM_ID: '2',
    API_RATE_LIMIT: '25',
    API_RATE_LIMIT_MAX: '50',
  });
  expect(api.team.teamId).toBe(1);
  await addDashboardMailTeam(api, 'mail.features.test');
  const a = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
  adminId = a.userId;
  admin = await signIn(api, a.email);
  base = `/api/dashboard/teams/${api.team.teamId}`;
});
afterAll(async () => {
  await api.close();
});

/** The invitation link of the newest dashboard email to `to`, read from the message as sent. */
const invitationToken = (to: string) => dashboardMailToken(api, to);

describe('API keys', () => {
  it('creates a key shown once, lists it with its last use and partial token only, and revokes it at once', async () => {
    const domain = await api.addDomain(api.team.teamId, 'keys.features.test');
    const created = await admin.post(`${base}/api-keys`, { name: 'shop', permission: 'SENDING', domainId: domain.id }).expect(200);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'shop',
      permission: 'SENDING',
      domainId: domain.id,
      partialToken: expect.stringMatching(/^us_\w{3}\.\.\.\w{3}$/),
      lastUsed: null,
      createdAt: expect.any(String),
      apiKey: expect.stringMatching(/^us_\w{10}_[0-9a-f]{32}$/),
    });
    const key = created.body.apiKey as string;
    await request(api.app)
      .post('/api/v1/emails')
      .set({ Authorization: `Bearer ${key}` })
      .send({ from: `a@${domain.name}`, to: 'x@example.org', subject: 'S', text: 't' })
      .expect(200);

    // The last use is written in the background after the request.
    const list = await waitFor(
      async () => {
        const res = await admin.get(`${base}/api-keys`).expect(200);
        return res.body.data.find((k: { id: number; lastUsed: string | null }) => k.id === created.body.id)?.lastUsed ? res : null;
      },
      { timeoutMs: 10_000, what: 'lastUsed in the key list' },
    );
    const listed = list.body.data.find((k: { id: number }) => k.id === created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(key.slice(14));
    expect(listed).not.toHaveProperty('apiKey');
    expect(listed).not.toHaveProperty('tokenHash');

    await admin.delete(`${base}/api-keys/${created.body.id}`).expect(200, { id: created.body.id, success: true });
    await request(api.app)
      .get('/api/v1/emails')
      .set({ Authorization: `Bearer ${key}` })
      .expect(403);
    expect((await admin.get(`${base}/api-keys`)).body.data.map((k: { id: number }) => k.id)).not.toContain(created.body.id);
    await admin.delete(`${base}/api-keys/${created.body.id}`).expect(404);
  });

  it('refuses a domain of another team and bad input with the API error shape', async () => {
    const other = await api.newTeam('Other');
    const foreign = await api.addDomain(other.teamId, 'foreign.features.test');
    const res = await admin.post(`${base}/api-keys`, { name: 'x', domainId: foreign.id }).expect(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', issues: [{ path: ['domainId'], message: 'not a domain of this team' }] });
    await admin.post(`${base}/api-keys`, { name: '', permission: 'OWNER' }).expect(400);
    await admin.post(`${base}/api-keys`, { name: 'x'.repeat(101) }).expect(400);
  });
});

describe('members and invitations', () => {
  it('invites by email; the link shows the invitation, creates the account with a password, signs in, and works once', async () => {
    const res = await admin.post(`${base}/invitations`, { email: 'Newbie@Example.org', role: 'MEMBER' }).expect(200);
    expect(res.body).toMatchObject({
      email: 'newbie@example.org',
      role: 'MEMBER',
      invitedBy: expect.stringMatching(/@example\.org$/),
      expired: false,
    });
    expect(JSON.stringify(res.body)).not.toMatch(/token/i);
    // The invitation is the service's own mail: the email log names it so.
    const mail = await api.deps.db.email.findFirstOrThrow({ where: { to: { has: 'newbie@example.org' } } });
    expect(mail.source).toBe('SYSTEM');
    const listed = await admin.get(`${base}/invitations`).expect(200);
    expect(listed.body.data.map((i: { email: string }) => i.email)).toContain('newbie@example.org');

    const token = await invitationToken('newbie@example.org');
    expect(await api.deps.db.invitation.count({ where: { tokenHash: hashSecretToken(token) } })).toBe(1);
    const b = browser(api);
    const lookup = await b.post('/api/dashboard/invitations/lookup', { token }).expect(200);
    expect(lookup.body).toEqual({
      teamName: 'Test team',
      email: 'newbie@example.org',
      role: 'MEMBER',
      expiresAt: expect.any(String),
      needsPassword: true,
    });
    await b.post('/api/dashboard/invitations/accept', { token }).expect(400);
    await b.post('/api/dashboard/invitations/accept', { token, password: 'short' }).expect(400);
    const accepted = await b.post('/api/dashboard/invitations/accept', { token, password: 'my new password' }).expect(200);
    expect(accepted.body).toMatchObject({
      accepted: true,
      signedIn: true,
      teamId: api.team.teamId,
      teams: [{ id: api.team.teamId, role: 'MEMBER' }],
    });
    await b.get(`${base}/overview`).expect(200);
    await browser(api).post('/api/dashboard/invitations/accept', { token, password: 'my new password' }).expect(400);
    await browser(api).post('/api/dashboard/invitations/lookup', { token }).expect(400);
    expect((await admin.get(`${base}/invitations`)).body.data.map((i: { email: string }) => i.email)).not.toContain('newbie@example.org');
    await signIn(api, 'newbie@example.org', 'my new password');
  });

  it('inviting an address on the dashboard mail’s suppression list says the mail was not sent, and keeps nothing', async () => {
    const mailTeamId = api.config.DASHBOARD_MAIL_TEAM_ID!;
    await api.deps.db.suppression.create({
      data: { id: 'sup-invitee', teamId: mailTeamId, email: 'gone@example.org', reason: 'HARD_BOUNCE' },
    });
    const res = await admin.post(`${base}/invitations`, { email: 'Gone@Example.org', role: 'MEMBER' });
    expectBadRequest(res, ['email']);
    expect(res.body.error.message).toBe(
      "The invitation email was not sent: gone@example.org is on the dashboard mail's suppression list (an earlier email to it bounced permanently); nothing was saved. Invite another address, or ask the operator to remove it from the suppression list of the dashboard mail team",
    );
    expect(await api.deps.db.invitation.count({ where: { email: 'gone@example.org' } })).toBe(0);
    expect(
      (await api.deps.db.email.findFirstOrThrow({ where: { teamId: mailTeamId, toAddresses: { has: 'gone@example.org' } } })).latestStatus,
    ).toBe('SUPPRESSED');
  });

  it('an existing account accepting keeps its password and is not signed in by the link', async () => {
    const other = await api.newTeam('Second');
    const { email } = await addUser(api, [{ teamId: other.teamId, role: 'ADMIN' }]);
    await admin.post(`${base}/invitations`, { email, role: 'ADMIN' }).expect(200);
    const token = await invitationToken(email);
    expect((await browser(api).post('/api/dashboard/invitations/lookup', { token })).body.needsPassword).toBe(false);
    const res = await browser(api).post('/api/dashboard/invitations/accept', { token, password: 'attacker chosen pw' }).expect(200);
    expect(res.body).toEqual({ accepted: true, signedIn: false, teamId: api.team.teamId });
    const b = await signIn(api, email, PASSWORD);
    expect((await b.get('/api/dashboard/session')).body.teams.map((t: { role: string }) => t.role)).toEqual(['ADMIN', 'ADMIN']);
  });

  it('inviting again replaces the pending link; a member cannot be invited; revoked invitations stop working', async () => {
    await admin.post(`${base}/invitations`, { email: 'twice@example.org' }).expect(200);
    const first = await invitationToken('twice@example.org');
    await new Promise((r) => setTimeout(r, 5));
    await admin.post(`${base}/invitations`, { email: 'twice@example.org' }).expect(200);
    const second = await invitationToken('twice@example.org');
    expect(second).not.toBe(first);
    await browser(api).post('/api/dashboard/invitations/lookup', { token: first }).expect(400);
    const pending = (await admin.get(`${base}/invitations`)).body.data.filter((i: { email: string }) => i.email === 'twice@example.org');
    expect(pending).toHaveLength(1);
    await admin.delete(`${base}/invitations/${pending[0].id}`).expect(200);
    await browser(api).post('/api/dashboard/invitations/lookup', { token: second }).expect(400);

    const self = await api.deps.db.user.findUniqueOrThrow({ where: { id: adminId } });
    const dup = await admin.post(`${base}/invitations`, { email: self.email }).expect(409);
    expect(dup.body.error.code).toBe('NOT_UNIQUE');
    await admin.post(`${base}/invitations`, { email: 'not an address' }).expect(400);
  });

  it('an expired invitation is refused', async () => {
    await admin.post(`${base}/invitations`, { email: 'late@example.org' }).expect(200);
    const token = await invitationToken('late@example.org');
    await api.deps.db.invitation.updateMany({ where: { email: 'late@example.org' }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await browser(api).post('/api/dashboard/invitations/accept', { token, password: 'whatever password' }).expect(400);
    expect((await admin.get(`${base}/invitations`)).body.data.find((i: { email: string }) => i.email === 'late@example.org').expired).toBe(
      true,
    );
  });

  it('lists members, changes roles and never leaves the team without an admin', async () => {
    const team = await api.newTeam('Roles');
    const solo = await addUser(api, [{ teamId: team.teamId, role: 'ADMIN' }]);
    const other = await addUser(api, [{ teamId: team.teamId, role: 'MEMBER' }]);
    const b = await signIn(api, solo.email);
    const t = `/api/dashboard/teams/${team.teamId}`;
    const members = await b.get(`${t}/members`).expect(200);
    expect(members.body.data).toEqual([
      { userId: solo.userId, email: solo.email, role: 'ADMIN', joinedAt: expect.any(String) },
      { userId: other.userId, email: other.email, role: 'MEMBER', joinedAt: expect.any(String) },
    ]);
    const last = await b.patch(`${t}/members/${solo.userId}`, { role: 'MEMBER' }).expect(400);
    expect(last.body.error.message).toBe('A team needs at least one admin');
    await b.delete(`${t}/members/${solo.userId}`).expect(400);
    await b.patch(`${t}/members/${other.userId}`, { role: 'ADMIN' }).expect(200);
    await b.patch(`${t}/members/${solo.userId}`, { role: 'MEMBER' }).expect(200);
    // Demoted: the next request already has the MEMBER role.
    await b.patch(`${t}/members/${other.userId}`, { role: 'MEMBER' }).expect(403);
    await b.patch(`${t}/members/${other.userId}`, { role: 'OWNER' }).expect(403);
  });

  it('without dashboard mail configured, inviting answers 503 and keeps nothing', async () => {
    const bare = await startTestApi();
    try {
      const { email } = await addUser(bare, [{ teamId: bare.team.teamId, role: 'ADMIN' }]);
      const b = await signIn(bare, email);
      const res = await b.post(`/api/dashboard/teams/${bare.team.teamId}/invitations`, { email: 'x@example.org' }).expect(503);
      expect(res.body.error.message).toMatch(/DASHBOARD_MAIL_FROM/);
      expect(await bare.deps.db.invitation.count()).toBe(0);
    } finally {
      await bare.close();
    }
  });
});

describe('settings', () => {
  it('shows the rate limit to everyone and lets an admin rename the team and set its limit', async () => {
    const s = await admin.get(`${base}/settings`).expect(200);
    expect(s.body).toEqual({
      id: api.team.teamId,
      name: expect.any(String),
      apiRateLimit: null,
      effectiveRateLimit: 25,
      defaultRateLimit: 25,
      role: 'ADMIN',
    });
    const res = await admin.patch(`${base}/settings`, { name: '  Acme mail  ', apiRateLimit: 5 }).expect(200);
    expect(res.body).toMatchObject({ name: 'Acme mail', apiRateLimit: 5, effectiveRateLimit: 5 });
    // The new limit of 5 applies at once, and this second's window already holds the file's earlier
    // requests: the next ones go in a fresh window.
    await new Promise((r) => setTimeout(r, 1100));
    await admin.patch(`${base}/settings`, { apiRateLimit: -1 }).expect(400);
    await admin.patch(`${base}/settings`, { name: '' }).expect(400);
    const back = await admin.patch(`${base}/settings`, { apiRateLimit: null }).expect(200);
    expect(back.body.effectiveRateLimit).toBe(25);
  });

  it('an admin cannot set the rate limit to 0 (unlimited) or above API_RATE_LIMIT_MAX; the ceiling itself is allowed', async () => {
    for (const apiRateLimit of [0, 51, 100_000]) {
      const res = await admin.patch(`${base}/settings`, { apiRateLimit }).expect(400);
      expect(res.body).toEqual({
        error: {
          code: 'BAD_REQUEST',
          message: expect.stringContaining('at most 50 requests per second (API_RATE_LIMIT_MAX)'),
          issues: [{ path: ['apiRateLimit'], message: expect.any(String) }],
        },
      });
    }
    expect((await api.deps.db.team.findUniqueOrThrow({ where: { id: api.team.teamId } })).apiRateLimit).toBeNull();
    expect((await admin.patch(`${base}/settings`, { apiRateLimit: 50 }).expect(200)).body.effectiveRateLimit).toBe(50);
    await admin.patch(`${base}/settings`, { apiRateLimit: null }).expect(200);
  });

  it.each([0, 5000])(
    'a stored rate limit of %i (set before the ceiling) counts as API_RATE_LIMIT_MAX for keys and sessions',
    async (stored) => {
      await api.deps.db.team.update({ where: { id: api.team.teamId }, data: { apiRateLimit: stored } });
      try {
        // A new key: the key cache of earlier requests keeps the rate it read for a few seconds.
        const key = await api.newKey(api.team.teamId);
        const byKey = await request(api.app)
          .get('/api/v1/domains')
          .set({ Authorization: `Bearer ${key}` })
          .expect(200);
        expect(byKey.headers['x-ratelimit-limit']).toBe('50');
        const bySession = await admin.get(`${base}/v1/domains`).expect(200);
        expect(bySession.headers['x-ratelimit-limit']).toBe('50');
        expect((await admin.get(`${base}/settings`).expect(200)).body).toMatchObject({ apiRateLimit: stored, effectiveRateLimit: 50 });
      } finally {
        await api.deps.db.team.update({ where: { id: api.team.teamId }, data: { apiRateLimit: null } });
      }
    },
  );
});

describe('overview', () => {
  it('gives today, the last 30 days as a series and figures, the reputation and SES thresholds', async () => {
    const team = await api.newTeam('Figures');
    const { email } = await addUser(api, [{ teamId: team.teamId, role: 'MEMBER' }]);
    const today = new Date().toISOString().slice(0, 10);
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    await api.deps.db.dailyEmailUsage.createMany({
      data: [
        { teamId: team.teamId, date: today, type: 'TRANSACTIONAL', sent: 10, delivered: 9, bounced: 1, opened: 4, clicked: 2 },
        { teamId: team.teamId, date: tenDaysAgo, type: 'MARKETING', sent: 100, delivered: 95, complained: 1 },
      ],
    });
    await api.deps.db.cumulatedMetrics.create({ data: { teamId: team.teamId, delivered: 200, hardBounced: 4, complained: 1 } });
    const b = await signIn(api, email);
    const res = await b.get(`/api/dashboard/teams/${team.teamId}/overview`).expect(200);
    expect(res.body.today).toEqual({ sent: 10, delivered: 9, opened: 4, clicked: 2, bounced: 1, complained: 0 });
    expect(res.body.last30Days).toEqual({ sent: 110, delivered: 104, opened: 4, clicked: 2, bounced: 1, complained: 1 });
    expect(res.body.series).toHaveLength(31);
    expect(res.body.series[30].date).toBe(today);
    expect(res.body.todayRates).toEqual({
      deliveryRate: 90,
      openRate: (4 / 9) * 100,
      clickRate: (2 / 9) * 100,
      bounceRate: 10,
      complaintRate: 0,
    });
    expect(res.body.last30DaysRates.deliveryRate).toBe((104 / 110) * 100);
    expect(res.body.reputation).toMatchObject({ delivered: 200, hardBounced: 4, complained: 1, bounceRate: 2, complaintRate: 0.5 });
    // The recent window: the last 7 days' sent mail (ten days ago is outside it).
    expect(res.body.reputation.window).toMatchObject({ days: 7, to: today, sent: 10, hardBounced: 0, complained: 0 });
    expect(res.body.thresholds).toEqual({ bounceRate: { review: 5, pause: 10 }, complaintRate: { review: 0.1, pause: 0.5 } });
  });
});
