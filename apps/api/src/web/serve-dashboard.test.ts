import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startTestApi, type TestApi } from '../testing/api-harness';

// The built dashboard app at `/`: the shell for client routes, long-lived caching for hashed
// assets only, and never in the way of the server's own routes.

let api: TestApi;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'mailrail-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><div id="root"></div><script src="/assets/index-3f2a1b9c.js"></script>');
  writeFileSync(path.join(dir, 'assets', 'index-3f2a1b9c.js'), 'console.log("app")');
  writeFileSync(path.join(dir, 'assets', 'vendor-9e8d7c6b.js'), `export const big = ${JSON.stringify('x'.repeat(20_000))};`);
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  api = await startTestApi({ DASHBOARD_WEB_DIR: dir });
});
afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

it('answers the app shell at / and on client routes, revalidated every time', async () => {
  for (const p of ['/', '/emails', '/domains/12', '/reset-password', '/sign-in/link']) {
    const res = await request(api.app).get(p).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.text).toContain('<div id="root">');
  }
});

it('serves hashed assets for a year, other files revalidated, and a missing asset is a 404', async () => {
  const js = await request(api.app).get('/assets/index-3f2a1b9c.js').expect(200);
  expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  expect(js.headers['content-type']).toMatch(/javascript/);
  const icon = await request(api.app).get('/favicon.svg').expect(200);
  expect(icon.headers['cache-control']).toBe('no-cache');
  const missing = await request(api.app).get('/assets/index-00000000.js').expect(404);
  expect(missing.body.error.code).toBe('NOT_FOUND');
  await request(api.app).get('/assets/../../etc/passwd').expect(404);
});

it('compresses the app for browsers that accept gzip, and only for them', async () => {
  const gzipped = await request(api.app).get('/assets/vendor-9e8d7c6b.js').set('Accept-Encoding', 'gzip').expect(200);
  expect(gzipped.headers['content-encoding']).toBe('gzip');
  expect(gzipped.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  const plain = await request(api.app).get('/assets/vendor-9e8d7c6b.js').set('Accept-Encoding', 'identity').expect(200);
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(plain.text.length).toBeGreaterThan(20_000);
});

it('never shadows or swallows a server route', async () => {
  await request(api.app).get('/health').expect(200).expect('Content-Type', /json/);
  await request(api.app).get('/api/v1/doc').expect(200).expect('Content-Type', /json/);
  await request(api.app)
    .get('/metrics')
    .expect((res) => expect(res.text).not.toContain('id="root"'));
  await request(api.app).get('/api/v1/emails').expect(401);
  for (const p of ['/api/nope', '/api/dashboard/nope', '/api', '/admin/queues/x', '/unsubscribe/nope']) {
    const res = await request(api.app).get(p);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  }
  await request(api.app).post('/emails').expect(404);
});

it('without a build, / says how to build it', async () => {
  const bare = await startTestApi({ DASHBOARD_WEB_DIR: path.join(dir, 'nothing-here') });
  try {
    const res = await request(bare.app).get('/').expect(200);
    expect(res.text).toMatch(/not built yet.*npm run build/s);
    await request(bare.app).get('/api/v1/doc').expect(200);
  } finally {
    await bare.close();
  }
});

describe('security headers', () => {
  const base = (res: request.Response) => {
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
  };

  it('the dashboard shell: a CSP with only its own scripts, nothing may frame it, no sniffing, no Referer', async () => {
    for (const p of ['/', '/emails/abc', '/reset-password']) {
      const res = await request(api.app).get(p).expect(200);
      base(res);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/script-src[^;]*(unsafe-inline|unsafe-eval|https?:)/);
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("base-uri 'none'");
    }
    base(await request(api.app).get('/assets/index-3f2a1b9c.js').expect(200));
  });

  it('every API answer: JSON of /api/v1 and the dashboard API, the accept lane, errors, the docs page', async () => {
    const answers = [
      await request(api.app).get('/api/v1/domains').set(api.team.auth).expect(200),
      await request(api.app).get('/api/v1/domains').expect(401),
      await request(api.app)
        .get('/api/v1/domains')
        .set('Authorization', 'Bearer us_0000000000_00000000000000000000000000000000')
        .expect(403),
      await request(api.app).post('/api/v1/emails').set(api.team.auth).send({ to: 'a@b.org' }).expect(400),
      await request(api.app).get('/api/dashboard/session').expect(401),
      await request(api.app).get('/api/nothing-here').expect(404),
      await request(api.app).get('/health').expect(200),
      await request(api.app).get('/api/v1/ui').expect(200),
    ];
    for (const res of answers) base(res);
    // The JSON API is not the dashboard: no page policy that would mean anything to it.
    expect(answers[0].headers['content-security-policy']).toBe("frame-ancestors 'none'");
  });

  it('holds for every team, role and key scope alike (headers depend on nothing of the caller)', async () => {
    const other = await api.newTeam('Other team');
    const sending = await api.newKey(other.teamId, { permission: 'SENDING' });
    for (const auth of [api.team.auth, other.auth, { Authorization: `Bearer ${sending}` }])
      base(await request(api.app).get('/api/v1/emails').set(auth));
  });
});
