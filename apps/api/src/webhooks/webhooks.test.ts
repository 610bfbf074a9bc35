import request from 'supertest';
import { ApiError } from '@mailrail/domain/errors/api-error';
import { decryptSecret } from '@mailrail/platform/crypto/secrets';
import { newId } from '@mailrail/platform/ids';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { createWebhook } from './webhook-service';

// The API against a real database; WEBHOOK_ALLOW_PRIVATE is false here (the default), and a
// second API with it true checks the operator override.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const PUBLIC_URL = 'https://93.184.215.14/hooks/mailrail';

const post = (path: string, body: unknown, auth = api.team.auth) =>
  request(api.app)
    .post(`/api/v1/webhooks${path}`)
    .set(auth)
    .send(body as object);
const get = (path: string, auth = api.team.auth) => request(api.app).get(`/api/v1/webhooks${path}`).set(auth);
const patch = (path: string, body: unknown, auth = api.team.auth) =>
  request(api.app)
    .patch(`/api/v1/webhooks${path}`)
    .set(auth)
    .send(body as object);
const del = (path: string, auth = api.team.auth) => request(api.app).delete(`/api/v1/webhooks${path}`).set(auth);

async function createHook(body: Record<string, unknown> = {}, auth = api.team.auth) {
  const res = await post('', { url: PUBLIC_URL, ...body }, auth);
  expect(res.status).toBe(200);
  return res.body as { id: string; secret: string; status: string; events: string[]; domainIds: number[] };
}

const expect400 = (res: request.Response, path: (string | number)[]) => {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('BAD_REQUEST');
  expect(res.body.error.issues.map((i: { path: unknown }) => i.path)).toContainEqual(path);
};

