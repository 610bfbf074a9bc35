import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { expectBadRequest } from '../testing/expect-bad-request';

// The typed property registry of a book: GET and PUT under the book. Cross-key-scope (SENDING keys,
// domain-bound keys) is in http/key-scope-matrix.test.ts and the dashboard's roles in
// dashboard/access-matrix.test.ts, as for every route.

let api: TestApi;
let other: TestTeam;
let book: string;

beforeAll(async () => {
  api = await startTestApi();
  other = await api.newTeam('Other team');
  book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Props' }).expect(200)).body.id;
});
afterAll(async () => {
  await api.close();
});

const path = (id = book) => `/api/v1/contactBooks/${id}/properties`;
const put = (body: unknown, team = api.team, id = book) =>
  request(api.app)
    .put(path(id))
    .set(team.auth)
    .send(body as object);

it('a new book has no properties; PUT replaces the list, in its order, and GET answers it', async () => {
  expect((await request(api.app).get(path()).set(api.team.auth).expect(200)).body).toEqual({ properties: [] });
  const list = [
    { name: 'company', type: 'string' },
    { name: 'ltv', type: 'number', fallback: '0' },
    { name: 'signup date', type: 'date' },
    { name: 'vip', type: 'boolean', fallback: null },
  ];
  const res = await put({ properties: list }).expect(200);
  const answered = [
    { name: 'company', type: 'string', fallback: null },
    { name: 'ltv', type: 'number', fallback: '0' },
    { name: 'signup date', type: 'date', fallback: null },
    { name: 'vip', type: 'boolean', fallback: null },
  ];
  expect(res.body).toEqual({ properties: answered });
  expect((await request(api.app).get(path()).set(api.team.auth).expect(200)).body).toEqual({ properties: answered });
  // A second PUT replaces (order, types, removals); the type defaults to string.
  await put({ properties: [{ name: 'ltv', type: 'string' }, { name: ' plan ' }] }).expect(200);
  expect((await request(api.app).get(path()).set(api.team.auth).expect(200)).body.properties).toEqual([
    { name: 'ltv', type: 'string', fallback: null },
    { name: 'plan', type: 'string', fallback: null },
  ]);
});

it("leaves contacts' values and the useSend book fields as they are", async () => {
  const b = (
    await request(api.app)
      .post('/api/v1/contactBooks')
      .set(api.team.auth)
      .send({ name: 'Values', variables: ['company'], properties: { source: 'web' } })
      .expect(200)
  ).body;
  await request(api.app)
    .post(`/api/v1/contactBooks/${b.id}/contacts`)
    .set(api.team.auth)
    .send({ email: 'v@example.org', properties: { ltv: 'n/a' } });
  await put({ properties: [{ name: 'ltv', type: 'number' }] }, api.team, b.id).expect(200);
  const contacts = (await request(api.app).get(`/api/v1/contactBooks/${b.id}/contacts`).set(api.team.auth).expect(200)).body;
  expect(contacts[0].properties).toEqual({ ltv: 'n/a' });
  const after = (await request(api.app).get(`/api/v1/contactBooks/${b.id}`).set(api.team.auth).expect(200)).body;
  expect(after).toMatchObject({ variables: ['company'], properties: { source: 'web' } });
  expect(after).not.toHaveProperty('propertyDefinitions');
});

it.each([
  ['no list', {}, ['properties']],
  ['a list that is not an array', { properties: { name: 'x' } }, ['properties']],
  ['an unknown type', { properties: [{ name: 'x', type: 'money' }] }, ['properties', 0, 'type']],
  ['an empty name', { properties: [{ name: '  ' }] }, ['properties', 0, 'name']],
  ['a name over 128 characters', { properties: [{ name: 'x'.repeat(129) }] }, ['properties', 0, 'name']],
  ['a built-in field name', { properties: [{ name: 'Email' }] }, ['properties', 0, 'name']],
  ['a name twice (any case)', { properties: [{ name: 'Plan' }, { name: 'plan' }] }, ['properties', 1, 'name']],
  ['a fallback over 1,000 characters', { properties: [{ name: 'x', fallback: 'y'.repeat(1001) }] }, ['properties', 0, 'fallback']],
  ['more than 200 properties', { properties: Array.from({ length: 201 }, (_, i) => ({ name: `p${i}` })) }, ['properties']],
])('refuses %s with a 400 naming it, and changes nothing', async (_what, body, issuePath) => {
  const before = (await request(api.app).get(path()).set(api.team.auth)).body;
  expectBadRequest(await put(body), issuePath);
  expect((await request(api.app).get(path()).set(api.team.auth)).body).toEqual(before);
});

it('a body that is not JSON is a 400 in the error shape', async () => {
  const res = await request(api.app).put(path()).set(api.team.auth).set('Content-Type', 'application/json').send('{"properties": [');
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('BAD_REQUEST');
});

it("another team's book is 404 for GET and PUT, and is not changed", async () => {
  await request(api.app).get(path()).set(other.auth).expect(404);
  const res = await put({ properties: [{ name: 'stolen' }] }, other).expect(404);
  expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Contact book not found' });
  expect((await request(api.app).get(path()).set(api.team.auth)).body.properties.map((p: { name: string }) => p.name)).not.toContain(
    'stolen',
  );
  await request(api.app).get(path('nope')).set(api.team.auth).expect(404);
});

it('a SENDING key is 403', async () => {
  const key = await api.newKey(api.team.teamId, { permission: 'SENDING' });
  await request(api.app)
    .get(path())
    .set({ Authorization: `Bearer ${key}` })
    .expect(403);
  await put({ properties: [] }, { ...api.team, auth: { Authorization: `Bearer ${key}` } }).expect(403);
});

it('deleting the book deletes its registry', async () => {
  const b = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Gone' }).expect(200)).body.id;
  await put({ properties: [{ name: 'x' }] }, api.team, b).expect(200);
  await request(api.app).delete(`/api/v1/contactBooks/${b}`).set(api.team.auth).expect(200);
  expect(await api.deps.db.contactProperty.count({ where: { contactBookId: b } })).toBe(0);
});
