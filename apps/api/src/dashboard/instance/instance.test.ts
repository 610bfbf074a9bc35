import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { generateDevCertificate } from '@mailrail/platform/tls/self-signed';
import { startTestApi, type TestApi } from '../../testing/api-harness';
import { expectBadRequest } from '../../testing/expect-bad-request';
import { addUser, signIn, type Browser } from '../testing';

// The self-hosting routes: team creation by the instance's operators (DASHBOARD_OPERATORS), the
// team signing in lands on, the SMTP settings page and "send a test email". Who reaches the team
// routes at all (no session, another team, MEMBER/ADMIN) is access-matrix.test.ts.

const OPERATOR = 'Ops@Example.org';
let api: TestApi;
let certDir: string;
let certFingerprint: string;

beforeAll(async () => {
  certDir = mkdtempSync(path.join(os.tmpdir(), 'mailrail-smtp-page-'));
  const cert = await generateDevCertificate('smtp.instance.test');
  writeFileSync(path.join(certDir, 'cert.pem'), cert.cert);
  writeFileSync(path.join(certDir, 'key.pem'), cert.key);
  certFingerprint = cert.fingerprint256;
  api = await startTestApi({
    DASHBOARD_OPERATORS: ` someone@example.org , ${OPERATOR}`,
    SMTP_SERVER_NAME: 'smtp.instance.test',
    SMTP_PORT: '2587',
    SMTPS_PORT: '0',
    SMTP_TLS_CERT: path.join(certDir, 'cert.pem'),
    SMTP_TLS_KEY: path.join(certDir, 'key.pem'),
  });
});
afterAll(async () => {
  await api.close();
  rmSync(certDir, { recursive: true, force: true });
});

describe('team creation', () => {
  let operator: Browser;
  beforeAll(async () => {
    // An operator needs no team to start with: the CLI's first user may have none.
    await addUser(api, [], OPERATOR.toLowerCase());
    operator = await signIn(api, OPERATOR.toLowerCase());
  });

  it('an operator creates a team, becomes its ADMIN, and sees it at once', async () => {
    expect((await operator.get('/api/dashboard/session').expect(200)).body.user.operator).toBe(true);
    const res = await operator.post('/api/dashboard/teams', { name: '  Acme  ' }).expect(200);
    expect(res.body).toEqual({ id: expect.any(Number), name: 'Acme', role: 'ADMIN' });
    const session = (await operator.get('/api/dashboard/session').expect(200)).body;
    expect(session.teams).toContainEqual({ id: res.body.id, name: 'Acme', role: 'ADMIN' });
    // The new team's pages open, and it starts empty like one made by `team create`.
    await operator.get(`/api/dashboard/teams/${res.body.id}/settings`).expect(200);
    expect(await api.deps.db.membership.count({ where: { teamId: res.body.id } })).toBe(1);
    expect(await api.deps.db.apiKey.count({ where: { teamId: res.body.id } })).toBe(0);
  });

  it("a team's ADMIN who is no operator is refused, and nothing is created", async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const admin = await signIn(api, email);
    expect((await admin.get('/api/dashboard/session').expect(200)).body.user.operator).toBe(false);
    const before = await api.deps.db.team.count();
    const res = await admin.post('/api/dashboard/teams', { name: 'Sneaky' }).expect(403);
    expect(res.body.error).toEqual({ code: 'FORBIDDEN', message: expect.stringContaining('DASHBOARD_OPERATORS') });
    expect(await api.deps.db.team.count()).toBe(before);
  });

  it('without a session 401, without the CSRF token 403, from another origin 403', async () => {
    await request(api.app).post('/api/dashboard/teams').set('Origin', api.config.PUBLIC_URL).send({ name: 'x' }).expect(401);
    await operator.agent.post('/api/dashboard/teams').set('Origin', api.config.PUBLIC_URL).send({ name: 'x' }).expect(403);
    await operator.agent
      .post('/api/dashboard/teams')
      .set('Origin', 'https://evil.example')
      .set('X-CSRF-Token', operator.csrfToken)
      .send({ name: 'x' })
      .expect(403);
  });

  it('bad names are 400 with the field named', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 42 }])
      expectBadRequest(await operator.post('/api/dashboard/teams', body), ['name']);
  });
});

