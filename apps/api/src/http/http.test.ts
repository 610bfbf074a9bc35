import request from 'supertest';
import { revokeApiKey, apiKeyRevokedChannel } from '@mailrail/domain/teams/api-keys';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi } from '../testing/api-harness';

let api: TestApi;
beforeAll(async () => {
  // A verified key is trusted for an hour here: only the revocation's announcement can refuse a cached one.
  api = await startTestApi({ BODY_LIMIT: '2kb', API_KEY_CACHE_SECONDS: '3600' });
});
afterAll(async () => {
  await api.close();
});

const expectError = (res: request.Response, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
};

describe('authentication', () => {
  it('answers 401 without an Authorization header', async () => {
    const res = await request(api.app).get('/api/v1/emails');
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it('answers 401 for a header that is not a bearer token', async () => {
    expectError(await request(api.app).get('/api/v1/emails').set('Authorization', 'Basic abc'), 401, 'UNAUTHORIZED');
  });

  it('answers 403 for a key that does not exist or has a wrong secret', async () => {
    expectError(await request(api.app).get('/api/v1/emails').set('Authorization', 'Bearer nonsense'), 403, 'FORBIDDEN');
    const [prefix, clientId] = api.team.apiKey.split('_');
    const wrongSecret = `${prefix}_${clientId}_${'0'.repeat(32)}`;
    const res = await request(api.app).get('/api/v1/emails').set('Authorization', `Bearer ${wrongSecret}`);
    expectError(res, 403, 'FORBIDDEN');
    expect(res.body.error.message).toBe('Invalid API token');
  });

  it('lets a valid key list emails', async () => {
    const res = await request(api.app).get('/api/v1/emails').set(api.team.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], count: 0 });
  });

  it('refuses a revoked key once its revocation is announced, even after it was cached', async () => {
    const key = await api.newKey(api.team.teamId);
    const list = () => request(api.app).get('/api/v1/emails').set('Authorization', `Bearer ${key}`);
    expect((await list()).status).toBe(200);
    const revoked = await revokeApiKey(api.deps.db, key.split('_').slice(0, 2).join('_'));
    expect(revoked).not.toBeNull();
    // Cached for an hour: the revoked key is still accepted until the announcement arrives.
    expect((await list()).status).toBe(200);
    // The CLI announces the revocation; the API evicts its cached copy when the message arrives.
    await api.deps.redis.publish(apiKeyRevokedChannel(api.config.REDIS_PREFIX), revoked!.clientId);
    const refused = await waitFor(
      async () => {
        const res = await list();
        return res.status !== 200 && res;
      },
      { timeoutMs: 30_000, what: 'the revoked key refused' },
    );
    expectError(refused, 403, 'FORBIDDEN');
  });

  it('keeps SENDING keys to the email routes', async () => {
    const key = await api.newKey(api.team.teamId, { permission: 'SENDING' });
    const auth = { Authorization: `Bearer ${key}` };
    expect((await request(api.app).get('/api/v1/emails').set(auth)).status).toBe(200);
    for (const path of ['/api/v1/contactBooks', '/api/v1/domains', '/api/v1/campaigns', '/api/v1/analytics/email-time-series']) {
      const res = await request(api.app).get(path).set(auth);
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.error.message).toMatch(/SENDING/);
    }
  });
});

