import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { expectBadRequest as expect400 } from '../testing/expect-bad-request';

let api: TestApi;
let other: TestTeam;
beforeAll(async () => {
  api = await startTestApi();
  other = await api.newTeam('Other team');
});
afterAll(async () => {
  await api.close();
});

async function newBook(body: Record<string, unknown> = {}, team = api.team): Promise<string> {
  const res = await request(api.app)
    .post('/api/v1/contactBooks')
    .set(team.auth)
    .send({ name: 'Book', ...body });
  expect(res.status).toBe(200);
  return res.body.id;
}
const contacts = (bookId: string) => `/api/v1/contactBooks/${bookId}/contacts`;
const getContact = (id: string) => api.deps.db.contact.findUniqueOrThrow({ where: { id } });

describe('create, get, list', () => {
  it('creates a contact with the address lower-cased and reads it back', async () => {
    const book = await newBook();
    const res = await request(api.app)
      .post(contacts(book))
      .set(api.team.auth)
      .send({ email: '  Ada@Example.COM ', firstName: 'Ada', lastName: 'Lovelace', properties: { plan: 'pro' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ contactId: expect.stringMatching(/^[0-9a-z]{24}$/) });
    const got = await request(api.app)
      .get(`${contacts(book)}/${res.body.contactId}`)
      .set(api.team.auth);
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toMatch(/application\/json/);
    expect(got.body).toEqual({
      id: res.body.contactId,
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      subscribed: true,
      unsubscribeReason: null,
      properties: { plan: 'pro' },
      contactBookId: book,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const row = await getContact(res.body.contactId);
    expect(got.body.createdAt).toBe(row.createdAt.toISOString());
  });

  it('upserts on the address case-insensitively, merging properties', async () => {
    const book = await newBook({ variables: ['Plan'] });
    const a = await request(api.app)
      .post(contacts(book))
      .set(api.team.auth)
      .send({ email: 'bob@x.com', firstName: 'Bob', properties: { plan: 'free', city: 'Oslo' } });
    const b = await request(api.app)
      .post(contacts(book))
      .set(api.team.auth)
      .send({ email: 'BOB@x.com', lastName: 'B', properties: { PLAN: 'pro' } });
    expect(b.body.contactId).toBe(a.body.contactId);
    const row = await getContact(a.body.contactId);
    // Keys take the spelling of the book's declared variable.
    expect(row).toMatchObject({ email: 'bob@x.com', firstName: 'Bob', lastName: 'B', properties: { Plan: 'pro', city: 'Oslo' } });
    expect(await api.deps.db.contact.count({ where: { contactBookId: book } })).toBe(1);
  });

  it('refuses bad input naming the field, and writes nothing', async () => {
    const book = await newBook();
    expect400(await request(api.app).post(contacts(book)).set(api.team.auth).send({}), ['email']);
    expect400(await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'not-an-email' }), ['email']);
    expect400(await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'a@x.com', firstName: 1 }), ['firstName']);
    expect400(await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'a@x.com', lastName: false }), ['lastName']);
    expect400(
      await request(api.app)
        .post(contacts(book))
        .set(api.team.auth)
        .send({ email: 'a@x.com', properties: { a: 2 } }),
      ['properties', 'a'],
    );
    expect400(await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'a@x.com', subscribed: 'yes' }), ['subscribed']);
    expect400(await request(api.app).post(contacts('ab')).set(api.team.auth).send({ email: 'a@x.com' }), ['contactBookId']);
    expect(await api.deps.db.contact.count({ where: { contactBookId: book } })).toBe(0);
  });

  it('lists in a stable order with page, limit, emails and ids', async () => {
    const book = await newBook();
    const bulk = await request(api.app)
      .post(`${contacts(book)}/bulk`)
      .set(api.team.auth)
      .send(Array.from({ length: 12 }, (_, i) => ({ email: `u${i}@x.com` })));
    expect(bulk.status).toBe(200);
    const all = await request(api.app).get(contacts(book)).set(api.team.auth);
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(12);
    const ids = all.body.map((c: { id: string }) => c.id);
    expect(ids).toEqual([...ids].sort());

    const p2 = await request(api.app)
      .get(`${contacts(book)}?page=2&limit=5`)
      .set(api.team.auth);
    expect(p2.body.map((c: { id: string }) => c.id)).toEqual(ids.slice(5, 10));
    const p3 = await request(api.app)
      .get(`${contacts(book)}?page=3&limit=5`)
      .set(api.team.auth);
    expect(p3.body).toHaveLength(2);

    const byEmail = await request(api.app)
      .get(`${contacts(book)}?emails=U3@x.com,u7@x.com`)
      .set(api.team.auth);
    expect(byEmail.body.map((c: { email: string }) => c.email).sort()).toEqual(['u3@x.com', 'u7@x.com']);
    const byId = await request(api.app)
      .get(`${contacts(book)}?ids=${ids[0]},${ids[11]},nope`)
      .set(api.team.auth);
    expect(byId.body.map((c: { id: string }) => c.id)).toEqual([ids[0], ids[11]]);

    const repeated = await request(api.app)
      .get(`${contacts(book)}?emails=u1@x.com&emails=u2@x.com`)
      .set(api.team.auth);
    expect(repeated.body.map((c: { email: string }) => c.email).sort()).toEqual(['u1@x.com', 'u2@x.com']);
    expect(
      (
        await request(api.app)
          .get(`${contacts(book)}?ids=`)
          .set(api.team.auth)
      ).body,
    ).toHaveLength(12);
    const filteredPage = await request(api.app)
      .get(`${contacts(book)}?ids=${ids.slice(0, 4).join(',')}&page=2&limit=3`)
      .set(api.team.auth);
    expect(filteredPage.body.map((c: { id: string }) => c.id)).toEqual([ids[3]]);

    expect400(
      await request(api.app)
        .get(`${contacts(book)}?limit=5001`)
        .set(api.team.auth),
      ['limit'],
    );
    expect400(
      await request(api.app)
        .get(`${contacts(book)}?limit=0`)
        .set(api.team.auth),
      ['limit'],
    );
    expect400(
      await request(api.app)
        .get(`${contacts(book)}?page=x`)
        .set(api.team.auth),
      ['page'],
    );
    const empty = await request(api.app)
      .get(contacts(await newBook()))
      .set(api.team.auth);
    expect(empty.body).toEqual([]);
  });

  it("the list says which addresses are on the team's suppression list, on every page (another team's list does not count)", async () => {
    const book = await newBook();
    await request(api.app)
      .post(`${contacts(book)}/bulk`)
      .set(api.team.auth)
      .send([{ email: 'kept@sup.test' }, { email: 'Gone@Sup.test' }, { email: 'theirs@sup.test' }])
      .expect(200);
    await api.deps.db.suppression.createMany({
      data: [
        { id: 'sup-list-1', teamId: api.team.teamId, email: 'gone@sup.test', reason: 'HARD_BOUNCE' },
        { id: 'sup-list-2', teamId: other.teamId, email: 'theirs@sup.test', reason: 'MANUAL' },
      ],
    });
    const flags = async (query: string) =>
      Object.fromEntries(
        (
          await request(api.app)
            .get(`${contacts(book)}${query}`)
            .set(api.team.auth)
            .expect(200)
        ).body.map((c: { email: string; suppressed: boolean }) => [c.email, c.suppressed]),
      );
    const all = { 'kept@sup.test': false, 'gone@sup.test': true, 'theirs@sup.test': false };
    expect(await flags('')).toEqual(all);
    // Pages past the first are read another way (ids first): the flag is there too.
    expect({ ...(await flags('?page=1&limit=1')), ...(await flags('?page=2&limit=1')), ...(await flags('?page=3&limit=1')) }).toEqual(all);
  });
});

