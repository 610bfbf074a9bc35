import request from 'supertest';
import { createApiKey } from '@mailrail/domain/teams/api-keys';
import { seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { TEAM_PREFIX, teamRoutes } from './team/team-routes';
import { addDashboardMailTeam, addUser, signIn, type Browser } from './testing';

// Every dashboard team route, called
//   (a) without a session: 401;
//   (b) by a member of another team (an ADMIN there), on this team's path: 404 "Team not found",
//       the same as for a team that does not exist, so a team's existence never leaks;
//   (c) by this team's MEMBER: 403 on the ADMIN routes, 200 on the others;
//   (d) by this team's ADMIN: 200; and with another team's ids in the path: 404.
// The public API mounted at /teams/:teamId/v1 is checked for (a) and (b) on every route of the
// OpenAPI document; its own cross-team rules are the API's (http/key-scope-matrix.test.ts), since
// the dashboard sets the same req.auth as a FULL key of the team.
// A dashboard route added without a rule below fails the first test.

let api: TestApi;
let teamB: number;
let adminA: Browser;
let memberA: Browser;
let adminB: Browser;

beforeAll(async () => {
  // Dashboard mail goes out as team 2's, a team of its own, from its verified domain.
  api = await startTestApi({
    DASHBOARD_MAIL_FROM: 'mailrail <dashboard@mail.matrix.test>',
    DASHBOARD_MAIL_TEAM_ID: '2',
    SES_IDENTITY_ADAPTER: 'local',
  });
  expect(api.team.teamId).toBe(1);
  await addDashboardMailTeam(api, 'mail.matrix.test');
  teamB = (await api.newTeam('Team B')).teamId;
  // "Send a test email" needs a verified domain of the team.
  await api.addDomain(api.team.teamId, 'test-email.matrix.test');
  const a = await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]);
  const m = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
  const b = await addUser(api, [{ teamId: teamB, role: 'ADMIN' }]);
  [adminA, memberA, adminB] = [await signIn(api, a.email), await signIn(api, m.email), await signIn(api, b.email)];
});
afterAll(async () => {
  await api.close();
});

// ------------------------------------------------------------------ ids of one team

interface TeamIds {
  apiKeyId: number;
  userId: number;
  invitationId: number;
}
let seq = 0;

/** Fresh ids in a team (a route may delete what it is given). */
async function freshIds(teamId: number): Promise<TeamIds> {
  const n = ++seq;
  const { id: apiKeyId } = await createApiKey(api.deps.db, { teamId, name: `k${n}` });
  const { userId } = await addUser(api, [{ teamId, role: 'MEMBER' }]);
  const inv = await api.deps.db.invitation.create({
    data: { teamId, email: `invitee${n}@example.org`, tokenHash: `hash-${teamId}-${n}`, expiresAt: new Date(Date.now() + 86_400_000) },
  });
  return { apiKeyId, userId, invitationId: inv.id };
}

// ------------------------------------------------------------------ the rule of every route

interface Rule {
  role: 'ADMIN' | 'ANY';
  body?: () => object;
  query?: Record<string, string>;
}

const RULES: Record<string, Rule> = {
  'GET /email-log': { role: 'ANY', query: { status: 'QUEUED', search: 'hello' } },
  'GET /overview': { role: 'ANY' },
  'GET /api-keys': { role: 'ADMIN' },
  'POST /api-keys': { role: 'ADMIN', body: () => ({ name: 'new key', permission: 'SENDING' }) },
  'DELETE /api-keys/:id': { role: 'ADMIN' },
  'GET /members': { role: 'ANY' },
  'PATCH /members/:userId': { role: 'ADMIN', body: () => ({ role: 'ADMIN' }) },
  'DELETE /members/:userId': { role: 'ADMIN' },
  'GET /invitations': { role: 'ANY' },
  'POST /invitations': { role: 'ADMIN', body: () => ({ email: `new${++seq}@example.org`, role: 'MEMBER' }) },
  'DELETE /invitations/:id': { role: 'ADMIN' },
  'GET /settings': { role: 'ANY' },
  'GET /smtp-settings': { role: 'ANY' },
  'POST /test-email': { role: 'ANY' },
  'PATCH /settings': { role: 'ADMIN', body: () => ({ name: 'Renamed team' }) },
};

