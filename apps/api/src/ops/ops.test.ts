import crypto from 'node:crypto';
import request from 'supertest';
import { Registry } from 'prom-client';
import { createLogger } from '@mailrail/platform/log/logger';
import { createApp } from '../app';
import { ADMIN_SESSION_TTL_MS } from './queue-dashboard';
import { startTestApi, type TestApi } from '../testing/api-harness';

let api: TestApi;
beforeAll(async () => {
  // No reuse of a render: these tests read what the requests just before a scrape recorded.
  api = await startTestApi({ METRICS_TOKEN: 'metrics-secret', ADMIN_TOKEN: 'admin-secret', METRICS_CACHE_MS: '0' });
});
afterAll(async () => {
  await api.close();
});

describe('GET /metrics', () => {
  it('needs the metrics token when one is configured', async () => {
    expect((await request(api.app).get('/metrics')).status).toBe(401);
    expect((await request(api.app).get('/metrics').set('Authorization', 'Bearer wrong')).status).toBe(401);
  });

  it('100 concurrent scrapes cost one render per METRICS_CACHE_MS; a missing or wrong token renders nothing', async () => {
    let nowMs = Date.parse('2026-12-01T00:00:00Z');
    const cached = await startTestApi({ METRICS_TOKEN: 'metrics-secret', METRICS_CACHE_MS: '2000' }, undefined, {
      clock: { now: () => new Date(nowMs) },
    });
    const renders = jest.spyOn(Registry.prototype, 'metrics');
    try {
      const scrape = (token = 'metrics-secret') => request(cached.app).get('/metrics').set('Authorization', `Bearer ${token}`);
      const answers = await Promise.all(Array.from({ length: 100 }, () => scrape()));
      expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(renders).toHaveBeenCalledTimes(1);

      const refused = await Promise.all([request(cached.app).get('/metrics'), scrape('wrong')]);
      expect(refused.map((r) => [r.status, r.body.error.code])).toEqual([
        [401, 'UNAUTHORIZED'],
        [401, 'UNAUTHORIZED'],
      ]);
      nowMs += 1999;
      await Promise.all(Array.from({ length: 20 }, () => scrape()));
      expect(renders).toHaveBeenCalledTimes(1);
      nowMs += 1;
      await Promise.all(Array.from({ length: 20 }, () => scrape()));
      expect(renders).toHaveBeenCalledTimes(2);
    } finally {
      renders.mockRestore();
      await cached.close();
    }
  });

  it('compares the metrics token in constant time, whatever the length of the guess', async () => {
    const compare = jest.spyOn(crypto, 'timingSafeEqual');
    try {
      for (const guess of ['m', 'metrics-secreT', 'metrics-secret-but-longer']) {
        expect((await request(api.app).get('/metrics').set('Authorization', `Bearer ${guess}`)).status).toBe(401);
      }
      expect(compare).toHaveBeenCalledTimes(3);
    } finally {
      compare.mockRestore();
    }
  });

  it('exposes request counts and latencies by route pattern, queue depths and process metrics', async () => {
    await request(api.app).get('/api/v1/emails').set(api.team.auth).expect(200);
    await request(api.app).get('/api/v1/emails?limit=0').set(api.team.auth).expect(400);
    const res = await request(api.app).get('/metrics').set('Authorization', 'Bearer metrics-secret');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.text).toMatch(/mailrail_http_requests_total\{method="GET",route="\/api\/v1\/emails",status="200",process="api"\} 1/);
    expect(res.text).toMatch(/mailrail_http_requests_total\{method="GET",route="\/api\/v1\/emails",status="400",process="api"\} 1/);
    expect(res.text).toMatch(
      /mailrail_http_request_duration_seconds_count\{process="api",method="GET",route="\/api\/v1\/emails",status="200"\} 1/,
    );
    expect(res.text).toMatch(/mailrail_queue_jobs\{queue="send-transactional-us-east-1",state="waiting",process="api"\} 0/);
    expect(res.text).toContain('mailrail_process_resident_memory_bytes');
    for (const series of [
      'mailrail_job_duration_seconds',
      'mailrail_emails_total',
      'mailrail_ses_errors_total',
      'mailrail_rate_limit_waits_total',
    ]) {
      expect(res.text).toContain(`# TYPE ${series}`);
    }
  });
});

