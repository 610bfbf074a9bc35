import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { expectBadRequest } from '../testing/expect-bad-request';
import { EXPORT_BATCH } from './export';

let api: TestApi;
let other: TestTeam;
beforeAll(async () => {
  api = await startTestApi();
  other = await api.newTeam('Other team');
});
afterAll(async () => {
  await api.close();
});

async function newBook(contacts: Record<string, unknown>[]): Promise<string> {
  const id = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Book' }).expect(200)).body.id;
  if (contacts.length)
    await request(api.app).post(`/api/v1/contactBooks/${id}/contacts/bulk`).set(api.team.auth).send(contacts).expect(200);
  return id;
}
const list = (book: string, query: Record<string, unknown>) =>
  request(api.app).get(`/api/v1/contactBooks/${book}/contacts`).query(query).set(api.team.auth);
const emails = (body: { email: string }[]) => body.map((c) => c.email).sort();

describe('contacts list: search, subscribed, after', () => {
  let book: string;
  beforeAll(async () => {
    book = await newBook([
      { email: 'ada@example.org', firstName: 'Ada', lastName: 'Lovelace' },
      { email: 'grace@example.org', firstName: 'Grace', lastName: 'Hopper', subscribed: false },
      { email: 'linus@kernel.test', firstName: 'Linus' },
      { email: 'x_y@example.org' },
      { email: 'xay@example.org' },
    ]);
  });

  it('search matches email, first or last name, contains, case-insensitive; wildcards are plain text', async () => {
    expect(emails((await list(book, { search: 'LOVE' }).expect(200)).body)).toEqual(['ada@example.org']);
    expect(emails((await list(book, { search: 'kernel' }).expect(200)).body)).toEqual(['linus@kernel.test']);
    expect(emails((await list(book, { search: 'race' }).expect(200)).body)).toEqual(['grace@example.org']);
    expect(emails((await list(book, { search: 'x_y' }).expect(200)).body)).toEqual(['x_y@example.org']);
    expect(emails((await list(book, { search: '%' }).expect(200)).body)).toEqual([]);
    expectBadRequest(await list(book, { search: 's'.repeat(201) }), ['search']);
  });

  it('subscribed filters on the state', async () => {
    expect(emails((await list(book, { subscribed: 'false' }).expect(200)).body)).toEqual(['grace@example.org']);
    expect((await list(book, { subscribed: 'true' }).expect(200)).body).toHaveLength(4);
    expectBadRequest(await list(book, { subscribed: 'yes' }), ['subscribed']);
  });

  it('after pages by id: every contact once, in order, with filters', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await list(book, { limit: 2, ...(after ? { after } : {}) }).expect(200)).body as { id: string }[];
      if (page.length === 0) break;
      seen.push(...page.map((c) => c.id));
      after = page[page.length - 1].id;
    }
    const all = (await list(book, {}).expect(200)).body.map((c: { id: string }) => c.id);
    expect(seen).toEqual(all);
    expect(all).toHaveLength(5);
    const subscribed = new Set((await list(book, { subscribed: 'true' }).expect(200)).body.map((c: { id: string }) => c.id));
    const afterFirst = (await list(book, { after: all[0], subscribed: 'true' }).expect(200)).body.map((c: { id: string }) => c.id);
    expect(afterFirst).toEqual(all.slice(1).filter((id: string) => subscribed.has(id)));
    expect(afterFirst.every((id: string) => id > all[0])).toBe(true);
  });
});

function parseCsv(text: string): string[][] {
  // Enough for the test: fields quoted per RFC 4180, rows ended by CRLF.
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  return rows;
}

