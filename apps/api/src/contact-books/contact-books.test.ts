import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { expectBadRequest as expect400 } from '../testing/expect-bad-request';

let api: TestApi;
let other: TestTeam;
beforeAll(async () => {
  api = await startTestApi();
  other = await api.newTeam('Other team');
  await api.addDomain(api.team.teamId, 'verified.example.com');
  await api.addDomain(api.team.teamId, 'pending.example.com', { verified: false });
  await api.addDomain(other.teamId, 'other.example.com');
});
afterAll(async () => {
  await api.close();
});

const post = (body: unknown, team = api.team) =>
  request(api.app)
    .post('/api/v1/contactBooks')
    .set(team.auth)
    .send(body as object);
const patch = (id: string, body: unknown, team = api.team) =>
  request(api.app)
    .patch(`/api/v1/contactBooks/${id}`)
    .set(team.auth)
    .send(body as object);

describe('create', () => {
  it('creates a book with defaults: emoji, empty properties and variables, double opt-in off', async () => {
    const res = await post({ name: 'Newsletter' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Newsletter',
      teamId: api.team.teamId,
      emoji: '📙',
      properties: {},
      variables: [],
      doubleOptInEnabled: false,
      doubleOptInFrom: null,
      doubleOptInSubject: null,
      doubleOptInContent: null,
      _count: { contacts: 0 },
      subscribedCount: 0,
    });
    expect(res.body.id).toMatch(/^[0-9a-z]{24}$/);
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    const row = await api.deps.db.contactBook.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.teamId).toBe(api.team.teamId);
  });

  it('stores every field and answers the content as an editor document', async () => {
    const content = JSON.stringify({
      type: 'doc',
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Click {{doubleOptInUrl}}' }] }],
    });
    const res = await post({
      name: 'Full',
      emoji: '🚀',
      properties: { source: 'web' },
      variables: [' plan ', 'Company', 'company', 'plan'],
      doubleOptInEnabled: true,
      doubleOptInFrom: 'News <news@verified.example.com>',
      doubleOptInSubject: 'Confirm, {{firstName}}',
      doubleOptInContent: content,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      emoji: '🚀',
      properties: { source: 'web' },
      variables: ['plan', 'Company'],
      doubleOptInEnabled: true,
      doubleOptInFrom: 'News <news@verified.example.com>',
      doubleOptInSubject: 'Confirm, {{firstName}}',
      doubleOptInContent: JSON.parse(content),
      _count: { contacts: 0 },
    });
  });

  it('wraps plain or HTML content in a document holding an html node', async () => {
    const html = '<p>Hi {{firstName}}, <a href="{{doubleOptInUrl}}">confirm</a></p>';
    const res = await post({ name: 'Html', doubleOptInContent: html });
    expect(res.status).toBe(200);
    expect(res.body.doubleOptInContent).toEqual({ type: 'doc', content: [{ type: 'html', attrs: { html } }] });
  });

  it('fills the default subject and content when double opt-in is enabled without them', async () => {
    const res = await post({ name: 'DOI', doubleOptInEnabled: true, doubleOptInSubject: '  ' });
    expect(res.status).toBe(200);
    expect(res.body.doubleOptInSubject).toBe('Please confirm your subscription');
    expect(res.body.doubleOptInContent.type).toBe('doc');
    expect(JSON.stringify(res.body.doubleOptInContent)).toContain('{{doubleOptInUrl}}');
  });

  it('refuses bad input naming the field', async () => {
    expect400(await post({}), ['name']);
    expect400(await post({ name: '' }), ['name']);
    expect400(await post({ name: 5 }), ['name']);
    expect400(await post({ name: 'x', emoji: 3 }), ['emoji']);
    expect400(await post({ name: 'x', properties: { a: 1 } }), ['properties', 'a']);
    expect400(await post({ name: 'x', properties: 'nope' }), ['properties']);
    expect400(await post({ name: 'x', variables: 'plan' }), ['variables']);
    expect400(await post({ name: 'x', variables: ['ok', 'not ok'] }), ['variables', 1]);
    expect400(await post({ name: 'x', variables: ['Email'] }), ['variables', 0]);
    expect400(await post({ name: 'x', variables: ['firstname'] }), ['variables', 0]);
    expect400(await post({ name: 'x', variables: ['LASTNAME'] }), ['variables', 0]);
    expect400(await post({ name: 'x', doubleOptInEnabled: 'yes' }), ['doubleOptInEnabled']);
    expect400(await post({ name: 'x', doubleOptInSubject: 1 }), ['doubleOptInSubject']);
    expect400(await post({ name: 'x', doubleOptInContent: 'no link here' }), ['doubleOptInContent']);
    expect400(await post({ name: 'x', doubleOptInFrom: 'not an address' }), ['doubleOptInFrom']);
    // The same address rule as emails: no CR LF in a name (it would reach the From header).
    expect400(await post({ name: 'x', doubleOptInFrom: 'News\r\nBcc: injected@evil.example <a@verified.example.com>' }), [
      'doubleOptInFrom',
    ]);
    expect400(await post({ name: 'x', doubleOptInFrom: `${' '.repeat(4000)}x` }), ['doubleOptInFrom']);
    // Length caps (apps/api/src/http/limits.ts).
    expect400(await post({ name: 'n'.repeat(256) }), ['name']);
    expect400(await post({ name: 'x', properties: { a: 'v'.repeat(10_001) } }), ['properties', 'a']);
    expect400(await post({ name: 'x', variables: ['v'.repeat(129)] }), ['variables', 0]);
    expect400(await post({ name: 'x', doubleOptInSubject: 's'.repeat(999) }), ['doubleOptInSubject']);
    expect(
      (
        await request(api.app)
          .get(`/api/v1/contactBooks/${'b'.repeat(129)}`)
          .set(api.team.auth)
      ).status,
    ).toBe(400);
    expect(await api.deps.db.contactBook.count({ where: { name: 'x' } })).toBe(0);
  });

  it('requires doubleOptInFrom on a verified domain of the team', async () => {
    expect400(await post({ name: 'x', doubleOptInFrom: 'a@pending.example.com' }), ['doubleOptInFrom']);
    expect400(await post({ name: 'x', doubleOptInFrom: 'a@other.example.com' }), ['doubleOptInFrom']);
    expect400(await post({ name: 'x', doubleOptInFrom: 'a@unknown.example.com' }), ['doubleOptInFrom']);
    const named = await post({ name: 'Named from', doubleOptInFrom: 'Zoë News <News@Verified.Example.com>' });
    expect(named.status).toBe(200);
    expect(named.body.doubleOptInFrom).toBe('Zoë News <News@Verified.Example.com>');
    const blank = await post({ name: 'Blank from', doubleOptInFrom: '   ' });
    expect(blank.status).toBe(200);
    expect(blank.body.doubleOptInFrom).toBeNull();
  });

  it('holds a domain-bound key to its own domain', async () => {
    const otherDomain = await api.addDomain(api.team.teamId, 'second.example.com');
    const first = await api.deps.db.domain.findFirstOrThrow({ where: { name: 'verified.example.com' } });
    const key = await api.newKey(api.team.teamId, { domainId: first.id });
    const bound = { teamId: api.team.teamId, apiKey: key, auth: { Authorization: `Bearer ${key}` } };
    expect400(await post({ name: 'x', doubleOptInFrom: `a@${otherDomain.name}` }, bound), ['doubleOptInFrom']);
    expect((await post({ name: 'Bound', doubleOptInFrom: 'a@verified.example.com' }, bound)).status).toBe(200);
  });
});

