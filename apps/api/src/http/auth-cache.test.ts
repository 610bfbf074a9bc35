import request from 'supertest';
import { createApp } from '../app';
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
