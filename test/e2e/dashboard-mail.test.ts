// Dashboard mail through mailrail's own pipeline: an invitation and a password reset leave as
// emails of DASHBOARD_MAIL_TEAM_ID, the worker sends them to SES (a fake SES endpoint on loopback,
// through the real AWS SDK), and the links they carry work exactly once.
import request from 'supertest';
import { simpleParser } from 'mailparser';
import { createApiKey, createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { type Config } from '@mailrail/platform/config/schema';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { startFakeSes, type FakeSes } from '@mailrail/testing/fake-ses';
import { deleteRedisPrefix, testRedisPrefix } from '@mailrail/testing/redis';
import { testConfig } from '@mailrail/testing/config';
import { waitFor } from '@mailrail/testing/wait-for';
import { hashPassword } from '@mailrail/domain/users/passwords';
import { createApp } from '../../apps/api/src/app';
import { closeApiDeps, createApiDeps, type ApiDeps } from '../../apps/api/src/deps';
import { closeWorkerDeps, createWorkerDeps, type WorkerDeps } from '../../apps/worker/src/deps';
import { startWorker, type RunningWorker } from '../../apps/worker/src/worker';
import { STORED_SYSTEM_MAIL_TEXT } from '@mailrail/domain/system-mail/system-mail';

const ORIGIN = 'http://dashboard.test';
let databaseUrl: string;
let prefix: string;
let config: Config;
let ses: FakeSes;
let api: ApiDeps;
let app: ReturnType<typeof createApp>;
let worker: WorkerDeps;
let running: RunningWorker;
let teamId: number;

beforeAll(async () => {
  ses = await startFakeSes();
  databaseUrl = await createTestDatabase();
  prefix = testRedisPrefix();
  // The operators' team (id 1, created first below) sends dashboard mail from its verified domain.
  config = testConfig(databaseUrl, prefix, {
    SES_ENDPOINT: ses.url,
    SES_RATE_LIMIT: '100',
    PUBLIC_URL: ORIGIN,
    DASHBOARD_MAIL_FROM: 'mailrail <dashboard@ops.example.com>',
    DASHBOARD_MAIL_TEAM_ID: '1',
  });
  api = createApiDeps(config);
  const ops = await createTeam(api.db, 'Operators');
  expect(ops.id).toBe(1);
  await insertDomain(api.db, config.SECRET, {
    teamId: ops.id,
    name: 'ops.example.com',
    region: config.AWS_REGION,
    dkimSelector: config.DKIM_SELECTOR,
    verified: true,
  });
  teamId = (await createTeam(api.db, 'Customers')).id;
  app = createApp(api);
  worker = createWorkerDeps(config);
  running = await startWorker(worker);
});

afterAll(async () => {
  await running.close();
  app.close();
  await deleteRedisPrefix(api.redis, prefix).catch(() => undefined);
  await closeWorkerDeps(worker);
  await closeApiDeps(api);
  await ses.close();
  await dropDatabase(databaseUrl);
});

/** The link of the one message SES got for `to`, read from the MIME as a mail client would. */
async function linkSentTo(to: string, page: string): Promise<string> {
  const [message] = await waitFor(() => ses.messagesTo(to).length > 0 && ses.messagesTo(to), { timeoutMs: 20_000, what: `mail to ${to}` });
  expect(ses.messagesTo(to)).toHaveLength(1);
  const parsed = await simpleParser(message.raw);
  expect(parsed.from?.value).toEqual([{ name: 'mailrail', address: 'dashboard@ops.example.com' }]);
  const m = new RegExp(`${ORIGIN}/${page}#token=([\\w-]{43})`).exec(parsed.text ?? '');
  if (!m) throw new Error(`no ${page} link in: ${parsed.text}`);
  expect(parsed.html).toContain(m[0]);
  return m[1];
}

async function signIn(email: string, password: string) {
  const agent = request.agent(app.app);
  const res = await agent.post('/api/dashboard/auth/login').set('Origin', ORIGIN).send({ email, password });
  return { agent, res };
}

it('an invitation reaches SES and its link creates the account once', async () => {
  const admin = await api.db.user.create({ data: { email: 'admin@customers.test', passwordHash: await hashPassword('admin password 1') } });
  await api.db.membership.create({ data: { userId: admin.id, teamId, role: 'ADMIN' } });
  const { agent, res } = await signIn('admin@customers.test', 'admin password 1');
  expect(res.status).toBe(200);
  const invited = await agent
    .post(`/api/dashboard/teams/${teamId}/invitations`)
    .set('Origin', ORIGIN)
    .set('X-CSRF-Token', res.body.csrfToken)
    .send({ email: 'new.colleague@example.org' });
  expect(invited.status).toBe(200);

  const token = await linkSentTo('new.colleague@example.org', 'invitations/accept');
  const accept = () =>
    request(app.app).post('/api/dashboard/invitations/accept').set('Origin', ORIGIN).send({ token, password: 'colleague password' });
  const first = await accept();
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ signedIn: true, teams: [{ id: teamId, name: 'Customers', role: 'MEMBER' }] });
  expect((await accept()).status).toBe(400);
  expect((await signIn('new.colleague@example.org', 'colleague password')).res.status).toBe(200);
  // The message is an email of the operators' team, sent by the worker; the row keeps no link.
  expect(await api.db.email.count({ where: { teamId: 1, to: { has: 'new.colleague@example.org' }, latestStatus: 'SENT' } })).toBe(1);
  const row = await api.db.email.findFirstOrThrow({ where: { to: { has: 'new.colleague@example.org' } } });
  expect(JSON.stringify(row)).not.toContain(token);
});