describe('read, list, update, delete', () => {
  it('lists only the team books, each with its contact count and subscribed count', async () => {
    const book = (await post({ name: 'Counted' })).body;
    await api.deps.db.contact.createMany({
      data: [1, 2, 3].map((i) => ({ id: `c${i}-${book.id}`, contactBookId: book.id, email: `p${i}@x.com`, subscribed: i !== 2 })),
    });
    const mine = await request(api.app).get('/api/v1/contactBooks').set(api.team.auth);
    expect(mine.status).toBe(200);
    expect(mine.body.find((b: { id: string }) => b.id === book.id)).toMatchObject({ _count: { contacts: 3 }, subscribedCount: 2 });
    expect(mine.body.every((b: { teamId: number }) => b.teamId === api.team.teamId)).toBe(true);

    const theirs = await request(api.app).get('/api/v1/contactBooks').set(other.auth);
    expect(theirs.body.find((b: { id: string }) => b.id === book.id)).toBeUndefined();

    const one = await request(api.app).get(`/api/v1/contactBooks/${book.id}`).set(api.team.auth);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: book.id, name: 'Counted', _count: { contacts: 3 }, subscribedCount: 2 });
  });

  it('updates fields and keeps the others', async () => {
    const book = (await post({ name: 'Before', properties: { a: '1' }, variables: ['plan'] })).body;
    const res = await patch(book.id, { name: 'After', emoji: '🎯' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'After', emoji: '🎯', properties: { a: '1' }, variables: ['plan'], _count: { contacts: 0 } });
    const doi = await patch(book.id, { doubleOptInEnabled: true, doubleOptInFrom: 'hi@verified.example.com' });
    expect(doi.body).toMatchObject({
      doubleOptInEnabled: true,
      doubleOptInFrom: 'hi@verified.example.com',
      doubleOptInSubject: 'Please confirm your subscription',
    });
    expect(JSON.stringify(doi.body.doubleOptInContent)).toContain('{{doubleOptInUrl}}');
    const off = await patch(book.id, { doubleOptInEnabled: false, doubleOptInFrom: null, variables: [] });
    expect(off.body).toMatchObject({ doubleOptInEnabled: false, doubleOptInFrom: null, variables: [] });
    expect400(await patch(book.id, { name: '' }), ['name']);
    expect400(await patch(book.id, { doubleOptInContent: 'missing placeholder' }), ['doubleOptInContent']);
    expect400(await patch(book.id, { doubleOptInFrom: 'a@pending.example.com' }), ['doubleOptInFrom']);
    expect400(await patch(book.id, { variables: ['email'] }), ['variables', 0]);
    expect((await api.deps.db.contactBook.findUniqueOrThrow({ where: { id: book.id } })).name).toBe('After');
  });

  it('deletes a book with its contacts', async () => {
    const book = (await post({ name: 'Doomed' })).body;
    await api.deps.db.contact.create({ data: { id: `d-${book.id}`, contactBookId: book.id, email: 'a@x.com' } });
    const res = await request(api.app).delete(`/api/v1/contactBooks/${book.id}`).set(api.team.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: book.id, success: true, message: 'Contact book deleted successfully' });
    expect(await api.deps.db.contact.count({ where: { contactBookId: book.id } })).toBe(0);
    expect((await request(api.app).get(`/api/v1/contactBooks/${book.id}`).set(api.team.auth)).status).toBe(404);
  });

  it('answers 404 for another team book on every route, and leaves it untouched', async () => {
    const book = (await post({ name: 'Private' })).body;
    for (const res of [
      await request(api.app).get(`/api/v1/contactBooks/${book.id}`).set(other.auth),
      await patch(book.id, { name: 'Stolen' }, other),
      await request(api.app).delete(`/api/v1/contactBooks/${book.id}`).set(other.auth),
      await request(api.app).get(`/api/v1/contactBooks/unknown-id`).set(api.team.auth),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Contact book not found' });
    }
    expect((await api.deps.db.contactBook.findUniqueOrThrow({ where: { id: book.id } })).name).toBe('Private');
  });
});
