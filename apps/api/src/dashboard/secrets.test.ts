import request from 'supertest';
import { createLogger } from '@mailrail/platform/log/logger';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { addDashboardMailTeam, addUser, browser, dashboardMailToken, PASSWORD, sessionTokenOf, signIn } from './testing';

// No secret (API key, webhook secret, password, password hash, session or link token) appears in
// any answer after the one that created it, nor in any log line, at the most verbose level.

let api: TestApi;
const lines: string[] = [];

beforeAll(async () => {
  const log = createLogger('trace', 'mailrail-api', { write: (s: string) => void lines.push(s) });
  api = await startTestApi(
    { DASHBOARD_MAIL_FROM: 'dashboard@mail.secrets.test', DASHBOARD_MAIL_TEAM_ID: '2', LOG_LEVEL: 'trace' },
    undefined,
    { log },
  );
  await addDashboardMailTeam(api, 'mail.secrets.test');
});
afterAll(async () => {
  await api.close();
});

it('keeps every secret out of later answers and out of the logs', async () => {
  const secrets: Record<string, string> = { password: PASSWORD };
  const { userId, email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
  await browser(api).post('/api/dashboard/auth/login', { email, password: 'a wrong password guess' }).expect(401);
  secrets.wrongPassword = 'a wrong password guess';
  const b = await signIn(api, email);
  secrets.csrfToken = b.csrfToken;
  const base = `/api/dashboard/teams/${api.team.teamId}`;

  const key = await b.post(`${base}/api-keys`, { name: 'ci', permission: 'FULL' }).expect(200);
  secrets.apiKey = key.body.apiKey;
  secrets.apiKeySecret = key.body.apiKey.split('_')[2];
  await request(api.app)
    .get('/api/v1/domains')
    .set({ Authorization: `Bearer ${secrets.apiKey}` })
    .expect(200);

  const hook = await b.post(`${base}/v1/webhooks`, { url: 'https://93.184.215.14/hooks', events: ['email.sent'] }).expect(200);
  secrets.webhookSecret = hook.body.secret;
  const rotated = await b.post(`${base}/v1/webhooks/${hook.body.id}/rotate-secret`).expect(200);
  secrets.rotatedWebhookSecret = rotated.body.secret;

  await b.post(`${base}/invitations`, { email: 'invitee@example.org', role: 'MEMBER' }).expect(200);
  secrets.invitationToken = await dashboardMailToken(api, 'invitee@example.org');
  const invitee = browser(api);
  const accepted = await invitee
    .post('/api/dashboard/invitations/accept', { token: secrets.invitationToken, password: 'invitee password 1' })
    .expect(200);
  secrets.inviteeSessionToken = sessionTokenOf(accepted);
  secrets.inviteePassword = 'invitee password 1';

  await b.post('/api/dashboard/account/password', { currentPassword: PASSWORD, newPassword: 'the next password' }).expect(200);
  secrets.newPassword = 'the next password';

  // What is stored: the hashes are secrets too.
  const stored = await api.deps.db.user.findMany({ select: { passwordHash: true } });
  stored.forEach((u, i) => (secrets[`passwordHash${i}`] = u.passwordHash!));
  const keyRow = await api.deps.db.apiKey.findUniqueOrThrow({ where: { id: key.body.id } });
  secrets.apiKeyHash = keyRow.tokenHash;
  secrets.sessionToken = b.sessionToken;
  expect(secrets.sessionToken).toMatch(/^[\w-]{43}$/);
  expect(secrets.inviteeSessionToken).toMatch(/^[\w-]{43}$/);

  // Every later read of what the pages show.
  const later = await Promise.all([
    b.get('/api/dashboard/session'),
    b.get(`${base}/api-keys`),
    b.get(`${base}/v1/webhooks`),
    b.get(`${base}/v1/webhooks/${hook.body.id}`),
    b.get(`${base}/members`),
    b.get(`${base}/invitations`),
    b.get(`${base}/settings`),
    b.get(`${base}/email-log`),
    invitee.get('/api/dashboard/session'),
  ]);
  const answers = later.map((r) => `${r.status} ${r.text}`).join('\n');
  for (const r of later) expect(r.status).toBe(200);
  // The session answer carries its own CSRF token by design; nothing else may.
  const leakedInAnswers = Object.entries(secrets)
    .filter(([name, value]) => name !== 'csrfToken' && answers.includes(value))
    .map(([name]) => name);
  expect(leakedInAnswers).toEqual([]);
  expect(userId).toBeGreaterThan(0);

  const log = lines.join('');
  expect(log).toContain('/api/dashboard/auth/login');
  expect(lines.length).toBeGreaterThan(15);
  const leakedInLogs = Object.entries(secrets)
    .filter(([, value]) => log.includes(value))
    .map(([name]) => name);
  expect(leakedInLogs).toEqual([]);
});
