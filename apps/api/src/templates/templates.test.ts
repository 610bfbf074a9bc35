import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { addUser, signIn } from '../dashboard/testing';

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
      content: null,
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

  it('stores the editor JSON in content and its rendering in html; html given alone drops the document', async () => {
    const doc = JSON.stringify({
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'Welcome' }] },
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Hi ' },
            { type: 'variable', attrs: { id: 'name', fallback: 'there' } },
          ],
        },
      ],
    });
    const created = await create({ name: 'Blocks', subject: 'Hi', content: doc });
    expect(created.status).toBe(200);
    expect(created.body.content).toBe(doc);
    expect(created.body.html).toContain('Welcome</h1>');
    expect(created.body.html).toContain('{{name,fallback=there}}');
    const id = created.body.id;
    // A send fills the rendered html as for any template.
    const domain = await api.addDomain(api.team.teamId, 'templates-content.test');
    const sent = await request(api.app)
      .post('/api/v1/emails')
      .set(api.team.auth)
      .send({
        from: `a@${domain.name}`,
        to: 'x@example.org',
        templateId: id,
        variables: { name: 'Ada' },
        scheduledAt: '2099-01-01T00:00:00Z',
      });
    expect(sent.status).toBe(200);
    const email = await api.deps.db.email.findUniqueOrThrow({ where: { id: sent.body.emailId } });
    expect(email.html).toContain('Hi Ada');

    const invalid = await request(api.app).patch(`/api/v1/templates/${id}`).set(api.team.auth).send({ content: 'not json' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.issues[0].path).toEqual(['content']);
    const asHtml = await request(api.app).patch(`/api/v1/templates/${id}`).set(api.team.auth).send({ html: '<p>plain</p>' });
    expect(asHtml.body).toMatchObject({ html: '<p>plain</p>', content: null });
  });

  it('previews the unsaved body with sample variables as a send gets it, on the preview budget', async () => {
    const t = await create({ name: 'P', subject: 'Hello {{name,fallback=you}}', html: '<p>Hi {{name}} &amp; {{city,fallback=there}}</p>' });
    const preview = (body: object, auth = api.team.auth) =>
      request(api.app).post(`/api/v1/templates/${t.body.id}/preview`).set(auth).send(body);
    const stored = await preview({ variables: { name: '<Ada>' } });
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual({
      subject: 'Hello <Ada>',
      html: '<p>Hi &lt;Ada&gt; &amp; there</p>',
      text: 'Hi <Ada> & there',
      textDerived: true,
    });
    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'From blocks' }] }] };
    const unsaved = await preview({ content: JSON.stringify(doc), subject: 'Draft', text: 'Own text {{name}}' });
    expect(unsaved.body.subject).toBe('Draft');
    expect(unsaved.body.html).toContain('From blocks');
    expect(unsaved.body).toMatchObject({ text: 'Own text ', textDerived: false });
    expect((await preview({ content: '{"nope"' })).status).toBe(400);
    expect((await preview({ variables: 'x' })).status).toBe(400);
    expect((await preview({ subject: 's'.repeat(999) })).status).toBe(400);
    const empty = await create({ name: 'Empty', subject: 's' });
    const none = await request(api.app).post(`/api/v1/templates/${empty.body.id}/preview`).set(api.team.auth).send({});
    expect(none.status).toBe(400);
    // Another team's template is not found; a SENDING key may not preview.
    expect((await preview({}, other.auth)).status).toBe(404);
    const key = await api.newKey(api.team.teamId, { permission: 'SENDING' });
    expect((await preview({}, { Authorization: `Bearer ${key}` })).status).toBe(403);
  });

  it("works from the dashboard for the team's MEMBER and ADMIN, and is 404 for another team's user", async () => {
    const t = await create({ name: 'Dash', subject: 'S', html: '<p>x</p>' });
    const member = await signIn(api, (await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }])).email);
    const admin = await signIn(api, (await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }])).email);
    const stranger = await signIn(api, (await addUser(api, [{ teamId: other.teamId, role: 'ADMIN' }])).email);
    const base = `/api/dashboard/teams/${api.team.teamId}/v1/templates`;
    for (const b of [member, admin]) {
      expect((await b.get(base)).body.data.map((x: { id: string }) => x.id)).toContain(t.body.id);
      expect((await b.post(`${base}/${t.body.id}/preview`, { variables: {} })).status).toBe(200);
      const made = await b.post(base, { name: 'By dashboard', subject: 'S', content: '{"type":"doc","content":[]}' });
      expect(made.status).toBe(200);
      expect((await b.patch(`${base}/${made.body.id}`, { name: 'Renamed' })).status).toBe(200);
      expect((await b.delete(`${base}/${made.body.id}`)).status).toBe(200);
    }
    expect((await stranger.post(`${base}/${t.body.id}/preview`, {})).status).toBe(404);
    const ownBase = `/api/dashboard/teams/${other.teamId}/v1/templates`;
    expect((await stranger.get(`${ownBase}/${t.body.id}`)).status).toBe(404);
    expect((await stranger.post(`${ownBase}/${t.body.id}/preview`, {})).status).toBe(404);
  });
});
