import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { expectBadRequest } from '../testing/expect-bad-request';

let api: TestApi;
let other: TestTeam;
let book: string;

// Contacts written straight to the table, so properties can hold every JSON type (the API stores
// strings; imports and older data may hold numbers, booleans, arrays).
const CONTACTS = [
  {
    name: 'ada',
    email: 'ada@example.org',
    firstName: 'Ada',
    lastName: 'Lovelace',
    subscribed: true,
    properties: { plan: 'pro', age: 36, vip: true, city: 'Berlin', score: '42' },
    createdAt: '2024-01-01T00:00:00Z',
  },
  {
    name: 'bob',
    email: 'bob@test.de',
    firstName: 'Bob',
    lastName: null,
    subscribed: false,
    properties: { plan: 'free', age: 17, vip: false, note: '50%_off' },
    createdAt: '2024-06-01T00:00:00Z',
  },
  {
    name: 'carol',
    email: 'carol@example.org',
    firstName: 'carol',
    lastName: 'Smith',
    subscribed: true,
    properties: { plan: 'PRO', age: '40', vip: 'true', tags: ['a'], nested: { x: 1 }, city: '' },
    createdAt: '2025-01-01T00:00:00Z',
  },
  {
    name: 'dave',
    email: 'dave_x@example.com',
    firstName: null,
    lastName: '',
    subscribed: true,
    properties: {},
    createdAt: '2025-06-01T00:00:00Z',
  },
  {
    name: 'eve',
    email: 'e%ve@example.com',
    firstName: 'a_b',
    lastName: null,
    subscribed: true,
    properties: { city: null },
    createdAt: '2025-09-01T00:00:00Z',
  },
];
const nameOf = new Map<string, string>();

beforeAll(async () => {
  api = await startTestApi();
  other = await api.newTeam('Other team');
  book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Segments' }).expect(200)).body.id;
  for (const [i, c] of CONTACTS.entries()) {
    const id = `seg${i}`;
    nameOf.set(id, c.name);
    await api.deps.db.contact.create({
      data: {
        id,
        contactBookId: book,
        email: c.email,
        firstName: c.firstName,
        lastName: c.lastName,
        subscribed: c.subscribed,
        unsubscribeReason: c.subscribed ? null : 'UNSUBSCRIBED',
        properties: c.properties,
        createdAt: new Date(c.createdAt),
        updatedAt: new Date(c.createdAt),
      },
    });
  }
});
afterAll(async () => {
  await api.close();
});

const segments = (bookId = book) => `/api/v1/contactBooks/${bookId}/segments`;
type Item = Record<string, unknown>;

async function preview(filter: unknown, team = api.team) {
  return request(api.app).post(`${segments()}/preview`).set(team.auth).send({ filter });
}

/** The names of the contacts a filter matches, sorted. */
async function matching(filter: unknown): Promise<string[]> {
  const res = await preview(filter);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.contacts.map((c: { id: string }) => nameOf.get(c.id)).sort();
}
const one = (condition: Item) => ({ match: 'all', conditions: [condition] });