it('a password reset reaches SES for a known address only, and its link works once', async () => {
  await api.db.user.create({ data: { email: 'forgetful@example.org', passwordHash: await hashPassword('old password 123') } });
  for (const email of ['forgetful@example.org', 'stranger@example.org']) {
    const res = await request(app.app).post('/api/dashboard/auth/password-reset/request').set('Origin', ORIGIN).send({ email });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
  }
  const token = await linkSentTo('forgetful@example.org', 'reset-password');
  const confirm = () =>
    request(app.app).post('/api/dashboard/auth/password-reset/confirm').set('Origin', ORIGIN).send({ token, password: 'new password 456' });
  expect((await confirm()).status).toBe(200);
  expect((await confirm()).status).toBe(400);
  expect((await signIn('forgetful@example.org', 'old password 123')).res.status).toBe(401);
  expect((await signIn('forgetful@example.org', 'new password 456')).res.status).toBe(200);
  // Nothing was sent to the address without an account.
  expect(ses.messagesTo('stranger@example.org')).toHaveLength(0);
  expect(await api.db.email.count({ where: { to: { has: 'stranger@example.org' } } })).toBe(0);
});

describe('no tenant reads dashboard mail (its links take accounts over)', () => {
  it('a SENDING key, a MEMBER and the webhook outbox of the mail team see no reset link, only the stored note', async () => {
    await api.db.user.create({ data: { email: 'reset.target@example.org', passwordHash: await hashPassword('target password 1') } });
    const asked = await request(app.app)
      .post('/api/dashboard/auth/password-reset/request')
      .set('Origin', ORIGIN)
      .send({ email: 'reset.target@example.org' });
    expect(asked.status).toBe(200);
    const token = await linkSentTo('reset.target@example.org', 'reset-password');
    const email = await waitFor(
      () => api.db.email.findFirst({ where: { teamId: 1, to: { has: 'reset.target@example.org' }, latestStatus: 'SENT' } }),
      { timeoutMs: 20_000, what: 'the reset email SENT' },
    );
    expect(email).toMatchObject({ text: STORED_SYSTEM_MAIL_TEXT, html: null, rawMessage: null });

    // Readers given to the mail team afterwards (an operator's mistake) still find no link.
    const { apiKey, id: keyId } = await createApiKey(api.db, { teamId: 1, name: 'sending', permission: 'SENDING' });
    const member = await api.db.user.create({
      data: { email: 'member@ops.example.com', passwordHash: await hashPassword('member password 1') },
    });
    await api.db.membership.create({ data: { userId: member.id, teamId: 1, role: 'MEMBER' } });
    try {
      const key = { Authorization: `Bearer ${apiKey}` };
      const list = await request(app.app).get('/api/v1/emails').set(key);
      const got = await request(app.app).get(`/api/v1/emails/${email.id}`).set(key);
      expect([list.status, got.status]).toEqual([200, 200]);
      expect(got.body.text).toBe(STORED_SYSTEM_MAIL_TEXT);
      const { agent, res } = await signIn('member@ops.example.com', 'member password 1');
      expect(res.status).toBe(200);
      const log = await agent.get('/api/dashboard/teams/1/email-log').set('Origin', ORIGIN);
      const detail = await agent.get(`/api/dashboard/teams/1/v1/emails/${email.id}`).set('Origin', ORIGIN);
      expect([log.status, detail.status]).toEqual([200, 200]);
      expect(log.body.data.map((e: { id: string }) => e.id)).toContain(email.id);
      const events = await api.db.webhookEvent.findMany({ where: { teamId: 1 } });
      for (const seen of [list.body, got.body, log.body, detail.body, events]) expect(JSON.stringify(seen)).not.toContain(token);
    } finally {
      await api.db.membership.deleteMany({ where: { teamId: 1 } });
      await api.db.apiKey.delete({ where: { id: keyId } });
    }
  });

  it.each(['a member', 'an API key', 'a webhook'])('a mail team with %s sends no dashboard mail at all', async (reader) => {
    const admin = await api.db.user.create({
      data: { email: `admin.${reader.length}@customers.test`, passwordHash: await hashPassword('admin password 1') },
    });
    await api.db.membership.create({ data: { userId: admin.id, teamId, role: 'ADMIN' } });
    const added =
      reader === 'a member'
        ? api.db.membership.create({ data: { userId: admin.id, teamId: 1, role: 'MEMBER' } })
        : reader === 'an API key'
          ? createApiKey(api.db, { teamId: 1, name: 'reader', permission: 'SENDING' })
          : api.db.webhook.create({
              data: { id: 'wh_reader', teamId: 1, url: 'https://93.184.215.14/hook', secretEnc: 'x', events: ['email.sent'] },
            });
    await added;
    try {
      const { agent, res } = await signIn(`admin.${reader.length}@customers.test`, 'admin password 1');
      const invited = await agent
        .post(`/api/dashboard/teams/${teamId}/invitations`)
        .set('Origin', ORIGIN)
        .set('X-CSRF-Token', res.body.csrfToken)
        .send({ email: `refused.${reader.length}@example.org` });
      expect(invited.status).toBe(503);
      expect(invited.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('DASHBOARD_MAIL_TEAM_ID') });
      expect(await api.db.email.count({ where: { to: { has: `refused.${reader.length}@example.org` } } })).toBe(0);
      expect(await api.db.invitation.count({ where: { email: `refused.${reader.length}@example.org` } })).toBe(0);
    } finally {
      await api.db.membership.deleteMany({ where: { teamId: 1 } });
      await api.db.apiKey.deleteMany({ where: { teamId: 1 } });
      await api.db.webhook.deleteMany({ where: { teamId: 1 } });
    }
  });
});
