import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

let api: TestApi;
let other: TestTeam;

beforeAll(async () => {
  api = await startTestApi();
  other = await api.newTeam('Other');
});

afterAll(async () => {
  await api.close();
});

const create = (body: unknown, auth = api.team.auth) =>
  request(api.app)
    .post('/api/v1/templates')
    .set(auth)
    .send(body as object);

describe('/api/v1/templates', () => {
  it('creates, reads, updates and deletes a template', async () => {
    const created = await create({ name: 'Welcome', subject: 'Hi {{name}}', html: '<p>{{name}}</p>' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Welcome',
      subject: 'Hi {{name}}',
      html: '<p>{{name}}</p>',
      text: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id = created.body.id;

    const got = await request(api.app).get(`/api/v1/templates/${id}`).set(api.team.auth);
    expect(got.body).toEqual(created.body);

    const updated = await request(api.app).patch(`/api/v1/templates/${id}`).set(api.team.auth).send({ text: 'Hi {{name}}', html: null });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, name: 'Welcome', text: 'Hi {{name}}', html: null });

    const deleted = await request(api.app).delete(`/api/v1/templates/${id}`).set(api.team.auth);
    expect(deleted.body).toEqual({ id, success: true });
    expect((await request(api.app).get(`/api/v1/templates/${id}`).set(api.team.auth)).status).toBe(404);
  });

  it("lists the team's templates newest first with a count", async () => {
    const team = await api.newTeam('Lister');
    for (const name of ['one', 'two', 'three']) await create({ name, subject: 's' }, team.auth);
    const res = await request(api.app).get('/api/v1/templates?limit=2').set(team.auth);
    expect(res.body.count).toBe(3);
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(['three', 'two']);
  });

  it('validates the body, naming the field', async () => {
    for (const [body, path] of [
      [{ subject: 's' }, 'name'],
      [{ name: 'n' }, 'subject'],
      [{ name: 'n', subject: 's', html: 5 }, 'html'],
      [{ name: 'n', subject: 's', text: '' }, 'text'],
      [{ name: 'n'.repeat(256), subject: 's' }, 'name'],
      [{ name: 'n', subject: 's'.repeat(999) }, 'subject'],
    ] as const) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error.issues[0].path).toEqual([path]);
    }
    const t = await create({ name: 'n', subject: 's' });
    expect((await request(api.app).patch(`/api/v1/templates/${t.body.id}`).set(api.team.auth).send({})).status).toBe(400);
    expect(
      (
        await request(api.app)
          .get(`/api/v1/templates/${'t'.repeat(129)}`)
          .set(api.team.auth)
      ).status,
    ).toBe(400);
  });

  it('keeps templates to their team: 404 on get, update and delete', async () => {
    const t = await create({ name: 'Mine', subject: 's' });
    const id = t.body.id;
    expect((await request(api.app).get(`/api/v1/templates/${id}`).set(other.auth)).status).toBe(404);
    expect((await request(api.app).patch(`/api/v1/templates/${id}`).set(other.auth).send({ name: 'Stolen' })).status).toBe(404);
    expect((await request(api.app).delete(`/api/v1/templates/${id}`).set(other.auth)).status).toBe(404);
    expect((await request(api.app).get('/api/v1/templates').set(other.auth)).body.data.map((x: { id: string }) => x.id)).not.toContain(id);
    expect((await request(api.app).get(`/api/v1/templates/${id}`).set(api.team.auth)).body.name).toBe('Mine');
  });

  it('is out of reach of SENDING keys', async () => {
    const key = await api.newKey(api.team.teamId, { permission: 'SENDING' });
    expect((await request(api.app).get('/api/v1/templates').set('Authorization', `Bearer ${key}`)).status).toBe(403);
  });
});
