import request from 'supertest';
import { seedContacts } from '@mailrail/testing/contact-seed';
import { startTestApi, type TestApi } from '../testing/api-harness';

// A filter the database cannot evaluate within SEGMENT_QUERY_TIMEOUT_MS (the builder's preview:
// SEGMENT_PREVIEW_TIMEOUT_MS) is stopped and answered 503 in the error shape, on every route that
// evaluates one; a filter that can is answered as before. No pg_sleep: a real filter within the
// cost budget, 5 groups of 20 property conditions, all joined by OR so that each contact costs all
// 100 case-insensitive matches of a JSON value, over a seeded book.

const TIMEOUT_MS = 300;
const CONTACTS = 50_000;

let api: TestApi;
let book: string;

// Every item of every group misses, so no row short-circuits: each contact costs all 100.
const pathological = {
  match: 'any',
  conditions: Array.from({ length: 5 }, (_, g) => ({
    match: 'any',
    conditions: Array.from({ length: 20 }, (_, i) => ({ field: `properties.city`, operator: 'contains', value: `no-city-${g}-${i}` })),
  })),
};
const cheap = { match: 'all', conditions: [{ field: 'email', operator: 'equals', value: 'user7@d7.example.com' }] };

beforeAll(async () => {
  api = await startTestApi({ SEGMENT_QUERY_TIMEOUT_MS: String(TIMEOUT_MS), SEGMENT_PREVIEW_TIMEOUT_MS: String(TIMEOUT_MS) });
  book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Big book' }).expect(200)).body.id;
  await seedContacts((text, params) => api.deps.sql.execute(text, params), book, CONTACTS);
  await api.deps.sql.execute('ANALYZE "Contact"');
}, 120_000);
afterAll(() => api?.close());

const UNSUBSCRIBABLE = '<p>Hi</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';
const segments = (path = '') => `/api/v1/contactBooks/${book}/segments${path}`;

const expectTooSlow = (res: request.Response, setting = 'SEGMENT_QUERY_TIMEOUT_MS') => {
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining(`longer than ${TIMEOUT_MS} ms`) } });
  expect(res.body.error.message).toContain(setting);
};

it('a preview of a filter that can be evaluated in time answers as before', async () => {
  const res = await request(api.app).post(segments('/preview')).set(api.team.auth).send({ filter: cheap }).expect(200);
  expect(res.body).toMatchObject({ count: 1, contacts: [{ email: 'user7@d7.example.com' }] });
});

it('a preview of a filter that takes too long answers 503 naming SEGMENT_PREVIEW_TIMEOUT_MS', async () => {
  // Two at once: the team's segment budget (SEGMENT_CONCURRENCY_PER_TEAM, 2 by default).
  const answers = await Promise.all(
    Array.from({ length: 2 }, () => request(api.app).post(segments('/preview')).set(api.team.auth).send({ filter: pathological })),
  );
  answers.forEach((res) => expectTooSlow(res, 'SEGMENT_PREVIEW_TIMEOUT_MS'));
  // Nothing was left holding a place or a connection: a cheap request is answered.
  await request(api.app).post(segments('/preview')).set(api.team.auth).send({ filter: cheap }).expect(200);
});

it("a saved segment's contacts page, its export and scheduling a campaign to it answer 503 the same way", async () => {
  const segment = (await request(api.app).post(segments()).set(api.team.auth).send({ name: 'Slow', filter: pathological }).expect(200)).body
    .id as string;
  expectTooSlow(
    await request(api.app)
      .get(segments(`/${segment}/contacts`))
      .set(api.team.auth),
  );
  // The export fails before its first byte: JSON, not a broken CSV.
  const exported = await request(api.app).get(`/api/v1/contactBooks/${book}/contacts/export?segmentId=${segment}`).set(api.team.auth);
  expectTooSlow(exported);

  await api.addDomain(api.team.teamId, 'example.com');
  const campaign = await request(api.app)
    .post('/api/v1/campaigns')
    .set(api.team.auth)
    .send({ name: 'News', from: 'News <news@example.com>', subject: 'Hi', contactBookId: book, segmentId: segment, html: UNSUBSCRIBABLE })
    .expect(200);
  expectTooSlow(
    await request(api.app)
      .post(`/api/v1/campaigns/${campaign.body.id}/schedule`)
      .set(api.team.auth)
      .send({ scheduledAt: '2099-01-01T00:00:00Z' }),
  );
});