describe('update, upsert, delete', () => {
  it('PUT upserts by email (the path id is not the key) and answers the contact id', async () => {
    const book = await newBook();
    const created = await request(api.app)
      .put(`${contacts(book)}/anything`)
      .set(api.team.auth)
      .send({ email: 'put@x.com', firstName: 'P' });
    expect(created.status).toBe(200);
    const again = await request(api.app)
      .put(`${contacts(book)}/${created.body.contactId}`)
      .set(api.team.auth)
      .send({ email: 'put@x.com', lastName: 'Q' });
    expect(again.body.contactId).toBe(created.body.contactId);
    expect(await getContact(created.body.contactId)).toMatchObject({ firstName: 'P', lastName: 'Q' });
    expect400(
      await request(api.app)
        .put(`${contacts(book)}/x`)
        .set(api.team.auth)
        .send({ firstName: 'no email' }),
      ['email'],
    );
    expect400(
      await request(api.app)
        .put(`${contacts('ab')}/x`)
        .set(api.team.auth)
        .send({ email: 'put@x.com' }),
      ['contactBookId'],
    );
  });

  it('PATCH changes names, merges properties and answers 404 for an unknown contact', async () => {
    const book = await newBook();
    const { contactId } = (
      await request(api.app)
        .post(contacts(book))
        .set(api.team.auth)
        .send({ email: 'p@x.com', properties: { a: '1', b: '2' } })
    ).body;
    const res = await request(api.app)
      .patch(`${contacts(book)}/${contactId}`)
      .set(api.team.auth)
      .send({ firstName: 'New', properties: { b: '3', c: '4' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ contactId });
    expect(await getContact(contactId)).toMatchObject({ firstName: 'New', properties: { a: '1', b: '3', c: '4' } });
    expect400(
      await request(api.app)
        .patch(`${contacts(book)}/${contactId}`)
        .set(api.team.auth)
        .send({ subscribed: 'no' }),
      ['subscribed'],
    );
    expect400(
      await request(api.app)
        .patch(`${contacts(book)}/${contactId}`)
        .set(api.team.auth)
        .send({ properties: [] }),
      ['properties'],
    );
    const missing = await request(api.app)
      .patch(`${contacts(book)}/nope`)
      .set(api.team.auth)
      .send({ firstName: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: 'NOT_FOUND', message: 'Contact not found' });
  });

  it('DELETE removes one contact; a second delete is a 404', async () => {
    const book = await newBook();
    const { contactId } = (await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'd@x.com' })).body;
    const res = await request(api.app)
      .delete(`${contacts(book)}/${contactId}`)
      .set(api.team.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(await api.deps.db.contact.count({ where: { id: contactId } })).toBe(0);
    expect(
      (
        await request(api.app)
          .delete(`${contacts(book)}/${contactId}`)
          .set(api.team.auth)
      ).status,
    ).toBe(404);
    expect(
      (
        await request(api.app)
          .get(`${contacts(book)}/${contactId}`)
          .set(api.team.auth)
      ).status,
    ).toBe(404);
  });
});

