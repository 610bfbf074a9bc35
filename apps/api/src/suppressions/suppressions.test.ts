import request from 'supertest';
import { startTestApi, type TestApi } from '../testing/api-harness';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

describe('/api/v1/suppressions', () => {
  it('adds an address (lower-cased, MANUAL by default) and adding it again changes nothing', async () => {
    const team = await api.newTeam();
    const first = await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email: '  Person@Example.COM ' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ email: 'person@example.com', reason: 'MANUAL' });
    const again = await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email: 'person@example.com' });
    expect(again.body.id).toBe(first.body.id);
    expect(await api.deps.db.suppression.count({ where: { teamId: team.teamId } })).toBe(1);
  });

  it('keeps an existing reason unless the request names one', async () => {
    const team = await api.newTeam();
    await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email: 'b@example.com', reason: 'HARD_BOUNCE' });
    const plain = await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email: 'b@example.com' });
    expect(plain.body.reason).toBe('HARD_BOUNCE');
    const named = await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email: 'b@example.com', reason: 'COMPLAINT' });
    expect(named.body.reason).toBe('COMPLAINT');
  });

  it('validates the body', async () => {
    const team = await api.newTeam();
    const res = await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email: 'not-an-email', reason: 'WHATEVER' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.issues.map((i: { path: string[] }) => i.path[0]).sort()).toEqual(['email', 'reason']);
    expect(await api.deps.db.suppression.count({ where: { teamId: team.teamId } })).toBe(0);
  });

  it('lists newest first with paging, count and a substring search', async () => {
    const team = await api.newTeam();
    for (const email of ['a1@one.com', 'a2@two.com', 'a3@one.com']) {
      await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email });
      await new Promise((r) => setTimeout(r, 5));
    }
    const all = await request(api.app).get('/api/v1/suppressions').set(team.auth);
    expect(all.body.count).toBe(3);
    expect(all.body.data.map((s: { email: string }) => s.email)).toEqual(['a3@one.com', 'a2@two.com', 'a1@one.com']);
    const page2 = await request(api.app).get('/api/v1/suppressions?page=2&limit=2').set(team.auth);
    expect(page2.body).toMatchObject({ count: 3, data: [{ email: 'a1@one.com' }] });
    const search = await request(api.app).get('/api/v1/suppressions?search=ONE.com').set(team.auth);
    expect(search.body.count).toBe(2);
    expect(search.body.data.map((s: { email: string }) => s.email)).toEqual(['a3@one.com', 'a1@one.com']);
    // LIKE wildcards in the search are literal characters.
    expect((await request(api.app).get('/api/v1/suppressions?search=%25').set(team.auth)).body.count).toBe(0);
    expect((await request(api.app).get('/api/v1/suppressions?limit=101').set(team.auth)).status).toBe(400);
  });

  it('removes an address, and answers 404 when it is not listed', async () => {
    const team = await api.newTeam();
    await request(api.app).post('/api/v1/suppressions').set(team.auth).send({ email: 'gone@example.com' });
    const res = await request(api.app).delete('/api/v1/suppressions/Gone%40Example.com').set(team.auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email: 'gone@example.com', success: true });
    const again = await request(api.app).delete('/api/v1/suppressions/gone@example.com').set(team.auth);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');
  });

  it('keeps teams apart', async () => {
    const a = await api.newTeam();
    const b = await api.newTeam();
    await request(api.app).post('/api/v1/suppressions').set(a.auth).send({ email: 'mine@example.com' });
    expect((await request(api.app).get('/api/v1/suppressions').set(b.auth)).body).toEqual({ data: [], count: 0 });
    expect((await request(api.app).delete('/api/v1/suppressions/mine@example.com').set(b.auth)).status).toBe(404);
    expect(await api.deps.db.suppression.count({ where: { teamId: a.teamId } })).toBe(1);
  });
});