describe('create, read, list', () => {
  it('creates a webhook and shows its secret once, stored encrypted', async () => {
    const res = await post('', { url: PUBLIC_URL, events: ['email.delivered', 'email.bounced'], description: 'CRM sync' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.any(String),
      url: PUBLIC_URL,
      description: 'CRM sync',
      events: ['email.delivered', 'email.bounced'],
      domainIds: [],
      status: 'ACTIVE',
      enabled: true,
      consecutiveFailures: 0,
    });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

    const row = await api.deps.db.webhook.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.teamId).toBe(api.team.teamId);
    expect(row.secretEnc).not.toContain(res.body.secret.slice(6));
    expect(decryptSecret(api.config.SECRET, row.secretEnc)).toBe(res.body.secret);

    const one = await get(`/${res.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body.secret).toBeUndefined();
    expect(JSON.stringify(one.body)).not.toContain(res.body.secret);
    const list = await get('');
    expect(list.status).toBe(200);
    expect(list.body.data.map((w: { id: string }) => w.id)).toContain(res.body.id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
  });

  it('treats a missing or empty event list as every event type', async () => {
    const hook = await createHook();
    expect(hook.events).toEqual([]);
  });

  it('accepts domain filters naming the team’s own domains', async () => {
    const d = await api.addDomain(api.team.teamId, `f${newId(6)}.example.com`);
    const hook = await createHook({ domainIds: [d.id, d.id] });
    expect(hook.domainIds).toEqual([d.id]);
  });
});

describe('validation', () => {
  it('answers bad input with 400 naming the field, and writes nothing', async () => {
    const before = await api.deps.db.webhook.count();
    expect400(await post('', {}), ['url']);
    expect400(await post('', { url: 'ftp://93.184.215.14/x' }), ['url']);
    expect400(await post('', { url: 'not a url' }), ['url']);
    expect400(await post('', { url: PUBLIC_URL, events: ['email.delivered', 'email.teleported'] }), ['events', 1]);
    expect400(await post('', { url: PUBLIC_URL, events: 'email.sent' }), ['events']);
    expect400(await post('', { url: PUBLIC_URL, domainIds: ['x'] }), ['domainIds', 0]);
    expect400(await post('', { url: PUBLIC_URL, description: 'x'.repeat(501) }), ['description']);
    const other = await api.newTeam('Other');
    const foreign = await api.addDomain(other.teamId, `g${newId(6)}.example.com`);
    const res = await post('', { url: PUBLIC_URL, domainIds: [foreign.id] });
    expect400(res, ['domainIds', 0]);
    expect(res.body.error.message).toMatch(/domainIds/);
    expect400(await patch(`/${(await createHook()).id}`, { enabled: 'yes' }), ['enabled']);
    expect(await api.deps.db.webhook.count()).toBe(before + 1);
  });
});

describe('server-side request forgery at create and update', () => {
  const refused = [
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://10.1.2.3/hook',
    'http://172.16.0.5/hook',
    'http://192.168.1.10/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/hook',
    'http://0.0.0.0/hook',
    'http://224.0.0.1/hook',
    'http://2130706433/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:10.0.0.1]/hook',
    'http://[fe80::1]/hook',
    'http://[fd00::1]/hook',
    'http://[::]/hook',
    'http://[ff02::1]/hook',
  ];
  it.each(refused)('refuses %s', async (url) => {
    const res = await post('', { url });
    expect400(res, ['url']);
    expect(res.body.error.message).toMatch(/public address/);
  });

  it('accepts public addresses, IPv4 and IPv6', async () => {
    await createHook({ url: 'https://93.184.215.14/x' });
    await createHook({ url: 'https://[2606:4700:4700::1111]/x' });
  });

  it('refuses a name that resolves to a private address', async () => {
    const auth = { teamId: api.team.teamId, apiKeyId: 0, permission: 'FULL' as const, domainId: null, rateLimit: 0 };
    const deps = { db: api.deps.db, config: api.config, resolveHost: async () => ['93.184.215.14', '10.0.0.8'] };
    const err = await createWebhook(deps, auth, { url: 'https://hooks.example.com/x', events: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).issues).toEqual([
      { path: ['url'], message: expect.stringMatching(/hooks\.example\.com resolves to 10\.0\.0\.8/) },
    ]);
  });

  it('refuses a private URL on update too', async () => {
    const hook = await createHook();
    expect400(await patch(`/${hook.id}`, { url: 'http://192.168.0.1/x' }), ['url']);
    expect((await get(`/${hook.id}`)).body.url).toBe(PUBLIC_URL);
  });

  it('allows private and loopback URLs when the operator sets WEBHOOK_ALLOW_PRIVATE', async () => {
    const open = await startTestApi({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    try {
      const res = await request(open.app).post('/api/v1/webhooks').set(open.team.auth).send({ url: 'http://127.0.0.1:9000/hook' });
      expect(res.status).toBe(200);
      // Cloud metadata and link-local stay refused whatever the setting says.
      for (const url of [
        'http://169.254.169.254/latest/meta-data/',
        'http://[fd00:ec2::254]/',
        'http://100.100.100.200/',
        'http://[fe80::1]/',
      ]) {
        const refused = await request(open.app).post('/api/v1/webhooks').set(open.team.auth).send({ url });
        expect([url, refused.status]).toEqual([url, 400]);
      }
    } finally {
      await open.close();
    }
  });
});

describe('update, pause, delete', () => {
  it('updates fields and pauses with enabled:false', async () => {
    const hook = await createHook({ description: 'old' });
    const res = await patch(`/${hook.id}`, {
      url: 'https://93.184.215.14/new',
      events: ['contact.created'],
      description: null,
      enabled: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      url: 'https://93.184.215.14/new',
      events: ['contact.created'],
      description: null,
      status: 'PAUSED',
      enabled: false,
    });
    expect((await patch(`/${hook.id}`, { enabled: true })).body.status).toBe('ACTIVE');
  });

  it('re-enabling an AUTO_DISABLED webhook resets its failure count', async () => {
    const hook = await createHook();
    await api.deps.db.webhook.update({ where: { id: hook.id }, data: { status: 'AUTO_DISABLED', consecutiveFailures: 30 } });
    const untouched = await patch(`/${hook.id}`, { description: 'still off' });
    expect(untouched.body).toMatchObject({ status: 'AUTO_DISABLED', consecutiveFailures: 30 });
    const res = await patch(`/${hook.id}`, { enabled: true });
    expect(res.body).toMatchObject({ status: 'ACTIVE', consecutiveFailures: 0 });
  });

  it('deletes a webhook', async () => {
    const hook = await createHook();
    const res = await del(`/${hook.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: hook.id, success: true, message: 'Webhook deleted successfully' });
    expect((await get(`/${hook.id}`)).status).toBe(404);
    expect((await del(`/${hook.id}`)).status).toBe(404);
  });
});

describe('secret rotation and test events', () => {
  it('rotates the secret: the new one is shown once and replaces the old', async () => {
    const hook = await createHook();
    const res = await post(`/${hook.id}/rotate-secret`, undefined);
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(/^whsec_/);
    expect(res.body.secret).not.toBe(hook.secret);
    const row = await api.deps.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(decryptSecret(api.config.SECRET, row.secretEnc)).toBe(res.body.secret);
    expect((await get(`/${hook.id}`)).body.secret).toBeUndefined();
  });

  it('queues a webhook.test event aimed at this webhook only', async () => {
    const hook = await createHook({ events: ['email.sent'] });
    const res = await post(`/${hook.id}/test`, undefined);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, eventId: expect.any(String) });
    const event = await api.deps.db.webhookEvent.findUniqueOrThrow({ where: { id: res.body.eventId } });
    expect(event).toMatchObject({ teamId: api.team.teamId, type: 'webhook.test', dispatchedAt: null, data: { webhookId: hook.id } });
  });

  it('refuses a test event for a paused webhook', async () => {
    const hook = await createHook();
    await patch(`/${hook.id}`, { enabled: false });
    const res = await post(`/${hook.id}/test`, undefined);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/PAUSED/);
  });
});