describe('failed authentication is bounded per client IP', () => {
  let limited: TestApi;
  beforeAll(async () => {
    // The test plays several client IPs through X-Forwarded-For from a trusted (loopback) proxy.
    limited = await startTestApi({ AUTH_FAILURES_PER_MINUTE: '5', TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => {
    await limited.close();
  });
  const randomClientId = () => Math.random().toString(36).slice(2, 12).padEnd(10, '0');
  const badKey = () => `us_${randomClientId()}_${'0'.repeat(32)}`;
  const get = (ip: string, key: string) =>
    request(limited.app).get('/api/v1/emails').set('X-Forwarded-For', ip).set('Authorization', `Bearer ${key}`);

  it('N bad keys from one IP give 429 and no further database lookups; a good key from another IP still works', async () => {
    const lookups = jest.spyOn(limited.deps.db.apiKey, 'findUnique');
    try {
      for (let i = 0; i < 5; i++) expectError(await get('203.0.113.7', badKey()), 403, 'FORBIDDEN');
      expect(lookups).toHaveBeenCalledTimes(5);
      for (let i = 0; i < 20; i++) {
        const res = await get('203.0.113.7', badKey());
        expectError(res, 429, 'RATE_LIMITED');
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      // Even a genuine key that is not cached yet waits: the address is over its limit.
      const fresh = await limited.newKey(limited.team.teamId);
      expectError(await get('203.0.113.7', fresh), 429, 'RATE_LIMITED');
      expect(lookups).toHaveBeenCalledTimes(5);
      // Another address is not affected.
      expect((await get('198.51.100.9', fresh)).status).toBe(200);
      expect((await get('198.51.100.9', limited.team.apiKey)).status).toBe(200);
    } finally {
      lookups.mockRestore();
    }
  });

  it('the accept lane (POST /api/v1/emails, answered before express) reads the client address as express does', async () => {
    const post = (ip: string, key: string) =>
      request(limited.app)
        .post('/api/v1/emails')
        .set('X-Forwarded-For', ip)
        .set('Authorization', `Bearer ${key}`)
        .send({ to: 'ann@dest.org', from: 'hello@example.com', subject: 'S', text: 'T' });
    for (let i = 0; i < 5; i++) expectError(await post('203.0.113.70', badKey()), 403, 'FORBIDDEN');
    const limitedAnswer = await post('203.0.113.70', badKey());
    expectError(limitedAnswer, 429, 'RATE_LIMITED');
    expect(Number(limitedAnswer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The same proxy forwarding for another client: that client's own count, so its key is checked.
    expectError(await post('198.51.100.70', badKey()), 403, 'FORBIDDEN');
  });

  it('without TRUST_PROXY a client cannot dodge the limit by rotating X-Forwarded-For', async () => {
    const direct = await startTestApi({ AUTH_FAILURES_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await request(direct.app)
          .get('/api/v1/emails')
          .set('X-Forwarded-For', `203.0.113.${i + 10}`)
          .set('Authorization', `Bearer ${badKey()}`);
        statuses.push(res.status);
      }
      expect(statuses).toEqual([403, 403, 403, 429, 429, 429]);
      // The accept lane too: the address is the socket's, whatever the header says.
      const lane = await request(direct.app)
        .post('/api/v1/emails')
        .set('X-Forwarded-For', '203.0.113.99')
        .set('Authorization', `Bearer ${badKey()}`)
        .send({ to: 'ann@dest.org', from: 'hello@example.com', subject: 'S', text: 'T' });
      expectError(lane, 429, 'RATE_LIMITED');
    } finally {
      await direct.close();
    }
  });

  it('an unknown key id is looked up in the database once, then answered from a short negative cache', async () => {
    const lookups = jest.spyOn(limited.deps.db.apiKey, 'findUnique');
    try {
      const key = badKey();
      for (let i = 0; i < 3; i++) expectError(await get(`192.0.2.${i + 1}`, key), 403, 'FORBIDDEN');
      expect(lookups).toHaveBeenCalledTimes(1);
    } finally {
      lookups.mockRestore();
    }
  });
});

describe('request errors', () => {
  it('answers malformed JSON with 400 in the standard shape', async () => {
    const res = await request(api.app).post('/api/v1/emails').set(api.team.auth).set('Content-Type', 'application/json').send('{"to": ');
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.error.message).toBe('Malformed JSON in request body');
  });

  it('refuses a body that is not JSON', async () => {
    const res = await request(api.app).post('/api/v1/emails').set(api.team.auth).set('Content-Type', 'text/plain').send('hello');
    expectError(res, 400, 'BAD_REQUEST');
  });

  it('answers an oversized body with 413', async () => {
    const res = await request(api.app)
      .post('/api/v1/emails')
      .set(api.team.auth)
      .send({ html: 'x'.repeat(5000) });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers unknown routes with a JSON 404, inside and outside the API', async () => {
    expectError(await request(api.app).get('/api/v1/nope').set(api.team.auth), 404, 'NOT_FOUND');
    expectError(await request(api.app).get('/api/nope'), 404, 'NOT_FOUND');
    // Other GETs are the dashboard app's client routes (web/serve-dashboard.ts); other methods are not.
    expectError(await request(api.app).post('/nope'), 404, 'NOT_FOUND');
  });

  it('validates query parameters with the field named', async () => {
    const res = await request(api.app).get('/api/v1/emails?limit=500').set(api.team.auth);
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.error.issues[0].path).toEqual(['limit']);
  });

  it('gives every response a request id, and keeps a sane one from the caller', async () => {
    const res = await request(api.app).get('/health').set('X-Request-Id', 'abc-123');
    expect(res.headers['x-request-id']).toBe('abc-123');
    const other = await request(api.app).get('/health');
    expect(other.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

/**
 * Holds the rate window's Redis calls for `key` until they add up to `hits`, then sends them at
 * once, in order: they reach Redis together, so they share a window whatever this machine's speed.
 */
function sendHitsTogether(redis: TestApi['deps']['redis'], key: string, hits: number) {
  const evalsha = redis.evalsha.bind(redis) as (...args: (string | number)[]) => Promise<unknown>;
  const held: (() => void)[] = [];
  let heldHits = 0;
  const hold = (...args: (string | number)[]) => {
    // evalsha(sha1, 1, key, windowMs, hits): the window script of fixed-window.ts.
    if (args[2] !== key) return evalsha(...args);
    return new Promise((resolve, reject) => {
      held.push(() => void evalsha(...args).then(resolve, reject));
      heldHits += Number(args[4]);
      if (heldHits >= hits) held.splice(0).forEach((send) => send());
    });
  };
  return jest.spyOn(redis, 'evalsha').mockImplementation(hold as unknown as typeof redis.evalsha);
}

describe('rate limit', () => {
  it('answers 429 with the rate-limit headers once the team exceeds its rate', async () => {
    const team = await api.newTeam('Limited');
    await api.deps.db.team.update({ where: { id: team.teamId }, data: { apiRateLimit: 3 } });
    // The window (one second from its first hit) counts all five however long they take to get there.
    const counted = sendHitsTogether(api.deps.redis, `${api.config.REDIS_PREFIX}:rl:${team.teamId}`, 5);
    const before = Date.now();
    const responses = await Promise.all(Array.from({ length: 5 }, () => request(api.app).get('/api/v1/emails').set(team.auth)));
    const after = Date.now();
    // The five hits went to Redis held together (one call per turn of the event loop that counted any).
    expect(counted.mock.calls.filter((args) => args[2] === `${api.config.REDIS_PREFIX}:rl:${team.teamId}`).length).toBeGreaterThan(0);
    counted.mockRestore();
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = responses.find((r) => r.status === 429)!;
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['x-ratelimit-limit']).toBe('3');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    // The reset is the answer's second (epoch) plus Retry-After, at least one second on.
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const answeredIn = Number(limited.headers['x-ratelimit-reset']) - Number(limited.headers['retry-after']);
    expect(answeredIn).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(answeredIn).toBeLessThanOrEqual(Math.floor(after / 1000));
    const ok = responses.find((r) => r.status === 200)!;
    expect(ok.headers['x-ratelimit-limit']).toBe('3');
  });
});

describe('probes', () => {
  it('reports liveness and readiness without auth', async () => {
    expect((await request(api.app).get('/health')).body).toEqual({ status: 'ok' });
    const ready = await request(api.app).get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', postgres: 'ok', redis: 'ok' });
  });
});