describe('CSV export', () => {
  it('streams every contact of the book once across batches, with one column per property, quoted where needed', async () => {
    const n = EXPORT_BATCH * 2 + 17;
    const contacts = Array.from({ length: n }, (_, i) => ({
      email: `c${i}@example.org`,
      properties: i % 2 ? { plan: 'pro' } : { city: 'Berlin' },
    }));
    contacts[0] = { email: 'quote@example.org', firstName: 'Say "hi", then\nleave', properties: { plan: 'a,b' } } as never;
    const book = await newBook(contacts);
    const res = await request(api.app)
      .get(`/api/v1/contactBooks/${book}/contacts/export`)
      .set(api.team.auth)
      .buffer(true)
      .parse((r, cb) => {
        let data = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (data += c));
        r.on('end', () => cb(null, data));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="contacts-/);
    const rows = parseCsv(res.body as string);
    expect(rows[0]).toEqual(['email', 'firstName', 'lastName', 'subscribed', 'createdAt', 'city', 'plan']);
    expect(rows).toHaveLength(n + 1);
    expect(new Set(rows.slice(1).map((r) => r[0])).size).toBe(n);
    const quote = rows.find((r) => r[0] === 'quote@example.org')!;
    expect(quote).toEqual(['quote@example.org', 'Say "hi", then\nleave', '', 'true', expect.stringMatching(/Z$/), '', 'a,b']);
    expect(rows.find((r) => r[0] === 'c2@example.org')!.slice(5)).toEqual(['Berlin', '']);
  });

  it('writes a cell that would start a spreadsheet formula with a leading quote (CSV injection), header included', async () => {
    const book = await newBook([
      {
        email: '-dash@example.org',
        firstName: '=HYPERLINK("http://evil.test","click")',
        lastName: '+1',
        properties: { note: '@SUM(1)', tab: '\t=x', quoted: "'=already", plain: "it's fine", '=prop': 'a-b' },
      },
    ]);
    const res = await request(api.app).get(`/api/v1/contactBooks/${book}/contacts/export`).set(api.team.auth).buffer(true);
    expect(res.status).toBe(200);
    const [header, row] = parseCsv(res.text);
    expect(Object.fromEntries(header.map((h, k) => [h, row[k]]))).toEqual({
      email: "'-dash@example.org",
      firstName: `'=HYPERLINK("http://evil.test","click")`,
      lastName: "'+1",
      subscribed: 'true',
      createdAt: expect.stringMatching(/^\d{4}-.*Z$/),
      "'=prop": 'a-b',
      note: "'@SUM(1)",
      plain: "it's fine",
      quoted: "''=already",
      tab: "'\t=x",
    });
  });

  it('exports one segment of the book; unknown or foreign segments and books are 404', async () => {
    const book = await newBook([
      { email: 'a@x.test', properties: { plan: 'pro' } },
      { email: 'b@x.test', properties: { plan: 'free' } },
    ]);
    const segment = (
      await request(api.app)
        .post(`/api/v1/contactBooks/${book}/segments`)
        .set(api.team.auth)
        .send({ name: 'Pro', filter: { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'pro' }] } })
        .expect(200)
    ).body.id;
    const res = await request(api.app)
      .get(`/api/v1/contactBooks/${book}/contacts/export`)
      .query({ segmentId: segment })
      .set(api.team.auth)
      .expect(200);
    expect(parseCsv(res.text)).toEqual([
      ['email', 'firstName', 'lastName', 'subscribed', 'createdAt', 'plan'],
      ['a@x.test', '', '', 'true', expect.any(String), 'pro'],
    ]);
    const empty = await newBook([]);
    expect((await request(api.app).get(`/api/v1/contactBooks/${empty}/contacts/export`).set(api.team.auth).expect(200)).text).toBe(
      'email,firstName,lastName,subscribed,createdAt\r\n',
    );
    await request(api.app).get(`/api/v1/contactBooks/${book}/contacts/export`).query({ segmentId: 'nope' }).set(api.team.auth).expect(404);
    await request(api.app)
      .get(`/api/v1/contactBooks/${empty}/contacts/export`)
      .query({ segmentId: segment })
      .set(api.team.auth)
      .expect(404);
    await request(api.app).get(`/api/v1/contactBooks/${book}/contacts/export`).set(other.auth).expect(404);
  });
});