describe('metric labels', () => {
  const scrape = async () => (await request(api.app).get('/metrics').set('Authorization', 'Bearer metrics-secret')).text;
  // Short, letters only: the old label heuristic kept such segments as they were.
  const random = () => Array.from({ length: 7 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
  const hitRandomPaths = async () => {
    await request(api.app).get(`/api/v1/emails/${random()}`).set(api.team.auth).expect(404);
    await request(api.app).post(`/api/v1/emails/${random()}/cancel`).set(api.team.auth).expect(404);
    await request(api.app).get(`/api/v1/contactBooks/${random()}/contacts/${random()}`).set(api.team.auth).expect(404);
    await request(api.app).get(`/api/v1/emails/${random()}`).expect(401);
    await request(api.app).get(`/api/v1/${random()}`).set(api.team.auth).expect(404);
    await request(api.app).get(`/api/${random()}/${random()}`).expect(404);
    // Any other GET is one of the dashboard app's client routes.
    await request(api.app).get(`/${random()}/${random()}`).expect(200);
  };

  it('labels by route template, so 200 random paths leave /metrics the same size', async () => {
    await hitRandomPaths();
    const before = await scrape();
    expect(before).toMatch(/mailrail_http_requests_total\{method="GET",route="\/api\/v1\/emails\/:emailId",status="404",process="api"\}/);
    expect(before).toMatch(
      /mailrail_http_requests_total\{method="GET",route="\/api\/v1\/contactBooks\/:contactBookId\/contacts\/:contactId",status="404",process="api"\}/,
    );
    expect(before).toMatch(/mailrail_http_requests_total\{method="GET",route="unmatched",status="404",process="api"\}/);
    for (let i = 0; i < 34; i++) await hitRandomPaths(); // 204 random paths
    const after = await scrape();
    // The HTTP series only, what the paths label: the runtime's default metrics come and go with the
    // process's state (a GC kind's first run adds its series, active handles a line per handle type).
    const lines = (text: string) => text.split('\n').filter((l) => l.startsWith('mailrail_http_')).length;
    expect(lines(after)).toBe(lines(before));
  });
});

describe('queue dashboard', () => {
  it('is closed without the admin token', async () => {
    const res = await request(api.app).get('/admin/queues');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('opens with the token and lists the queues', async () => {
    const page = await request(api.app).get('/admin/queues').set('Authorization', 'Bearer admin-secret');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<html/i);
    const queues = await request(api.app).get('/admin/queues/api/queues').set('Authorization', 'Bearer admin-secret');
    expect(queues.status).toBe(200);
    expect(JSON.stringify(queues.body)).toContain('send-transactional-us-east-1');
  });

  it('trades ?token= for a signed session cookie that never holds the token, and drops the token from the URL', async () => {
    const first = await request(api.app).get('/admin/queues?token=admin-secret&x=1');
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/admin/queues?x=1');
    const cookie = String(first.headers['set-cookie']);
    expect(cookie).not.toContain('admin-secret');
    expect(cookie).toMatch(
      /^mailrail_admin=\d+\.[0-9a-f]{64}; Max-Age=43200; Path=\/admin\/queues; Expires=[^;]+; HttpOnly; SameSite=Strict$/,
    );
    const session = cookie.split(';')[0];
    expect((await request(api.app).get('/admin/queues/api/queues').set('Cookie', session)).status).toBe(200);
    // The session is bound to SECRET and ADMIN_TOKEN: a tampered one is no session.
    const tampered = session.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    expect((await request(api.app).get('/admin/queues/api/queues').set('Cookie', tampered)).status).toBe(401);
  });

  it('refuses the raw token as a cookie, and an expired session', async () => {
    expect((await request(api.app).get('/admin/queues/api/queues').set('Cookie', 'mailrail_admin=admin-secret')).status).toBe(401);
    const now = Date.now();
    const clock = { now: () => new Date(now) };
    const { app, close } = createApp({ ...api.deps, clock });
    try {
      const session = String((await request(app).get('/admin/queues?token=admin-secret')).headers['set-cookie']).split(';')[0];
      expect((await request(app).get('/admin/queues/api/queues').set('Cookie', session)).status).toBe(200);
      clock.now = () => new Date(now + ADMIN_SESSION_TTL_MS + 1);
      expect((await request(app).get('/admin/queues/api/queues').set('Cookie', session)).status).toBe(401);
    } finally {
      close();
    }
  });

  it('treats a malformed cookie as no cookie: 401, never 500', async () => {
    for (const cookie of [
      'mailrail_admin=%',
      'mailrail_admin=%E0%A4%A',
      'mailrail_admin=%ff%fe',
      'mailrail_admin=',
      'mailrail_admin=1.zz; other=%',
    ]) {
      const res = await request(api.app).get('/admin/queues/api/queues').set('Cookie', cookie);
      expect([cookie, res.status]).toEqual([cookie, 401]);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('marks the session cookie Secure when PUBLIC_URL is https', async () => {
    const { app, close } = createApp({ ...api.deps, config: { ...api.config, PUBLIC_URL: 'https://mail.example.com' } });
    try {
      const res = await request(app).get('/admin/queues?token=admin-secret');
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure;/);
    } finally {
      close();
    }
  });
});

describe('request log', () => {
  it('never writes the admin token, the metrics token, an API key or a signed-link signature', async () => {
    const lines: string[] = [];
    const log = createLogger('info', 'api', { write: (line: string) => void lines.push(line) });
    const { app, close } = createApp({ ...api.deps, log });
    try {
      await request(app).get('/admin/queues?token=admin-secret');
      await request(app).get('/admin/queues?x=1&Token=admin-secret');
      await request(app).get('/admin/queues').set('Authorization', 'Bearer admin-secret');
      await request(app).get('/metrics?key=metrics-secret').set('Authorization', 'Bearer metrics-secret');
      await request(app).get('/api/v1/emails/nope').set(api.team.auth);
      await request(app).get('/unsubscribe?c=1&sig=signature-value-123&signature=signature-value-123');
    } finally {
      close();
    }
    const output = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(6);
    expect(output).toContain('/admin/queues?token=[REDACTED]');
    expect(output).toContain('/admin/queues?x=1&Token=[REDACTED]');
    for (const secret of ['admin-secret', 'metrics-secret', api.team.apiKey, 'signature-value-123']) expect(output).not.toContain(secret);
  });
});