describe('subscription state', () => {
  it('upserts never re-subscribe; PATCH does and clears the reason', async () => {
    const book = await newBook();
    const url = contacts(book);
    const { contactId } = (await request(api.app).post(url).set(api.team.auth).send({ email: 's@x.com', subscribed: false })).body;
    expect(await getContact(contactId)).toMatchObject({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });

    await request(api.app).post(url).set(api.team.auth).send({ email: 's@x.com', subscribed: true });
    await request(api.app).put(`${url}/${contactId}`).set(api.team.auth).send({ email: 's@x.com', subscribed: true });
    await request(api.app)
      .post(`${url}/bulk`)
      .set(api.team.auth)
      .send([{ email: 's@x.com', subscribed: true }]);
    expect(await getContact(contactId)).toMatchObject({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });

    await request(api.app).patch(`${url}/${contactId}`).set(api.team.auth).send({ subscribed: true });
    expect(await getContact(contactId)).toMatchObject({ subscribed: true, unsubscribeReason: null });

    await request(api.app).patch(`${url}/${contactId}`).set(api.team.auth).send({ subscribed: false });
    expect(await getContact(contactId)).toMatchObject({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
  });

  it('an upsert with subscribed:false unsubscribes, and keeps a bounce reason', async () => {
    const book = await newBook();
    const { contactId } = (await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'b@x.com' })).body;
    expect(await getContact(contactId)).toMatchObject({ subscribed: true, unsubscribeReason: null });
    await api.deps.db.contact.update({ where: { id: contactId }, data: { subscribed: false, unsubscribeReason: 'BOUNCED' } });
    await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'b@x.com', subscribed: false });
    expect(await getContact(contactId)).toMatchObject({ subscribed: false, unsubscribeReason: 'BOUNCED' });
  });
});