describe('the team signing in lands on', () => {
  it('is the team used last, not the first by name; a team left since falls back to the first', async () => {
    const alpha = await api.newTeam('Alpha');
    const zulu = await api.newTeam('Zulu');
    const { email, userId } = await addUser(api, [
      { teamId: zulu.teamId, role: 'MEMBER' },
      { teamId: alpha.teamId, role: 'MEMBER' },
    ]);
    const first = await signIn(api, email);
    expect((await first.get('/api/dashboard/session')).body.lastTeamId).toBe(alpha.teamId);
    await first.get(`/api/dashboard/teams/${zulu.teamId}/overview`).expect(200);
    // A team the user is not in is not remembered.
    await first.get(`/api/dashboard/teams/${api.team.teamId}/overview`).expect(404);

    const again = await request(api.app)
      .post('/api/dashboard/auth/login')
      .set('Origin', api.config.PUBLIC_URL)
      .send({ email, password: 'correct horse battery staple' })
      .expect(200);
    expect(again.body.lastTeamId).toBe(zulu.teamId);

    await api.deps.db.membership.delete({ where: { userId_teamId: { userId, teamId: zulu.teamId } } });
    expect((await first.get('/api/dashboard/session')).body.lastTeamId).toBe(alpha.teamId);
  });
});

describe('SMTP settings', () => {
  it('shows host, ports, username and the certificate fingerprint of the configured file to any member', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    const member = await signIn(api, email);
    const res = await member.get(`/api/dashboard/teams/${api.team.teamId}/smtp-settings`).expect(200);
    expect(res.body).toEqual({
      host: 'smtp.instance.test',
      ports: [{ port: 2587, security: 'STARTTLS' }],
      username: 'mailrail',
      certificate: { source: 'FILE', fingerprint256: certFingerprint },
    });
  });

  it('without a certificate file, says the relay makes its own at start and defaults the host to PUBLIC_URL', async () => {
    const bare = await startTestApi({ SMTP_TLS_CERT: '', SMTP_TLS_KEY: '', SMTP_SERVER_NAME: '', SMTP_PORT: '2587', SMTPS_PORT: '2465' });
    try {
      const { email } = await addUser(bare, [{ teamId: bare.team.teamId, role: 'ADMIN' }]);
      const res = await (await signIn(bare, email)).get(`/api/dashboard/teams/${bare.team.teamId}/smtp-settings`).expect(200);
      expect(res.body).toEqual({
        host: new URL(bare.config.PUBLIC_URL).hostname,
        ports: [
          { port: 2587, security: 'STARTTLS' },
          { port: 2465, security: 'TLS' },
        ],
        username: 'mailrail',
        certificate: { source: 'GENERATED_AT_START', fingerprint256: null },
      });
    } finally {
      await bare.close();
    }
  });
});

describe('send a test email', () => {
  it("explains why not without a domain or with none verified, then sends from the team's verified domain to the user", async () => {
    const team = await api.newTeam('Tester');
    const other = await api.newTeam('Other sender');
    await api.addDomain(other.teamId, 'other.instance.test');
    const { email } = await addUser(api, [{ teamId: team.teamId, role: 'MEMBER' }]);
    const b = await signIn(api, email);
    const url = `/api/dashboard/teams/${team.teamId}/test-email`;

    const none = await b.post(url).expect(400);
    expect(none.body.error).toEqual({ code: 'BAD_REQUEST', message: expect.stringContaining('no domain yet') });
    await api.addDomain(team.teamId, 'pending.instance.test', { verified: false });
    const pending = await b.post(url).expect(400);
    expect(pending.body.error.message).toMatch(/None of this team's domains is verified yet \(pending\.instance\.test: /);

    await api.addDomain(team.teamId, 'verified.instance.test');
    const sent = await b.post(url).expect(200);
    expect(sent.body).toEqual({ emailId: expect.any(String), from: 'mailrail test <test@verified.instance.test>', to: email });
    const row = await api.deps.db.email.findUniqueOrThrow({ where: { id: sent.body.emailId } });
    expect(row).toMatchObject({ teamId: team.teamId, to: [email], apiKeyId: null, subject: 'Test email from mailrail' });
    // The normal intake: it is in the team's email log like any other.
    const log = await b.get(`/api/dashboard/teams/${team.teamId}/email-log`).expect(200);
    expect(log.body.data.map((e: { id: string }) => e.id)).toContain(sent.body.emailId);
  });
});