describe('operators, one condition at a time', () => {
  const cases: [Item, string[]][] = [
    // text fields: case-insensitive, LIKE wildcards in the value are plain characters
    [{ field: 'email', operator: 'equals', value: 'ADA@example.org' }, ['ada']],
    [{ field: 'email', operator: 'notEquals', value: 'ada@example.org' }, ['bob', 'carol', 'dave', 'eve']],
    [{ field: 'email', operator: 'contains', value: 'EXAMPLE' }, ['ada', 'carol', 'dave', 'eve']],
    [{ field: 'email', operator: 'startsWith', value: 'b' }, ['bob']],
    [{ field: 'email', operator: 'endsWith', value: '.de' }, ['bob']],
    [{ field: 'email', operator: 'contains', value: '%' }, ['eve']],
    [{ field: 'email', operator: 'contains', value: '_' }, ['dave']],
    [{ field: 'email', operator: 'in', value: ['BOB@test.de', 'nobody@example.org'] }, ['bob']],
    [{ field: 'firstName', operator: 'equals', value: 'CAROL' }, ['carol']],
    [{ field: 'firstName', operator: 'notEquals', value: 'ada' }, ['bob', 'carol', 'dave', 'eve']],
    [{ field: 'firstName', operator: 'contains', value: 'a_' }, ['eve']],
    [{ field: 'firstName', operator: 'in', value: ['ada', 'BOB'] }, ['ada', 'bob']],
    [{ field: 'lastName', operator: 'isSet' }, ['ada', 'carol']],
    [{ field: 'lastName', operator: 'isNotSet' }, ['bob', 'dave', 'eve']],
    [{ field: 'lastName', operator: 'endsWith', value: 'ACE' }, ['ada']],
    // subscribed
    [{ field: 'subscribed', operator: 'equals', value: true }, ['ada', 'carol', 'dave', 'eve']],
    [{ field: 'subscribed', operator: 'notEquals', value: true }, ['bob']],
    [{ field: 'subscribed', operator: 'equals', value: false }, ['bob']],
    // dates: a date-time with offset or a plain date (midnight UTC)
    [{ field: 'createdAt', operator: 'gt', value: '2024-12-31' }, ['carol', 'dave', 'eve']],
    [{ field: 'createdAt', operator: 'lt', value: '2024-06-01T02:00:00+02:00' }, ['ada']],
    [{ field: 'updatedAt', operator: 'gt', value: '2025-05-31T23:59:59.999Z' }, ['dave', 'eve']],
    // properties: strings
    [{ field: 'properties.plan', operator: 'equals', value: 'pro' }, ['ada', 'carol']],
    [{ field: 'properties.plan', operator: 'notEquals', value: 'pro' }, ['bob', 'dave', 'eve']],
    [{ field: 'properties.plan', operator: 'contains', value: 'r' }, ['ada', 'bob', 'carol']],
    [{ field: 'properties.plan', operator: 'startsWith', value: 'F' }, ['bob']],
    [{ field: 'properties.plan', operator: 'endsWith', value: 'o' }, ['ada', 'carol']],
    [{ field: 'properties.note', operator: 'contains', value: '%_' }, ['bob']],
    [{ field: 'properties.note', operator: 'contains', value: '0_' }, []],
    [{ field: 'properties.plan', operator: 'in', value: ['PRO', 'gold'] }, ['ada', 'carol']],
    // properties: numbers (JSON numbers and numeric strings compare as numbers)
    [{ field: 'properties.age', operator: 'equals', value: 36 }, ['ada']],
    [{ field: 'properties.age', operator: 'gt', value: 30 }, ['ada', 'carol']],
    [{ field: 'properties.age', operator: 'lt', value: 18 }, ['bob']],
    [{ field: 'properties.age', operator: 'notEquals', value: 36 }, ['bob', 'carol', 'dave', 'eve']],
    [{ field: 'properties.score', operator: 'equals', value: 42.0 }, ['ada']],
    [{ field: 'properties.age', operator: 'in', value: [17, 40] }, ['bob', 'carol']],
    [{ field: 'properties.age', operator: 'in', value: ['36', 17] }, ['ada', 'bob']],
    [{ field: 'properties.age', operator: 'equals', value: '36' }, ['ada']],
    [{ field: 'properties.age', operator: 'contains', value: '7' }, ['bob']],
    [{ field: 'properties.plan', operator: 'gt', value: 0 }, []],
    // properties: booleans (JSON true/false and the strings "true"/"false")
    [{ field: 'properties.vip', operator: 'equals', value: true }, ['ada', 'carol']],
    [{ field: 'properties.vip', operator: 'equals', value: false }, ['bob']],
    [{ field: 'properties.vip', operator: 'notEquals', value: true }, ['bob', 'dave', 'eve']],
    [{ field: 'properties.vip', operator: 'equals', value: 'TRUE' }, ['ada', 'carol']],
    // properties: missing, null, empty, array, object
    [{ field: 'properties.city', operator: 'isSet' }, ['ada']],
    [{ field: 'properties.city', operator: 'isNotSet' }, ['bob', 'carol', 'dave', 'eve']],
    [{ field: 'properties.tags', operator: 'isSet' }, []],
    [{ field: 'properties.nested', operator: 'equals', value: '{"x": 1}' }, []],
    [{ field: 'properties.missing', operator: 'equals', value: 'x' }, []],
    [{ field: 'properties.missing', operator: 'notEquals', value: 'x' }, ['ada', 'bob', 'carol', 'dave', 'eve']],
    // a property name is a value, never SQL
    [{ field: "properties.x' OR '1'='1", operator: 'isSet' }, []],
  ];
  it.each(cases)('%j', async (condition, expected) => {
    expect(await matching(one(condition))).toEqual(expected);
  });
});