describe('bulk', () => {
  it('creates 10,000 contacts in one call, then merges re-sent ones', async () => {
    const book = await newBook();
    const items = Array.from({ length: 10_000 }, (_, i) => ({
      email: `bulk${i}@example.com`,
      firstName: `F${i}`,
      properties: { n: String(i) },
    }));
    const res = await request(api.app)
      .post(`${contacts(book)}/bulk`)
      .set(api.team.auth)
      .send(items);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.stringContaining('10000 created'), count: 10_000 });
    expect(await api.deps.db.contact.count({ where: { contactBookId: book } })).toBe(10_000);
    expect(await api.deps.db.webhookEvent.count({ where: { type: 'contact.created', teamId: api.team.teamId } })).toBeGreaterThanOrEqual(
      10_000,
    );

    // Two updates and one new address; duplicates inside the array merge into one contact.
    const again = await request(api.app)
      .post(`${contacts(book)}/bulk`)
      .set(api.team.auth)
      .send([
        { email: 'BULK1@example.com', properties: { extra: 'x' } },
        { email: 'bulk2@example.com', lastName: 'L' },
        { email: 'fresh@example.com', properties: { a: '1' } },
        { email: 'Fresh@example.com', firstName: 'Fr', properties: { b: '2' } },
      ]);
    expect(again.body).toEqual({ message: 'Processed 3 contacts: 1 created, 2 updated', count: 3 });
    const one = await api.deps.db.contact.findUniqueOrThrow({
      where: { contactBookId_email: { contactBookId: book, email: 'bulk1@example.com' } },
    });
    expect(one).toMatchObject({ firstName: 'F1', properties: { n: '1', extra: 'x' } });
    const fresh = await api.deps.db.contact.findUniqueOrThrow({
      where: { contactBookId_email: { contactBookId: book, email: 'fresh@example.com' } },
    });
    expect(fresh).toMatchObject({ firstName: 'Fr', properties: { a: '1', b: '2' } });
    expect(await api.deps.db.contact.count({ where: { contactBookId: book } })).toBe(10_001);
  });

  it('concurrent bulk upserts of the same addresses in opposite orders both succeed', async () => {
    const book = await newBook();
    const items = Array.from({ length: 8000 }, (_, i) => ({ email: `race${i}@x.com`, properties: { [`k${i % 3}`]: 'v' } }));
    const [a, b] = await Promise.all([
      request(api.app)
        .post(`${contacts(book)}/bulk`)
        .set(api.team.auth)
        .send(items),
      request(api.app)
        .post(`${contacts(book)}/bulk`)
        .set(api.team.auth)
        .send([...items].reverse()),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await api.deps.db.contact.count({ where: { contactBookId: book } })).toBe(8000);
  });

  it('refuses more than 10,000, an empty array, or one bad item (naming its index) and writes nothing', async () => {
    const book = await newBook();
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ email: `t${i}@x.com` }));
    const res = await request(api.app)
      .post(`${contacts(book)}/bulk`)
      .set(api.team.auth)
      .send(tooMany);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/10000/);
    expect(
      (
        await request(api.app)
          .post(`${contacts(book)}/bulk`)
          .set(api.team.auth)
          .send([])
      ).status,
    ).toBe(400);
    expect400(
      await request(api.app)
        .post(`${contacts(book)}/bulk`)
        .set(api.team.auth)
        .send({ email: 'a@x.com' }),
      [],
    );
    expect400(
      await request(api.app)
        .post(`${contacts(book)}/bulk`)
        .set(api.team.auth)
        .send([{ email: 'ok@x.com' }, { email: 'bad' }]),
      [1, 'email'],
    );
    expect400(
      await request(api.app)
        .post(`${contacts('ab')}/bulk`)
        .set(api.team.auth)
        .send([{ email: 'ok@x.com' }]),
      ['contactBookId'],
    );
    expect(await api.deps.db.contact.count({ where: { contactBookId: book } })).toBe(0);
  });

  it('bulk delete is routed before /{contactId} and ignores ids of other books', async () => {
    const book = await newBook();
    const otherBook = await newBook();
    await request(api.app)
      .post(`${contacts(book)}/bulk`)
      .set(api.team.auth)
      .send([{ email: 'a@x.com' }, { email: 'b@x.com' }, { email: 'c@x.com' }]);
    const foreign = (await request(api.app).post(contacts(otherBook)).set(api.team.auth).send({ email: 'z@x.com' })).body.contactId;
    const ids = (await api.deps.db.contact.findMany({ where: { contactBookId: book }, orderBy: { email: 'asc' } })).map((c) => c.id);

    const res = await request(api.app)
      .delete(`${contacts(book)}/bulk`)
      .set(api.team.auth)
      .send({ contactIds: [ids[0], ids[1], ids[1], foreign, 'nope'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, count: 2 });
    expect(await api.deps.db.contact.findMany({ where: { contactBookId: book }, select: { id: true } })).toEqual([{ id: ids[2] }]);
    expect(await api.deps.db.contact.count({ where: { id: foreign } })).toBe(1);
    expect(await api.deps.db.webhookEvent.count({ where: { type: 'contact.deleted', data: { path: ['id'], equals: ids[0] } } })).toBe(1);

    expect400(
      await request(api.app)
        .delete(`${contacts(book)}/bulk`)
        .set(api.team.auth)
        .send({ contactIds: [] }),
      ['contactIds'],
    );
    expect400(
      await request(api.app)
        .delete(`${contacts(book)}/bulk`)
        .set(api.team.auth)
        .send({ contactIds: Array.from({ length: 1001 }, (_, i) => `i${i}`) }),
      ['contactIds'],
    );
    expect400(
      await request(api.app)
        .delete(`${contacts(book)}/bulk`)
        .set(api.team.auth)
        .send({}),
      ['contactIds'],
    );
    expect400(
      await request(api.app)
        .delete(`${contacts('ab')}/bulk`)
        .set(api.team.auth)
        .send({ contactIds: [ids[2]] }),
      ['contactBookId'],
    );
  });
});