/** The team routes as declared: the router serves exactly these (routerOf). */
function declaredRoutes(): string[] {
  return teamRoutes.map((r) => `${r.method.toUpperCase()} ${r.path.slice(TEAM_PREFIX.length)}`);
}

function fill(route: string, teamId: number, ids: TeamIds): { method: 'get' | 'post' | 'patch' | 'delete'; path: string } {
  const [method, template] = route.split(' ');
  const path = template
    .replace(':userId', String(ids.userId))
    .replace(':id', String(template.startsWith('/api-keys') ? ids.apiKeyId : ids.invitationId));
  return { method: method.toLowerCase() as 'get', path: `/api/dashboard/teams/${teamId}${path}` };
}

function call(b: Browser | null, route: string, teamId: number, ids: TeamIds) {
  const rule = RULES[route];
  const { method, path } = fill(route, teamId, ids);
  if (!b) {
    // A browser without a session, on our origin (so the answer is about the session, not CSRF).
    const req = request(api.app)[method](path).set('Origin', api.config.PUBLIC_URL);
    return method === 'get' ? req.query(rule.query ?? {}) : req.send(rule.body?.() ?? {});
  }
  if (method === 'get') return b.get(path).query(rule.query ?? {});
  return b[method](path, rule.body?.());
}

const outcome = (res: request.Response) => `${res.status}${res.status >= 400 ? ` ${res.body?.error?.code}` : ''}`;

// ------------------------------------------------------------------ the matrix

it('has a rule for every dashboard team route, and no rule for a route that is gone', () => {
  const declared = declaredRoutes();
  expect(declared.length).toBeGreaterThan(10);
  expect(declared.filter((r) => !RULES[r])).toEqual([]);
  expect(Object.keys(RULES).filter((r) => !declared.includes(r))).toEqual([]);
});

it('every dashboard team route: 401 without a session, 404 for another team, 403 for a MEMBER on ADMIN routes, 200 for the team', async () => {
  const wrong: string[] = [];
  const expect_ = (what: string, res: request.Response, expected: string) => {
    if (outcome(res) !== expected) wrong.push(`${what}: ${outcome(res)}, expected ${expected} ${res.body?.error?.message ?? ''}`);
  };
  for (const route of Object.keys(RULES)) {
    const rule = RULES[route];
    const a = await freshIds(api.team.teamId);
    const b = await freshIds(teamB);
    expect_(`${route} without a session`, await call(null, route, api.team.teamId, a), '401 UNAUTHORIZED');
    const foreign = await call(adminB, route, api.team.teamId, a);
    expect_(`${route} by another team's admin`, foreign, '404 NOT_FOUND');
    if (foreign.status === 404 && foreign.body.error.message !== 'Team not found')
      wrong.push(`${route}: another team's admin got "${foreign.body.error.message}"`);
    expect_(`${route} on a team that does not exist`, await call(adminA, route, 999_999, a), '404 NOT_FOUND');
    if (route.includes(':')) expect_(`${route} with another team's id`, await call(adminA, route, api.team.teamId, b), '404 NOT_FOUND');
    expect_(`${route} by a MEMBER`, await call(memberA, route, api.team.teamId, a), rule.role === 'ADMIN' ? '403 FORBIDDEN' : '200');
    expect_(`${route} by an ADMIN`, await call(adminA, route, api.team.teamId, a), '200');
  }
  expect(wrong).toEqual([]);
}, 120_000);

it("every route of the public API under a team: 401 without a session, 404 for another team's member", async () => {
  const doc = (await request(api.app).get('/api/v1/doc')).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const routes = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security === undefined || op.security.length > 0)
        .map(([method]) => ({ method: method as 'get', path })),
    );
  expect(routes.length).toBeGreaterThan(40);
  const wrong: string[] = [];
  for (const { method, path } of routes) {
    const url = path.replace('/api/v1/', `/api/dashboard/teams/${api.team.teamId}/v1/`).replace(/\{\w+\}/g, '1');
    const anonymous = await request(api.app)[method](url).set('Origin', api.config.PUBLIC_URL).send({});
    if (outcome(anonymous) !== '401 UNAUTHORIZED') wrong.push(`${method} ${path} without a session: ${outcome(anonymous)}`);
    const foreign = method === 'get' ? await adminB.get(url) : await adminB[method as 'post'](url, {});
    if (outcome(foreign) !== '404 NOT_FOUND' || foreign.body.error.message !== 'Team not found')
      wrong.push(`${method} ${path} by another team: ${outcome(foreign)} ${foreign.body?.error?.message}`);
  }
  expect(wrong).toEqual([]);
}, 120_000);