describe('AND / OR and one level of groups', () => {
  const cases: [Item, string[]][] = [
    [
      {
        match: 'all',
        conditions: [
          { field: 'subscribed', operator: 'equals', value: true },
          { field: 'properties.plan', operator: 'equals', value: 'pro' },
        ],
      },
      ['ada', 'carol'],
    ],
    [
      {
        match: 'any',
        conditions: [
          { field: 'email', operator: 'startsWith', value: 'b' },
          { field: 'properties.age', operator: 'gt', value: 38 },
        ],
      },
      ['bob', 'carol'],
    ],
    [
      {
        match: 'all',
        conditions: [
          { field: 'subscribed', operator: 'equals', value: true },
          {
            match: 'any',
            conditions: [
              { field: 'properties.plan', operator: 'equals', value: 'free' },
              { field: 'properties.city', operator: 'equals', value: 'berlin' },
            ],
          },
        ],
      },
      ['ada'],
    ],
    [
      {
        match: 'any',
        conditions: [
          {
            match: 'all',
            conditions: [
              { field: 'properties.vip', operator: 'equals', value: true },
              { field: 'properties.age', operator: 'gt', value: 38 },
            ],
          },
          { field: 'email', operator: 'endsWith', value: '.com' },
        ],
      },
      ['carol', 'dave', 'eve'],
    ],
  ];
  it.each(cases)('%j', async (filter, expected) => {
    expect(await matching(filter)).toEqual(expected);
  });
});

describe('bad filters are 400 naming the place, never 500', () => {
  const cond = { field: 'email', operator: 'equals', value: 'a@b.c' };
  const cases: [string, unknown, (string | number)[]][] = [
    ['unknown field', one({ field: 'phone', operator: 'equals', value: 'x' }), ['filter', 'conditions', 0, 'field']],
    ['empty property name', one({ field: 'properties.', operator: 'isSet' }), ['filter', 'conditions', 0, 'field']],
    ['overlong property name', one({ field: `properties.${'p'.repeat(129)}`, operator: 'isSet' }), ['filter', 'conditions', 0, 'field']],
    ['unknown operator', one({ field: 'email', operator: 'like', value: 'x' }), ['filter', 'conditions', 0, 'operator']],
    ['operator not for the field', one({ field: 'subscribed', operator: 'contains', value: 'x' }), ['filter', 'conditions', 0, 'operator']],
    ['gt on text', one({ field: 'email', operator: 'gt', value: 'x' }), ['filter', 'conditions', 0, 'operator']],
    ['number for a text field', one({ field: 'email', operator: 'equals', value: 5 }), ['filter', 'conditions', 0, 'value']],
    ['string for subscribed', one({ field: 'subscribed', operator: 'equals', value: 'true' }), ['filter', 'conditions', 0, 'value']],
    ['no date', one({ field: 'createdAt', operator: 'gt', value: 'yesterday' }), ['filter', 'conditions', 0, 'value']],
    ['date out of range', one({ field: 'createdAt', operator: 'gt', value: '0000-01-01' }), ['filter', 'conditions', 0, 'value']],
    ['string for gt on a property', one({ field: 'properties.age', operator: 'gt', value: '3' }), ['filter', 'conditions', 0, 'value']],
    ['value with isSet', one({ field: 'properties.age', operator: 'isSet', value: 1 }), ['filter', 'conditions', 0, 'value']],
    ['missing value', one({ field: 'email', operator: 'contains' }), ['filter', 'conditions', 0, 'value']],
    ['empty in list', one({ field: 'email', operator: 'in', value: [] }), ['filter', 'conditions', 0, 'value']],
    ['boolean in an in list', one({ field: 'properties.a', operator: 'in', value: [true] }), ['filter', 'conditions', 0, 'value']],
    ['number in a text in list', one({ field: 'email', operator: 'in', value: [1] }), ['filter', 'conditions', 0, 'value']],
    ['in list too long', one({ field: 'email', operator: 'in', value: Array(1001).fill('a') }), ['filter', 'conditions', 0, 'value']],
    ['value too long', one({ field: 'email', operator: 'contains', value: 'x'.repeat(1001) }), ['filter', 'conditions', 0, 'value']],
    ['array for equals', one({ field: 'email', operator: 'equals', value: ['a'] }), ['filter', 'conditions', 0, 'value']],
    ['object value', one({ field: 'email', operator: 'equals', value: { a: 1 } }), ['filter', 'conditions', 0, 'value']],
    ['bad match', { match: 'xor', conditions: [cond] }, ['filter', 'match']],
    ['bad group match', { match: 'all', conditions: [{ match: 'some', conditions: [cond] }] }, ['filter', 'conditions', 0, 'match']],
    ['no conditions', { match: 'all', conditions: [] }, ['filter', 'conditions']],
    ['too many conditions', { match: 'all', conditions: Array(21).fill(cond) }, ['filter', 'conditions']],
    [
      'too many in a group',
      { match: 'all', conditions: [{ match: 'any', conditions: Array(21).fill(cond) }] },
      ['filter', 'conditions', 0, 'conditions'],
    ],
    [
      'nesting too deep',
      { match: 'all', conditions: [{ match: 'any', conditions: [{ match: 'all', conditions: [cond] }] }] },
      ['filter', 'conditions', 0, 'conditions', 0, 'match'],
    ],
    ['a string filter', 'email = 1', ['filter']],
    ['no filter', undefined, ['filter']],
  ];
  it.each(cases)('%s', async (_what, filter, path) => {
    const res = await preview(filter);
    expectBadRequest(res, path);
    const created = await request(api.app).post(segments()).set(api.team.auth).send({ name: 'S', filter });
    expectBadRequest(created, path);
  });

  it('a name is required and capped', async () => {
    const filter = one({ field: 'subscribed', operator: 'equals', value: true });
    expectBadRequest(await request(api.app).post(segments()).set(api.team.auth).send({ name: ' ', filter }), ['name']);
    expectBadRequest(
      await request(api.app)
        .post(segments())
        .set(api.team.auth)
        .send({ name: 'n'.repeat(256), filter }),
      ['name'],
    );
  });
});

