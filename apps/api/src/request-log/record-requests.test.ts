import request from 'supertest';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi } from '../testing/api-harness';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ REQUEST_LOG_FLUSH_MS: '20' });
  await api.addDomain(api.team.teamId, 'example.com');
});

afterAll(() => api.close());

/** The team's rows for `path`, once `count` of them are written. */
const rowsFor = (teamId: number, path: string, count = 1) =>
  waitFor(
    async () => {
      const rows = await api.deps.db.requestLog.findMany({ where: { teamId, path }, orderBy: { id: 'asc' } });
      return rows.length >= count && rows;
    },
    { timeoutMs: 10_000, intervalMs: 20, what: `request log rows for ${path}` },
  );

it('records a 200 send with its key, and keeps no secret nor a whole body', async () => {
  const html = `<p>${'x'.repeat(5000)}</p>`;
  const res = await request(api.app)
    .post('/api/v1/emails')
    .set(api.team.auth)
    .send({
      to: 'ann@dest.org',
      from: 'hello@example.com',
      subject: 'Hi',
      html,
      attachments: [{ filename: 'a.txt', content: Buffer.from('secret file').toString('base64') }],
      headers: { 'X-Api-Token': 'tok_123' },
    });
  expect(res.status).toBe(200);
  const [row] = await rowsFor(api.team.teamId, '/api/v1/emails');
  const keyRow = await api.deps.db.apiKey.findFirstOrThrow({ where: { teamId: api.team.teamId } });
  expect(row).toMatchObject({ source: 'api', method: 'POST', status: 200, errorCode: null, apiKeyId: keyRow.id });
  const body = row.requestBody as Record<string, unknown>;
  expect(body.subject).toBe('Hi');
  expect((body.html as string).length).toBeLessThan(400);
  expect(JSON.stringify(body)).not.toContain('secret file');
  expect(JSON.stringify(body)).not.toContain(Buffer.from('secret file').toString('base64'));
  expect(JSON.stringify(body)).not.toContain('tok_123');
  expect(JSON.stringify({ ...row, id: String(row.id) })).not.toContain(api.team.apiKey);
});

it('records a 400 with its error code and message, through express as well (a query string)', async () => {
  const res = await request(api.app).post('/api/v1/emails?x=1').set(api.team.auth).send({ to: 'ann@dest.org', password: 'hunter2' });
  expect(res.status).toBe(400);
  const rows = await rowsFor(api.team.teamId, '/api/v1/emails', 2);
  const row = rows.find((r) => r.status === 400)!;
  expect(row).toMatchObject({ method: 'POST', errorCode: 'BAD_REQUEST', errorMessage: res.body.error.message });
  expect(row.requestBody).toEqual({ to: 'ann@dest.org', password: '[REDACTED]' });
});

it('records a 403 of a SENDING key under its team, and nothing of a request whose key is not known', async () => {
  const sending = await api.newKey(api.team.teamId, { permission: 'SENDING' });
  const forbidden = await request(api.app)
    .get('/api/v1/domains')
    .set({ Authorization: `Bearer ${sending}` });
  expect(forbidden.status).toBe(403);
  // useSend's answers: no key is a 401, a key that is not one is a 403; neither has a team.
  await request(api.app).get('/api/v1/contactBooks').expect(401);
  await request(api.app).get('/api/v1/contactBooks').set({ Authorization: 'Bearer us_nope_nope' }).expect(403);
  // A later request of the same team: once it is written, the refusals before it would have been too.
  await request(api.app).get('/api/v1/templates').set(api.team.auth).expect(200);
  await rowsFor(api.team.teamId, '/api/v1/templates');
  const [row] = await rowsFor(api.team.teamId, '/api/v1/domains');
  expect(row).toMatchObject({ method: 'GET', status: 403, errorCode: 'FORBIDDEN', requestBody: null });
  expect(await api.deps.db.requestLog.count({ where: { path: '/api/v1/contactBooks' } })).toBe(0);
});

it("keeps each team's requests under its own team", async () => {
  const other = await api.newTeam('Other');
  await request(api.app).get('/api/v1/webhooks').set(other.auth).expect(200);
  const [row] = await rowsFor(other.teamId, '/api/v1/webhooks');
  expect(row.status).toBe(200);
  expect(await api.deps.db.requestLog.count({ where: { teamId: api.team.teamId, path: '/api/v1/webhooks' } })).toBe(0);
});

it('stores a refused body holding NUL and a lone surrogate (which jsonb refuses) without losing the batch', async () => {
  const res = await request(api.app)
    .post('/api/v1/emails')
    .set(api.team.auth)
    .set('Content-Type', 'application/json')
    .send('{"subject":"a\\u0000b","to":"\\ud800","\\u0000key":1}');
  expect(res.status).toBe(400);
  await request(api.app).get('/api/v1/suppressions').set(api.team.auth).expect(200);
  await rowsFor(api.team.teamId, '/api/v1/suppressions');
  const rows = await rowsFor(api.team.teamId, '/api/v1/emails');
  const row = rows.find((r) => r.status === 400 && (r.requestBody as { subject?: string } | null)?.subject === 'a\ufffdb')!;
  expect(row.requestBody).toEqual({ subject: 'a\ufffdb', to: '\ufffd', '\ufffdkey': 1 });
  expect(row.errorCode).toBe('BAD_REQUEST');
});

it('records nothing with REQUEST_LOG_ENABLED=false, through the accept lane or express', async () => {
  const off = await startTestApi(
    { REQUEST_LOG_ENABLED: 'false', REQUEST_LOG_FLUSH_MS: '20' },
    { databaseUrl: api.config.DATABASE_URL, redisPrefix: api.config.REDIS_PREFIX },
  );
  const team = await off.newTeam('Quiet');
  await off.addDomain(team.teamId, 'quiet.example.com');
  const send = { to: 'ann@dest.org', from: 'hello@quiet.example.com', subject: 'Hi', text: 'x' };
  await request(off.app).post('/api/v1/emails').set(team.auth).send(send).expect(200);
  await request(off.app).get('/api/v1/domains').set(team.auth).expect(200);
  // close() writes whatever a writer buffered: with the log on, both requests would be in the table now.
  await off.close();
  // The same requests through the API with the log on are logged (so the count below can fail).
  await request(api.app).get('/api/v1/domains').set(team.auth).expect(200);
  await rowsFor(team.teamId, '/api/v1/domains');
  expect(await api.deps.db.requestLog.count({ where: { teamId: team.teamId, path: '/api/v1/emails' } })).toBe(0);
  expect(await api.deps.db.requestLog.count({ where: { teamId: team.teamId, path: '/api/v1/domains' } })).toBe(1);
});