it("the public API under a team works for both roles on the team's data, and another team's ids are 404", async () => {
  const domain = await api.addDomain(api.team.teamId, 'a.matrix.test');
  const otherDomain = await api.addDomain(teamB, 'b.matrix.test');
  const send = (teamId: number, apiKey: string, from: string) =>
    request(api.app)
      .post('/api/v1/emails')
      .set({ Authorization: `Bearer ${apiKey}` })
      .send({ from, to: 'x@example.org', subject: 'Hello', text: 'hi', scheduledAt: new Date(Date.now() + 86_400_000).toISOString() });
  const keyB = await api.newKey(teamB);
  const ownEmail = (await send(api.team.teamId, api.team.apiKey, `a@${domain.name}`).expect(200)).body.emailId;
  const otherEmail = (await send(teamB, keyB, `b@${otherDomain.name}`).expect(200)).body.emailId;
  const base = `/api/dashboard/teams/${api.team.teamId}/v1`;

  for (const b of [memberA, adminA]) {
    const list = await b.get(`${base}/domains`).expect(200);
    expect(list.body.map((d: { id: number }) => d.id)).toContain(domain.id);
    expect(list.body.map((d: { id: number }) => d.id)).not.toContain(otherDomain.id);
    await b.get(`${base}/emails/${ownEmail}`).expect(200);
    await b.get(`${base}/emails/${otherEmail}`).expect(404);
    await b.get(`${base}/domains/${otherDomain.id}`).expect(404);
    await b.patch(`${base}/emails/${otherEmail}`, { scheduledAt: new Date(Date.now() + 7_200_000).toISOString() }).expect(404);
    await b.post(`${base}/emails/${otherEmail}/cancel`).expect(404);
  }
  // The same validation and errors as the API: a bad body is the API's 400.
  const bad = await adminA.post(`${base}/suppressions`, { email: 'not an address' }).expect(400);
  const sameViaKey = await request(api.app).post('/api/v1/suppressions').set(api.team.auth).send({ email: 'not an address' }).expect(400);
  expect(bad.body).toEqual(sameViaKey.body);
  // Emails the dashboard sends carry no API key.
  const sent = await adminA
    .post(`${base}/emails`, { from: `a@${domain.name}`, to: 'y@example.org', subject: 'From the dashboard', text: 'hi' })
    .expect(200);
  expect(await api.deps.db.email.findUnique({ where: { id: sent.body.emailId }, select: { apiKeyId: true, teamId: true } })).toEqual({
    apiKeyId: null,
    teamId: api.team.teamId,
  });
  await adminB.get(`/api/dashboard/teams/${teamB}/v1/emails/${ownEmail}`).expect(404);
  await adminB.get(`/api/dashboard/teams/${teamB}/v1/emails/${otherEmail}`).expect(200);
});