describe('deliveries', () => {
  it('lists recent deliveries newest first, paged, with event type, status code, duration and attempt', async () => {
    const hook = await createHook();
    for (let i = 0; i < 3; i++) {
      const eventId = newId();
      await api.deps.db.webhookEvent.create({
        data: { id: eventId, teamId: api.team.teamId, type: i === 2 ? 'email.bounced' : 'email.sent', data: {}, dispatchedAt: new Date() },
      });
      await api.deps.db.webhookDelivery.create({
        data: {
          id: `d${i}${newId(8)}`,
          webhookId: hook.id,
          eventId,
          status: i === 1 ? 'FAILED' : 'DELIVERED',
          attempt: i + 1,
          responseStatus: i === 1 ? 500 : 200,
          durationMs: 10 * i,
          createdAt: new Date(Date.now() + i * 1000),
        },
      });
    }
    const res = await get(`/${hook.id}/deliveries?limit=2`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data[0]).toMatchObject({
      eventType: 'email.bounced',
      status: 'DELIVERED',
      attempt: 3,
      responseStatus: 200,
      durationMs: 20,
    });
    expect(res.body.data[1]).toMatchObject({ eventType: 'email.sent', status: 'FAILED', attempt: 2, responseStatus: 500 });
    const page2 = await get(`/${hook.id}/deliveries?limit=2&page=2`);
    expect(page2.body.data).toHaveLength(1);
    const failed = await get(`/${hook.id}/deliveries?status=FAILED`);
    expect(failed.body.count).toBe(1);
    expect400(await get(`/${hook.id}/deliveries?limit=500`), ['limit']);
    expect400(await get(`/${hook.id}/deliveries?status=LOST`), ['status']);
  });
});

describe('team scoping and keys', () => {
  it("another team's webhook is a 404 everywhere and absent from its list", async () => {
    const hook = await createHook();
    const other = await api.newTeam('Intruders');
    expect((await get(`/${hook.id}`, other.auth)).status).toBe(404);
    expect((await patch(`/${hook.id}`, { enabled: false }, other.auth)).status).toBe(404);
    expect((await post(`/${hook.id}/rotate-secret`, undefined, other.auth)).status).toBe(404);
    expect((await post(`/${hook.id}/test`, undefined, other.auth)).status).toBe(404);
    expect((await get(`/${hook.id}/deliveries`, other.auth)).status).toBe(404);
    const gone = await del(`/${hook.id}`, other.auth);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('NOT_FOUND');
    expect((await get('', other.auth)).body).toEqual({ data: [], count: 0 });
    const row = await api.deps.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(row.status).toBe('ACTIVE');
  });

  it('refuses a path id over 128 characters with a 400 naming it', async () => {
    const long = 'w'.repeat(129);
    expect400(await get(`/${long}`), ['id']);
    expect400(await patch(`/${long}`, { enabled: false }), ['id']);
    expect400(await get(`/${long}/deliveries`), ['id']);
  });

  it('keeps SENDING keys out', async () => {
    const key = await api.newKey(api.team.teamId, { permission: 'SENDING' });
    const res = await get('', { Authorization: `Bearer ${key}` });
    expect(res.status).toBe(403);
  });

  it('limits a domain-bound key to webhooks of its domain', async () => {
    const d = await api.addDomain(api.team.teamId, `k${newId(6)}.example.com`);
    const other = await api.addDomain(api.team.teamId, `l${newId(6)}.example.com`);
    const bound = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: d.id })}` };
    const own = await createHook({}, bound);
    expect(own.domainIds).toEqual([d.id]);
    expect((await post('', { url: PUBLIC_URL, domainIds: [other.id] }, bound)).status).toBe(403);
    expect((await post('', { url: PUBLIC_URL, domainIds: [] }, bound)).status).toBe(403);
    const teamWide = await createHook();
    expect((await get(`/${teamWide.id}`, bound)).status).toBe(404);
    expect((await get('', bound)).body.data.map((w: { id: string }) => w.id)).toEqual([own.id]);
  });
});