describe('saved segments', () => {
  const pros = { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'pro' }] };

  it('creates, lists, reads, updates and deletes; pages its contacts with both counts', async () => {
    const created = await request(api.app).post(segments()).set(api.team.auth).send({ name: ' Pros ', filter: pros }).expect(200);
    expect(created.body).toEqual({
      id: expect.any(String),
      contactBookId: book,
      name: 'Pros',
      filter: pros,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id = created.body.id;
    const list = await request(api.app).get(segments()).set(api.team.auth).expect(200);
    expect(list.body.map((s: { id: string }) => s.id)).toContain(id);
    await request(api.app).get(`${segments()}/${id}`).set(api.team.auth).expect(200);

    const page = await request(api.app).get(`${segments()}/${id}/contacts`).set(api.team.auth).expect(200);
    expect(page.body).toMatchObject({ count: 2, subscribedCount: 2 });
    expect(page.body.data.map((c: { id: string }) => nameOf.get(c.id))).toEqual(['ada', 'carol']);
    const second = await request(api.app).get(`${segments()}/${id}/contacts`).query({ page: 2, limit: 1 }).set(api.team.auth).expect(200);
    expect(second.body.data.map((c: { id: string }) => nameOf.get(c.id))).toEqual(['carol']);
    expect(second.body.count).toBe(2);

    const everyone = { match: 'any', conditions: [{ field: 'email', operator: 'contains', value: '@' }] };
    const patched = await request(api.app).patch(`${segments()}/${id}`).set(api.team.auth).send({ filter: everyone }).expect(200);
    expect(patched.body).toMatchObject({ name: 'Pros', filter: everyone });
    const all = await request(api.app).get(`${segments()}/${id}/contacts`).set(api.team.auth).expect(200);
    expect(all.body).toMatchObject({ count: 5, subscribedCount: 4 });
    await request(api.app).patch(`${segments()}/${id}`).set(api.team.auth).send({ name: 'Everyone' }).expect(200);

    expectBadRequest(await request(api.app).get(`${segments()}/${id}/contacts`).query({ limit: 1001 }).set(api.team.auth), ['limit']);
    expectBadRequest(
      await request(api.app)
        .patch(`${segments()}/${id}`)
        .set(api.team.auth)
        .send({ filter: { match: 'all' } }),
      ['filter', 'conditions'],
    );

    await request(api.app).delete(`${segments()}/${id}`).set(api.team.auth).expect(200, { success: true });
    await request(api.app).get(`${segments()}/${id}`).set(api.team.auth).expect(404);
  });

  it("another team's book and segments are 404, and its key sees none of them", async () => {
    const s = (await request(api.app).post(segments()).set(api.team.auth).send({ name: 'Mine', filter: pros }).expect(200)).body;
    const otherBook = (await request(api.app).post('/api/v1/contactBooks').set(other.auth).send({ name: 'Theirs' }).expect(200)).body.id;
    for (const res of [
      await request(api.app).get(segments()).set(other.auth),
      await request(api.app).post(segments()).set(other.auth).send({ name: 'x', filter: pros }),
      await preview(pros, other),
      await request(api.app).get(`${segments()}/${s.id}`).set(other.auth),
      await request(api.app).get(`${segments()}/${s.id}/contacts`).set(other.auth),
      await request(api.app).patch(`${segments()}/${s.id}`).set(other.auth).send({ name: 'x' }),
      await request(api.app).delete(`${segments()}/${s.id}`).set(other.auth),
      // their own book with our segment id
      await request(api.app)
        .get(`${segments(otherBook)}/${s.id}`)
        .set(other.auth),
      await request(api.app)
        .get(`${segments(otherBook)}/${s.id}/contacts`)
        .set(other.auth),
    ])
      expect(res.status).toBe(404);
    // Our segment under another of our books is not found either.
    const second = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Second' }).expect(200)).body.id;
    await request(api.app)
      .get(`${segments(second)}/${s.id}`)
      .set(api.team.auth)
      .expect(404);
    expect(await api.deps.db.segment.findUnique({ where: { id: s.id } })).toMatchObject({ name: 'Mine' });
  });

  it('goes with its book', async () => {
    const b = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Gone' }).expect(200)).body.id;
    const s = (await request(api.app).post(segments(b)).set(api.team.auth).send({ name: 'x', filter: pros }).expect(200)).body;
    await request(api.app).delete(`/api/v1/contactBooks/${b}`).set(api.team.auth).expect(200);
    expect(await api.deps.db.segment.findUnique({ where: { id: s.id } })).toBeNull();
  });
});

