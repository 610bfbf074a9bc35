import request from 'supertest';
import { createApp } from '../app';
import { addUser, signIn } from '../dashboard/testing';
import { startTestApi, type TestApi } from '../testing/api-harness';

// The key cache runs on the injected Clock, so its expiry is tested by moving the clock, not by sleeping.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ API_KEY_CACHE_SECONDS: '10' });
});
afterAll(async () => {
  await api?.close();
});

it('trusts a cached key until API_KEY_CACHE_SECONDS have passed on the clock, then reads the database again', async () => {
  const now = Date.now();
  const clock = { now: () => new Date(now) };
  const { app, close } = createApp({ ...api.deps, clock });
  try {
    const team = await api.newTeam('Cache team');
    expect((await request(app).get('/api/v1/domains').set(team.auth)).status).toBe(200);
    // Revoked in the database without the Redis announcement: only the cache expiry can notice.
    await api.deps.db.apiKey.updateMany({ where: { teamId: team.teamId }, data: { revokedAt: new Date() } });
    clock.now = () => new Date(now + 9_000);
    expect((await request(app).get('/api/v1/domains').set(team.auth)).status).toBe(200);
    clock.now = () => new Date(now + 10_001);
    expect((await request(app).get('/api/v1/domains').set(team.auth)).status).toBe(403);
  } finally {
    close();
  }
});

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

it('the app that revokes a key refuses it on the very next request, before its announcement arrives (dashboard revoke, deleted domain)', async () => {
  // A PUBLISH that reaches no subscriber (on a Redis Cluster the message arrives a moment later):
  // only the revoking app's eviction of its own cache can refuse the next request.
  const published: string[] = [];
  const redis = new Proxy(api.deps.redis, {
    get(target, prop) {
      if (prop === 'publish') return async (_channel: string, clientId: string) => (published.push(clientId), 0);
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const { app, close } = createApp({ ...api.deps, redis });
  try {
    const team = await api.newTeam('Revoking replica');
    const domain = await api.addDomain(team.teamId, 'revoking.example.com');
    const bound = await api.newKey(team.teamId, { domainId: domain.id });
    const other = await api.newKey(team.teamId);
    for (const key of [bound, other]) expect((await request(app).get('/api/v1/domains').set(bearer(key))).status).toBe(200);

    expect((await request(app).delete(`/api/v1/domains/${domain.id}`).set(team.auth)).status).toBe(200);
    expect((await request(app).get('/api/v1/domains').set(bearer(bound))).status).toBe(403);

    const admin = await signIn({ ...api, app }, (await addUser(api, [{ teamId: team.teamId, role: 'ADMIN' }])).email);
    const { id } = await api.deps.db.apiKey.findFirstOrThrow({ where: { clientId: other.split('_')[1] }, select: { id: true } });
    await admin.delete(`/api/dashboard/teams/${team.teamId}/api-keys/${id}`).expect(200);
    expect((await request(app).get('/api/v1/domains').set(bearer(other))).status).toBe(403);

    expect(published).toEqual([bound.split('_')[1], other.split('_')[1]]);
  } finally {
    close();
  }
});