it("segments through the dashboard: both roles build and use them on the team's books; another team's book or segment is 404", async () => {
  const base = `/api/dashboard/teams/${api.team.teamId}/v1`;
  const filter = { match: 'all', conditions: [{ field: 'email', operator: 'endsWith', value: '@example.org' }] };
  const book = (await adminA.post(`${base}/contactBooks`, { name: 'Dashboard segments' }).expect(200)).body.id;
  await adminA.post(`${base}/contactBooks/${book}/contacts`, { email: 'seg@example.org' }).expect(200);
  const keyB = await api.newKey(teamB);
  const bookB = (
    await request(api.app)
      .post('/api/v1/contactBooks')
      .set({ Authorization: `Bearer ${keyB}` })
      .send({ name: 'B' })
      .expect(200)
  ).body.id;
  const segmentB = (
    await request(api.app)
      .post(`/api/v1/contactBooks/${bookB}/segments`)
      .set({ Authorization: `Bearer ${keyB}` })
      .send({ name: 'B', filter })
      .expect(200)
  ).body.id;
  for (const b of [memberA, adminA]) {
    const s = (await b.post(`${base}/contactBooks/${book}/segments`, { name: 'S', filter }).expect(200)).body;
    expect((await b.post(`${base}/contactBooks/${book}/segments/preview`, { filter }).expect(200)).body.count).toBe(1);
    expect((await b.get(`${base}/contactBooks/${book}/segments/${s.id}/contacts`).expect(200)).body.subscribedCount).toBe(1);
    await b.patch(`${base}/contactBooks/${book}/segments/${s.id}`, { name: 'T' }).expect(200);
    await b.delete(`${base}/contactBooks/${book}/segments/${s.id}`).expect(200);
    await b.get(`${base}/contactBooks/${bookB}/segments`).expect(404);
    await b.get(`${base}/contactBooks/${bookB}/segments/${segmentB}`).expect(404);
    await b.get(`${base}/contactBooks/${book}/segments/${segmentB}`).expect(404);
    await b.post(`${base}/contactBooks/${bookB}/segments/preview`, { filter }).expect(404);
  }
  // The other team's admin on this team's path: the team gate answers first.
  await adminB.get(`${base}/contactBooks/${book}/segments`).expect(404);
});

it("contact properties through the dashboard: both roles read and replace the team's book's registry; another team's book is 404", async () => {
  const base = `/api/dashboard/teams/${api.team.teamId}/v1`;
  const book = (await adminA.post(`${base}/contactBooks`, { name: 'Dashboard properties' }).expect(200)).body.id;
  const keyB = await api.newKey(teamB);
  const bookB = (
    await request(api.app)
      .post('/api/v1/contactBooks')
      .set({ Authorization: `Bearer ${keyB}` })
      .send({ name: 'B' })
      .expect(200)
  ).body.id;
  for (const [i, b] of [memberA, adminA].entries()) {
    const properties = [{ name: `ltv${i}`, type: 'number', fallback: '0' }];
    expect((await b.put(`${base}/contactBooks/${book}/properties`, { properties }).expect(200)).body.properties).toEqual(properties);
    expect((await b.get(`${base}/contactBooks/${book}/properties`).expect(200)).body.properties).toEqual(properties);
    await b.get(`${base}/contactBooks/${bookB}/properties`).expect(404);
    await b.put(`${base}/contactBooks/${bookB}/properties`, { properties }).expect(404);
  }
  expect(await api.deps.db.contactProperty.count({ where: { contactBookId: bookB } })).toBe(0);
  await adminB.get(`${base}/contactBooks/${book}/properties`).expect(404);
});

it("the campaign page's routes (PATCH, preview, test, pre-send check, dry-run schedule, recipients) work for both roles on the team's campaigns, 404 on another team's", async () => {
  const html = '<p>Hi {{firstName}}</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';
  const campaignOf = async (teamId: number, apiKey: string, domain: string) => {
    const book = await seedContactBook(api.deps.db, teamId, { subscribed: 2 });
    const res = await request(api.app)
      .post('/api/v1/campaigns')
      .set({ Authorization: `Bearer ${apiKey}` })
      .send({ name: 'C', from: `news@${domain}`, subject: 'S', contactBookId: book.id, html })
      .expect(200);
    return res.body.id as string;
  };
  await api.addDomain(api.team.teamId, 'camp-a.matrix.test');
  await api.addDomain(teamB, 'camp-b.matrix.test');
  const own = await campaignOf(api.team.teamId, api.team.apiKey, 'camp-a.matrix.test');
  const other = await campaignOf(teamB, await api.newKey(teamB), 'camp-b.matrix.test');
  const base = `/api/dashboard/teams/${api.team.teamId}/v1/campaigns`;
  const teamBEmails = await api.deps.db.email.count({ where: { teamId: teamB } });
  for (const b of [memberA, adminA]) {
    await b.patch(`${base}/${own}`, { name: 'Edited', batchWindowMinutes: 5, ramp: { start: 10, factor: 2 } }).expect(200);
    expect((await b.post(`${base}/${own}/preview`, {}).expect(200)).body.subject).toBe('S');
    expect((await b.post(`${base}/${own}/test`, { to: 'me@example.org' }).expect(200)).body.emailIds).toHaveLength(1);
    expect((await b.post(`${base}/${own}/schedule`, { dryRun: true }).expect(200)).body.timeZone).toBe(api.config.CAMPAIGN_TIMEZONE);
    expect((await b.get(`${base}/${own}/check`).expect(200)).body.audience.recipients).toBe(2);
    await b.get(`${base}/${other}/check`).expect(404);
    expect((await b.get(`${base}/${own}/recipients?outcome=pending`).expect(200)).body).toEqual({ recipients: [], nextAfter: null });
    await b.get(`${base}/${other}/recipients`).expect(404);
    await b.patch(`${base}/${other}`, { name: 'Theirs' }).expect(404);
    await b.post(`${base}/${other}/preview`, {}).expect(404);
    await b.post(`${base}/${other}/test`, { to: 'me@example.org' }).expect(404);
    await b.post(`${base}/${other}/schedule`, { dryRun: true }).expect(404);
  }
  expect(await api.deps.db.campaign.findUnique({ where: { id: other }, select: { name: true, status: true } })).toEqual({
    name: 'C',
    status: 'DRAFT',
  });
  expect(await api.deps.db.email.count({ where: { teamId: teamB } })).toBe(teamBEmails);
});