describe('campaigns and segments', () => {
  const pros = { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'pro' }] };
  const nobody = { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'none' }] };
  const HTML = '<p>Hi</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';
  let from: string;
  beforeAll(async () => {
    from = `News <news@${(await api.addDomain(api.team.teamId, 'segments.test')).name}>`;
  });
  const newSegment = async (filter: unknown, bookId = book) =>
    (await request(api.app).post(segments(bookId)).set(api.team.auth).send({ name: 'S', filter }).expect(200)).body.id as string;
  const createCampaign = (body: Item) =>
    request(api.app)
      .post('/api/v1/campaigns')
      .set(api.team.auth)
      .send({ name: 'C', from, subject: 'S', contactBookId: book, html: HTML, ...body });

  it('takes a segment of its book on create and schedule, answers segmentId, and refuses others', async () => {
    const segmentId = await newSegment(pros);
    const created = await createCampaign({ segmentId }).expect(200);
    expect(created.body.segmentId).toBe(segmentId);
    expect((await createCampaign({}).expect(200)).body.segmentId).toBeNull();

    const otherBook = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'B2' }).expect(200)).body.id;
    const foreignBookSegment = await newSegment(pros, otherBook);
    expectBadRequest(await createCampaign({ segmentId: foreignBookSegment }), ['segmentId']);
    expect((await createCampaign({ segmentId: 'nope' })).status).toBe(404);
    const theirBook = (await request(api.app).post('/api/v1/contactBooks').set(other.auth).send({ name: 'T' }).expect(200)).body.id;
    const theirs = (await request(api.app).post(segments(theirBook)).set(other.auth).send({ name: 'S', filter: pros }).expect(200)).body.id;
    expect((await createCampaign({ segmentId: theirs })).status).toBe(404);
    expectBadRequest(await createCampaign({ segmentId: 5 }), ['segmentId']);

    // A segment without subscribed contacts cannot be sent to, as an empty book cannot.
    const empty = await newSegment(nobody);
    expectBadRequest(await createCampaign({ segmentId: empty, sendNow: true }), ['segmentId']);
    const id = created.body.id;
    expectBadRequest(await request(api.app).post(`/api/v1/campaigns/${id}/schedule`).set(api.team.auth).send({ segmentId: empty }), [
      'segmentId',
    ]);
    expectBadRequest(
      await request(api.app).post(`/api/v1/campaigns/${id}/schedule`).set(api.team.auth).send({ segmentId: foreignBookSegment }),
      ['segmentId'],
    );
    expect((await request(api.app).post(`/api/v1/campaigns/${id}/schedule`).set(api.team.auth).send({ segmentId: theirs })).status).toBe(
      404,
    );

    // Schedule may change the segment, or clear it (the whole book).
    const other2 = await newSegment({ match: 'all', conditions: [{ field: 'email', operator: 'endsWith', value: '.com' }] });
    await request(api.app)
      .post(`/api/v1/campaigns/${id}/schedule`)
      .set(api.team.auth)
      .send({ segmentId: other2, scheduledAt: new Date(Date.now() + 3_600_000).toISOString() })
      .expect(200);
    expect((await request(api.app).get(`/api/v1/campaigns/${id}`).set(api.team.auth).expect(200)).body.segmentId).toBe(other2);
    await request(api.app).post(`/api/v1/campaigns/${id}/schedule`).set(api.team.auth).send({ segmentId: null }).expect(200);
    expect((await api.deps.db.campaign.findUniqueOrThrow({ where: { id } })).segmentId).toBeNull();
  });

  it('PATCH sets, changes and clears the segment, which must be of the resulting book', async () => {
    const segmentId = await newSegment(pros);
    const c = (await createCampaign({}).expect(200)).body;
    const patch = (body: Item) => request(api.app).patch(`/api/v1/campaigns/${c.id}`).set(api.team.auth).send(body);
    expect((await patch({ segmentId }).expect(200)).body.segmentId).toBe(segmentId);
    const otherBook = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'P2' }).expect(200)).body.id;
    await request(api.app)
      .post(`/api/v1/contactBooks/${otherBook}/contacts`)
      .set(api.team.auth)
      .send({ email: 'x@example.org' })
      .expect(200);
    // Another book while the segment stays: refused, nothing changes.
    expectBadRequest(await patch({ contactBookId: otherBook }), ['segmentId']);
    expect(await api.deps.db.campaign.findUniqueOrThrow({ where: { id: c.id } })).toMatchObject({ contactBookId: book, segmentId });
    expect((await patch({ segmentId: 'nope' })).status).toBe(404);
    const moved = (await patch({ contactBookId: otherBook, segmentId: null }).expect(200)).body;
    expect(moved).toMatchObject({ contactBookId: otherBook, segmentId: null });
    const otherSegment = await newSegment(pros, otherBook);
    expect((await patch({ segmentId: otherSegment }).expect(200)).body.segmentId).toBe(otherSegment);
  });

  it('a segment used by a campaign that has not started is not deleted (409); once unused it is', async () => {
    const segmentId = await newSegment(pros);
    const c = (await createCampaign({ segmentId, scheduledAt: new Date(Date.now() + 3_600_000).toISOString() }).expect(200)).body;
    expect(c.status).toBe('SCHEDULED');
    const refused = await request(api.app).delete(`${segments()}/${segmentId}`).set(api.team.auth);
    expect(refused.status).toBe(409);
    await request(api.app).post(`/api/v1/campaigns/${c.id}/pause`).set(api.team.auth).expect(200);
    expect((await request(api.app).delete(`${segments()}/${segmentId}`).set(api.team.auth)).status).toBe(409);
    // Sent campaigns keep their recipients; the segment may go (the campaign keeps segmentId null).
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { status: 'SENT', recipientsReadyAt: new Date() } });
    await request(api.app).delete(`${segments()}/${segmentId}`).set(api.team.auth).expect(200);
    expect((await api.deps.db.campaign.findUniqueOrThrow({ where: { id: c.id } })).segmentId).toBeNull();
  });
});