describe('webhook outbox', () => {
  it('writes contact.created, contact.updated and contact.deleted with the contact as data', async () => {
    const book = await newBook();
    const { contactId } = (await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'w@x.com', firstName: 'W' })).body;
    await request(api.app)
      .patch(`${contacts(book)}/${contactId}`)
      .set(api.team.auth)
      .send({ lastName: 'X' });
    await request(api.app)
      .delete(`${contacts(book)}/${contactId}`)
      .set(api.team.auth);
    const events = await api.deps.db.webhookEvent.findMany({
      where: { data: { path: ['id'], equals: contactId } },
      orderBy: { createdAt: 'asc' },
    });
    expect(events.map((e) => e.type).sort()).toEqual(['contact.created', 'contact.deleted', 'contact.updated']);
    for (const e of events) {
      expect(e.teamId).toBe(api.team.teamId);
      expect(e.id).toMatch(/^[0-9a-z]{24}$/);
      expect(e.data).toMatchObject({ id: contactId, email: 'w@x.com', firstName: 'W', contactBookId: book });
    }
    expect(events.find((e) => e.type === 'contact.updated')!.data).toMatchObject({ lastName: 'X' });
  });
});

describe('team isolation', () => {
  it('answers 404 "Contact book not found" for another team book on every route', async () => {
    const book = await newBook();
    const { contactId } = (await request(api.app).post(contacts(book)).set(api.team.auth).send({ email: 'mine@x.com' })).body;
    const url = contacts(book);
    const attempts = [
      request(api.app).post(url).set(other.auth).send({ email: 'x@x.com' }),
      request(api.app).get(url).set(other.auth),
      request(api.app).get(`${url}/${contactId}`).set(other.auth),
      request(api.app).put(`${url}/${contactId}`).set(other.auth).send({ email: 'mine@x.com', firstName: 'Evil' }),
      request(api.app).patch(`${url}/${contactId}`).set(other.auth).send({ firstName: 'Evil' }),
      request(api.app).delete(`${url}/${contactId}`).set(other.auth),
      request(api.app)
        .post(`${url}/bulk`)
        .set(other.auth)
        .send([{ email: 'x@x.com' }]),
      request(api.app)
        .delete(`${url}/bulk`)
        .set(other.auth)
        .send({ contactIds: [contactId] }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Contact book not found' });
    }
    expect(await getContact(contactId)).toMatchObject({ email: 'mine@x.com', firstName: null });
    expect(await api.deps.db.contact.count({ where: { contactBookId: book } })).toBe(1);

    // A contact id of another book through one's own book is not found either.
    const theirBook = await newBook({}, other);
    const res = await request(api.app)
      .get(`${contacts(theirBook)}/${contactId}`)
      .set(other.auth);
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe('Contact not found');
  });
});