it('a member removed from the team loses access on the next request; malformed team ids are 404', async () => {
  const { userId, email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
  const b = await signIn(api, email);
  await b.get(`/api/dashboard/teams/${api.team.teamId}/overview`).expect(200);
  await adminA.delete(`/api/dashboard/teams/${api.team.teamId}/members/${userId}`).expect(200);
  await b.get(`/api/dashboard/teams/${api.team.teamId}/overview`).expect(404);
  for (const bad of ['abc', '0', '-1', '99999999999', '1.5']) await adminA.get(`/api/dashboard/teams/${bad}/overview`).expect(404);
});

it('CSV imports through the dashboard: both roles preview, upload, list, read and download rejects; another team’s book is 404', async () => {
  const ownBook = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Imports' }).expect(200)).body.id;
  const keyB = await api.newKey(teamB);
  const otherBook = (
    await request(api.app)
      .post('/api/v1/contactBooks')
      .set({ Authorization: `Bearer ${keyB}` })
      .send({ name: 'B' })
      .expect(200)
  ).body.id;
  const base = `/api/dashboard/teams/${api.team.teamId}/v1/contactBooks`;
  // The browser's own requests: multipart and text/csv bodies, with the session, Origin and CSRF token.
  const withCsrf = (b: Browser, req: request.Test) => req.set('Origin', b.origin).set('X-CSRF-Token', b.csrfToken);
  const upload = (b: Browser, book: string) =>
    withCsrf(b, b.agent.post(`${base}/${book}/imports`)).attach('file', Buffer.from('email\nnew@example.org\n'), 'c.csv');
  const preview = (b: Browser, book: string) =>
    withCsrf(b, b.agent.post(`${base}/${book}/imports/preview`))
      .set('Content-Type', 'text/csv')
      .send('email\na@example.org\n');

  for (const b of [memberA, adminA]) {
    expect((await preview(b, ownBook).expect(200)).body.mapping).toEqual({ email: 'email' });
    const started = await upload(b, ownBook).expect(202);
    await b.get(`${base}/${ownBook}/imports/${started.body.id}`).expect(200);
    expect((await b.get(`${base}/${ownBook}/imports`).expect(200)).body.map((i: { id: string }) => i.id)).toContain(started.body.id);
    await b
      .get(`${base}/${ownBook}/imports/${started.body.id}/rejects`)
      .expect(200)
      .expect('Content-Type', /text\/csv/);

    await preview(b, otherBook).expect(404);
    await upload(b, otherBook).expect(404);
    await b.get(`${base}/${otherBook}/imports`).expect(404);
  }
  // Without the CSRF token the upload is refused before anything is stored.
  const before = await api.deps.db.contactImport.count();
  await adminA.agent
    .post(`${base}/${ownBook}/imports`)
    .set('Origin', 'https://evil.example')
    .attach('file', Buffer.from('email\nx@example.org\n'), 'c.csv')
    .expect(403);
  expect(await api.deps.db.contactImport.count()).toBe(before);
  // Another team's admin, on this team's path: the team is not found.
  await upload(adminB, ownBook).expect(404);
});
