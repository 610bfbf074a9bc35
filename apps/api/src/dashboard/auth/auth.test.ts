import request from 'supertest';
import { issueUserToken } from '@mailrail/domain/users/user-tokens';
import { deleteRedisPrefix } from '@mailrail/testing/redis';
import { startTestApi, type TestApi } from '../../testing/api-harness';
import { addUser, browser, PASSWORD, signIn } from '../testing';

let api: TestApi;
const MAX_PER_ACCOUNT = 3;
const MAX_PER_IP = 8;

beforeAll(async () => {
  api = await startTestApi({
    DASHBOARD_LOGIN_FAILURES_PER_ACCOUNT: String(MAX_PER_ACCOUNT),
    DASHBOARD_LOGIN_FAILURES_PER_IP: String(MAX_PER_IP),
  });
});
afterAll(async () => {
  await api.close();
});
// Every test starts with clean sign-in counters (they are per IP, and supertest is always 127.0.0.1).
beforeEach(async () => {
  // Every master's login limits (a multi-key DEL of KEYS' answer fails on a cluster).
  await deleteRedisPrefix(api.deps.redis, `${api.config.REDIS_PREFIX}:dash`);
});

const login = (email: string, password: string) => browser(api).post('/api/dashboard/auth/login', { email, password });

describe('sign-in', () => {
  it('signs in with email and password: an httpOnly SameSite=Lax cookie, the session with teams and a CSRF token, never the hash', async () => {
    const { userId, email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const res = await login(email.toUpperCase(), PASSWORD).expect(200);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^mailrail_session=[\w-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/); // PUBLIC_URL is http here
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      user: { id: userId, email, hasPassword: true, operator: false },
      teams: [{ id: api.team.teamId, name: 'Test team', role: 'ADMIN' }],
      lastTeamId: api.team.teamId,
      csrfToken: expect.stringMatching(/^[\w-]{43}$/),
      expiresAt: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain('argon2');
    // Only the token's hash is stored.
    const token = cookie.split(';')[0].split('=')[1];
    const stored = await api.deps.db.session.findMany({ where: { userId } });
    expect(JSON.stringify(stored)).not.toContain(token);
  });

  it('answers a wrong password, an unknown address and an account without a password alike', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    await api.deps.db.user.create({ data: { email: 'nopassword@example.org' } });
    const answers = await Promise.all([
      login(email, 'wrong password!'),
      login('nobody@example.org', 'wrong password!'),
      login('nopassword@example.org', 'anything at all'),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'Invalid email or password' } });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('GET /session is 401 without a session and with a forged cookie', async () => {
    await request(api.app).get('/api/dashboard/session').expect(401);
    const res = await request(api.app)
      .get('/api/dashboard/session')
      .set('Cookie', `mailrail_session=${'a'.repeat(43)}`)
      .expect(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('a session cookie opens no /api/v1 route (the public API takes API keys only)', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const b = await signIn(api, email);
    await b.get('/api/v1/domains').expect(401);
  });
});

describe('throttling', () => {
  it('locks an address after too many failures, whether or not it has an account, even for the right password', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    for (const address of [email, 'ghost@example.org']) {
      const statuses: number[] = [];
      for (let i = 0; i <= MAX_PER_ACCOUNT; i++) statuses.push((await login(address, 'wrong password!')).status);
      expect(statuses).toEqual([...Array(MAX_PER_ACCOUNT).fill(401), 429]);
      const locked = await login(address, PASSWORD).expect(429);
      expect(locked.body.error.message).toMatch(/^Too many sign-in attempts\. Try again in \d+ seconds\.$/);
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('locks a client IP that fails across many addresses, and a success clears only the address', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    await login(email, 'wrong password!').expect(401);
    await login(email, PASSWORD).expect(200);
    // The address's count was cleared by the success: failures up to the limit are 401 again.
    for (let i = 0; i < MAX_PER_ACCOUNT - 1; i++) await login(email, 'wrong password!').expect(401);
    let last = 401;
    for (let i = 0; last !== 429 && i < MAX_PER_IP + 2; i++) last = (await login(`spray${i}@example.org`, 'wrong password!')).status;
    expect(last).toBe(429);
    await login(email, PASSWORD).expect(429);
  });
});

describe('sessions', () => {
  it('signs out this session; its cookie is then dead even if replayed', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const b = await signIn(api, email);
    const cookie = (await b.get('/api/dashboard/session').expect(200)).request.cookies;
    await b.post('/api/dashboard/auth/logout').expect(200, { success: true });
    await b.get('/api/dashboard/session').expect(401);
    await request(api.app).get('/api/dashboard/session').set('Cookie', cookie).expect(401);
  });

  it('signs out everywhere: every session of the user ends, other users keep theirs', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const other = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const [laptop, phone, someoneElse] = [await signIn(api, email), await signIn(api, email), await signIn(api, other.email)];
    const res = await phone.post('/api/dashboard/auth/logout-everywhere').expect(200);
    expect(res.body).toEqual({ success: true, sessionsEnded: 2 });
    await laptop.get('/api/dashboard/session').expect(401);
    await phone.get('/api/dashboard/session').expect(401);
    await someoneElse.get('/api/dashboard/session').expect(200);
  });

  it('ends a session idle past DASHBOARD_SESSION_IDLE_MINUTES or older than DASHBOARD_SESSION_MAX_DAYS, and moves the idle expiry with use', async () => {
    const { userId, email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const b = await signIn(api, email);
    const session = await api.deps.db.session.findFirstOrThrow({ where: { userId } });
    expect(session.expiresAt.getTime() - session.createdAt.getTime()).toBe(api.config.DASHBOARD_SESSION_IDLE_MINUTES * 60_000);
    expect(session.absoluteExpiresAt.getTime() - session.createdAt.getTime()).toBe(api.config.DASHBOARD_SESSION_MAX_DAYS * 86_400_000);

    // Used again after a while: the idle expiry moves forward.
    const earlier = new Date(Date.now() - 10 * 60_000);
    await api.deps.db.session.update({
      where: { id: session.id },
      data: { lastSeenAt: earlier, expiresAt: new Date(Date.now() + 60_000) },
    });
    const before = Date.now();
    await b.get('/api/dashboard/session').expect(200);
    const after = Date.now();
    const touched = await api.deps.db.session.findUniqueOrThrow({ where: { id: session.id } });
    // DASHBOARD_SESSION_IDLE_MINUTES from the request that used it.
    const idleMs = api.config.DASHBOARD_SESSION_IDLE_MINUTES * 60_000;
    expect(touched.expiresAt.getTime()).toBeGreaterThanOrEqual(before + idleMs);
    expect(touched.expiresAt.getTime()).toBeLessThanOrEqual(after + idleMs);

    await api.deps.db.session.update({ where: { id: session.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await b.get('/api/dashboard/session').expect(401);

    const b2 = await signIn(api, email);
    await api.deps.db.session.updateMany({
      where: { userId, expiresAt: { gt: new Date() } },
      data: { absoluteExpiresAt: new Date(Date.now() - 1000) },
    });
    await b2.get('/api/dashboard/session').expect(401);
  });
});

describe('CSRF', () => {
  it('refuses a state-changing call without Origin, from a foreign Origin, without the token or with a wrong one', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const b = await signIn(api, email);
    const path = `/api/dashboard/teams/${api.team.teamId}/v1/suppressions`;
    const body = { email: 'csrf@example.org' };
    const attempts = [
      b.agent.post(path).set('X-CSRF-Token', b.csrfToken).send(body),
      b.agent.post(path).set('Origin', 'https://evil.example').set('X-CSRF-Token', b.csrfToken).send(body),
      b.agent.post(path).set('Origin', 'null').set('X-CSRF-Token', b.csrfToken).send(body),
      b.agent.post(path).set('Referer', 'https://evil.example/page').set('X-CSRF-Token', b.csrfToken).send(body),
      b.agent.post(path).set('Origin', b.origin).send(body),
      b.agent.post(path).set('Origin', b.origin).set('X-CSRF-Token', 'x'.repeat(43)).send(body),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body.error.message).toMatch(/^CSRF check failed: /);
    }
    expect(await api.deps.db.suppression.count({ where: { email: 'csrf@example.org' } })).toBe(0);
    // The same call from the app: Origin (or a same-origin Referer) and the token.
    await b.agent.post(path).set('Referer', `${b.origin}/suppressions`).set('X-CSRF-Token', b.csrfToken).send(body).expect(200);
    await b.post(path, body).expect(200);
  });

  it('accepts the request’s own origin besides PUBLIC_URL’s, and checks Origin on sign-in too', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    await request(api.app)
      .post('/api/dashboard/auth/login')
      .set('Origin', 'https://evil.example')
      .send({ email, password: PASSWORD })
      .expect(403);
    await request(api.app).post('/api/dashboard/auth/login').send({ email, password: PASSWORD }).expect(403);
    await request(api.app)
      .post('/api/dashboard/auth/login')
      .set('Host', 'dash.internal:8080')
      .set('Origin', 'http://dash.internal:8080')
      .send({ email, password: PASSWORD })
      .expect(200);
  });

  it('a session cookie of another site’s form (no Origin, no token) cannot sign out everywhere', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
    const b = await signIn(api, email);
    await b.agent.post('/api/dashboard/auth/logout-everywhere').set('Origin', b.origin).expect(403);
    await b.get('/api/dashboard/session').expect(200);
  });
});

describe('links and passwords', () => {
  it('a one-time sign-in link works once; a user without a password then sets one', async () => {
    const user = await api.deps.db.user.create({ data: { email: 'linked@example.org' } });
    await api.deps.db.membership.create({ data: { userId: user.id, teamId: api.team.teamId, role: 'ADMIN' } });
    const token = await issueUserToken(api.deps.db, { userId: user.id, purpose: 'SIGN_IN', ttlMs: 60_000, now: new Date() });
    const b = browser(api);
    const res = await b.post('/api/dashboard/auth/link', { token }).expect(200);
    expect(res.body.user).toEqual({ id: user.id, email: 'linked@example.org', hasPassword: false, operator: false });
    b.csrfToken = res.body.csrfToken;
    const again = await browser(api).post('/api/dashboard/auth/link', { token }).expect(400);
    expect(again.body.error.message).toBe('This link is invalid, expired or already used');

    await b.post('/api/dashboard/account/password', { newPassword: 'short' }).expect(400);
    await b.post('/api/dashboard/account/password', { newPassword: 'a brand new password' }).expect(200, { success: true });
    await signIn(api, 'linked@example.org', 'a brand new password');
  });

  it('an expired link or one for another purpose does not sign in', async () => {
    const { userId } = await addUser(api, []);
    const expired = await issueUserToken(api.deps.db, { userId, purpose: 'SIGN_IN', ttlMs: 60_000, now: new Date(Date.now() - 120_000) });
    const reset = await issueUserToken(api.deps.db, { userId, purpose: 'PASSWORD_RESET', ttlMs: 60_000, now: new Date() });
    await browser(api).post('/api/dashboard/auth/link', { token: expired }).expect(400);
    await browser(api).post('/api/dashboard/auth/link', { token: reset }).expect(400);
    await browser(api).post('/api/dashboard/auth/link', { token: 'not a token' }).expect(400);
  });

  it('changing the password needs the current one and ends the other sessions', async () => {
    const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    const [here, elsewhere] = [await signIn(api, email), await signIn(api, email)];
    await here.post('/api/dashboard/account/password', { newPassword: 'another long password' }).expect(400);
    const wrong = await here
      .post('/api/dashboard/account/password', { currentPassword: 'not it at all', newPassword: 'another long password' })
      .expect(400);
    expect(wrong.body.error.message).toBe('The current password is wrong');
    await here.post('/api/dashboard/account/password', { currentPassword: PASSWORD, newPassword: 'another long password' }).expect(200);
    await here.get('/api/dashboard/session').expect(200);
    await elsewhere.get('/api/dashboard/session').expect(401);
    await login(email, PASSWORD).expect(401);
    await login(email, 'another long password').expect(200);
  });

  it('a password-reset link sets a new password once, signs in and ends every older session', async () => {
    const { userId, email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    const old = await signIn(api, email);
    const token = await issueUserToken(api.deps.db, { userId, purpose: 'PASSWORD_RESET', ttlMs: 60_000, now: new Date() });
    const b = browser(api);
    await b.post('/api/dashboard/auth/password-reset/confirm', { token, password: 'short' }).expect(400);
    const res = await b.post('/api/dashboard/auth/password-reset/confirm', { token, password: 'reset to this one' }).expect(200);
    expect(res.body.user.id).toBe(userId);
    await old.get('/api/dashboard/session').expect(401);
    await b.get('/api/dashboard/session').expect(200);
    await browser(api).post('/api/dashboard/auth/password-reset/confirm', { token, password: 'and again this one' }).expect(400);
    await login(email, 'reset to this one').expect(200);
  });

  it('only the newest reset link works: a newer one voids the older', async () => {
    const { userId, email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    const older = await issueUserToken(api.deps.db, { userId, purpose: 'PASSWORD_RESET', ttlMs: 60_000, now: new Date() });
    const newer = await issueUserToken(api.deps.db, { userId, purpose: 'PASSWORD_RESET', ttlMs: 60_000, now: new Date() });
    const stale = await browser(api)
      .post('/api/dashboard/auth/password-reset/confirm', { token: older, password: 'from the old link' })
      .expect(400);
    expect(stale.body.error.message).toBe('This link is invalid, expired or already used');
    await browser(api).post('/api/dashboard/auth/password-reset/confirm', { token: newer, password: 'from the new link' }).expect(200);
    await login(email, 'from the new link').expect(200);
  });

  it('a password change voids every reset and sign-in link issued before it', async () => {
    const { userId, email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    const reset = await issueUserToken(api.deps.db, { userId, purpose: 'PASSWORD_RESET', ttlMs: 60_000, now: new Date() });
    const signInLink = await issueUserToken(api.deps.db, { userId, purpose: 'SIGN_IN', ttlMs: 60_000, now: new Date() });
    const b = await signIn(api, email);
    await b.post('/api/dashboard/account/password', { currentPassword: PASSWORD, newPassword: 'changed on purpose' }).expect(200);
    await browser(api).post('/api/dashboard/auth/password-reset/confirm', { token: reset, password: 'taken over by link' }).expect(400);
    await browser(api).post('/api/dashboard/auth/link', { token: signInLink }).expect(400);
    await login(email, 'changed on purpose').expect(200);

    // A reset through one link voids the user's other reset links too.
    const [first, second] = [
      await issueUserToken(api.deps.db, { userId, purpose: 'PASSWORD_RESET', ttlMs: 60_000, now: new Date() }),
      await issueUserToken(api.deps.db, { userId, purpose: 'SIGN_IN', ttlMs: 60_000, now: new Date() }),
    ];
    await browser(api).post('/api/dashboard/auth/password-reset/confirm', { token: first, password: 'reset once more' }).expect(200);
    await browser(api).post('/api/dashboard/auth/link', { token: second }).expect(400);
  });

  it('a reset request answers the same for known and unknown addresses', async () => {
    const { email } = await addUser(api, []);
    const known = await browser(api).post('/api/dashboard/auth/password-reset/request', { email }).expect(200);
    const unknown = await browser(api).post('/api/dashboard/auth/password-reset/request', { email: 'nobody-here@example.org' }).expect(200);
    expect(known.body).toEqual({ success: true });
    expect(unknown.body).toEqual(known.body);
  });
});

describe('https', () => {
  let secure: TestApi;
  beforeAll(async () => {
    secure = await startTestApi({ PUBLIC_URL: 'https://mail.example.com' });
  });
  afterAll(async () => {
    await secure.close();
  });

  it('marks the session cookie Secure when PUBLIC_URL is https', async () => {
    const { email } = await addUser(secure, [{ teamId: secure.team.teamId, role: 'ADMIN' }]);
    const res = await request(secure.app)
      .post('/api/dashboard/auth/login')
      .set('Origin', 'https://mail.example.com')
      .send({ email, password: PASSWORD })
      .expect(200);
    expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
  });
});
