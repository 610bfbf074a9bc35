import request from 'supertest';
import { queueNames } from '@mailrail/platform/queue/queues';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

let api: TestApi;
let other: TestTeam;
beforeAll(async () => {
  // 2 MB: a 3 MB file is over the cap, and the 1.5 MB file below is stored as two chunks.
  api = await startTestApi({ CONTACT_IMPORT_MAX_MB: '2' });
  other = await api.newTeam('Other team');
});
afterAll(async () => {
  await api.close();
});

async function newBook(team = api.team): Promise<string> {
  const res = await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'Book' });
  expect(res.status).toBe(200);
  return res.body.id;
}
const imports = (bookId: string) => `/api/v1/contactBooks/${bookId}/imports`;
const upload = (bookId: string, file: Buffer | string, fields: Record<string, string> = {}, team = api.team) => {
  let req = request(api.app).post(imports(bookId)).set(team.auth);
  for (const [k, v] of Object.entries(fields)) req = req.field(k, v);
  return req.attach('file', Buffer.from(file), { filename: 'people.csv', contentType: 'text/csv' });
};
const storedFile = async (importId: string) =>
  Buffer.concat(
    (await api.deps.db.contactImportChunk.findMany({ where: { importId }, orderBy: { seq: 'asc' } })).map((c) => Buffer.from(c.data)),
  );
const importCount = (bookId: string) => api.deps.db.contactImport.count({ where: { contactBookId: bookId } });

describe('typed properties', () => {
  const properties = async (bookId: string) =>
    (await request(api.app).get(`/api/v1/contactBooks/${bookId}/properties`).set(api.team.auth).expect(200)).body.properties;

  it("adds the property columns to the book's registry with the confirmed types, in file order", async () => {
    const book = await newBook();
    const csv = 'email,company,signup date,lifetime value,notes\na@x.org,Acme,2025-03-01,250,x\n';
    const res = await upload(book, csv, {
      mapping: JSON.stringify({ notes: 'ignore' }),
      propertyTypes: JSON.stringify({ 'signup date': 'date', 'lifetime value': 'number' }),
    });
    expect(res.status).toBe(202);
    expect(await properties(book)).toEqual([
      { name: 'company', type: 'string', fallback: null },
      { name: 'signup date', type: 'date', fallback: null },
      { name: 'lifetime value', type: 'number', fallback: null },
    ]);
  });

  it('an existing property keeps its spelling, position and fallback; a confirmed type replaces its type', async () => {
    const book = await newBook();
    await request(api.app)
      .put(`/api/v1/contactBooks/${book}/properties`)
      .set(api.team.auth)
      .send({ properties: [{ name: 'LTV', type: 'string', fallback: '0' }, { name: 'plan' }] })
      .expect(200);
    const res = await upload(book, 'email,ltv,Plan,city\na@x.org,3,pro,Rome\n', { propertyTypes: JSON.stringify({ ltv: 'number' }) });
    expect(res.status).toBe(202);
    expect(await properties(book)).toEqual([
      { name: 'LTV', type: 'number', fallback: '0' },
      { name: 'plan', type: 'string', fallback: null },
      { name: 'city', type: 'string', fallback: null },
    ]);
    // The import writes the values under the registered spelling.
    const row = await api.deps.db.contactImport.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.columns).toEqual(['email', 'properties.LTV', 'properties.plan', 'properties.city']);
  });

  it.each([
    ['not JSON', '{'],
    ['an unknown type', JSON.stringify({ ltv: 'money' })],
    ['an array', JSON.stringify(['number'])],
  ])('propertyTypes that is %s is a 400, nothing kept', async (_what, propertyTypes) => {
    const book = await newBook();
    const res = await upload(book, 'email,ltv\na@x.org,3\n', { propertyTypes });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(await importCount(book)).toBe(0);
    expect(await properties(book)).toEqual([]);
  });
});

describe('preview', () => {
  it('answers the headers, the guessed mapping and up to 5 rows, leaving out a row cut at the end', async () => {
    const book = await newBook();
    const csv = 'E-mail Address,First Name,surname,Plan,subscribed\n' + 'a@x.org,Ada,L,pro,yes\n'.repeat(6) + 'b@x.org,Bo';
    const res = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(api.team.auth)
      .set('Content-Type', 'text/csv')
      .send(csv);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      headers: ['E-mail Address', 'First Name', 'surname', 'Plan', 'subscribed'],
      mapping: {
        'E-mail Address': 'email',
        'First Name': 'firstName',
        surname: 'lastName',
        Plan: 'properties.Plan',
        subscribed: 'subscribed',
      },
      sample: Array(5).fill(['a@x.org', 'Ada', 'L', 'pro', 'yes']),
      types: { 'E-mail Address': 'string', 'First Name': 'string', surname: 'string', Plan: 'string', subscribed: 'boolean' },
    });
  });

  it("suggests each column's type from its values: number, date or boolean when nine in ten values read so", async () => {
    const book = await newBook();
    const csv =
      'email,company,plan,country,signup date,lifetime value,vip,score\n' +
      'a@x.org,Acme,pro,DE,2025-03-01,250,yes,12\n' +
      'b@x.org,Beta,free,FR,2025-03-02T10:00:00Z,99.5,no,n/a\n' +
      'c@x.org,Gamma,,US,,,,7\n';
    const res = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(api.team.auth)
      .set('Content-Type', 'text/csv')
      .send(csv);
    expect(res.status).toBe(200);
    expect(res.body.types).toEqual({
      email: 'string',
      company: 'string',
      plan: 'string',
      country: 'string',
      'signup date': 'date',
      'lifetime value': 'number',
      vip: 'boolean',
      score: 'string',
    });
  });

  it("reads an export's header back: a formula-safe header as it was, the date columns not imported", async () => {
    const book = await newBook();
    const res = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(api.team.auth)
      .set('Content-Type', 'text/csv')
      .send("email,firstName,lastName,subscribed,createdAt,'=score\r\na@x.org,Ada,,true,2026-11-24T04:00:00.000Z,'-1\r\n");
    expect(res.status).toBe(200);
    expect(res.body.headers).toEqual(['email', 'firstName', 'lastName', 'subscribed', 'createdAt', '=score']);
    expect(res.body.mapping).toMatchObject({ createdAt: 'ignore', '=score': 'properties.=score' });
  });

  it('reads quoted fields with commas and line breaks', async () => {
    const book = await newBook();
    const csv = 'email,note\n"a@x.org","one, two\nthree"\n';
    const res = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(api.team.auth)
      .set('Content-Type', 'text/csv')
      .send(csv);
    expect(res.body.sample).toEqual([['a@x.org', 'one, two\nthree']]);
  });

  it('refuses bytes that are not UTF-8, a body over 64 KB, another type, another team', async () => {
    const book = await newBook();
    const latin1 = Buffer.from('email,name\na@x.org,Ren\xe9\n', 'latin1');
    const bad = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(api.team.auth)
      .set('Content-Type', 'text/csv')
      .send(latin1);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/not UTF-8/);
    const big = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(api.team.auth)
      .set('Content-Type', 'text/csv')
      .send('email\n' + 'a@x.org\n'.repeat(10_000));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const json = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(api.team.auth)
      .send({ csv: 'email' });
    expect(json.status).toBe(400);
    const foreign = await request(api.app)
      .post(`${imports(book)}/preview`)
      .set(other.auth)
      .set('Content-Type', 'text/csv')
      .send('email\n');
    expect(foreign.status).toBe(404);
  });
});

describe('upload', () => {
  it('stores the file in PostgreSQL, queues the job and answers 202 with the queued import', async () => {
    const book = await newBook();
    const csv = '\ufeffemail,first name,team\n' + Array.from({ length: 60_000 }, (_, i) => `p${i}@x.org,P${i},t${i % 7}`).join('\n') + '\n';
    expect(Buffer.byteLength(csv)).toBeGreaterThan(1024 * 1024);
    const res = await upload(book, csv, { onExisting: 'update', mapping: JSON.stringify({ team: 'ignore' }) });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.any(String),
      contactBookId: book,
      fileName: 'people.csv',
      status: 'queued',
      onExisting: 'update',
      rowsRead: 0,
      created: 0,
      updated: 0,
      skipped: 0,
      rejected: 0,
      suppressed: 0,
      error: null,
      createdAt: expect.any(String),
      startedAt: null,
      finishedAt: null,
    });
    const row = await api.deps.db.contactImport.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.columns).toEqual(['email', 'firstName', 'ignore']);
    expect(Number(row.bytes)).toBe(Buffer.byteLength(csv));
    expect(await api.deps.db.contactImportChunk.count({ where: { importId: res.body.id } })).toBe(2);
    expect((await storedFile(res.body.id)).equals(Buffer.from(csv))).toBe(true);
    const job = await api.deps.queues.get(queueNames.contactImports).getJob(res.body.id);
    expect(job?.data).toEqual({ importId: res.body.id });

    const one = await request(api.app)
      .get(`${imports(book)}/${res.body.id}`)
      .set(api.team.auth);
    expect(one.body).toEqual(res.body);
    const list = await request(api.app).get(imports(book)).set(api.team.auth);
    expect(list.body).toEqual([res.body]);
  });

  it('answers 400 and keeps nothing for a file without an email column, not UTF-8, empty, or with a bad mapping', async () => {
    const book = await newBook();
    const cases: [Buffer | string, Record<string, string>, RegExp][] = [
      ['name,plan\nAda,pro\n', {}, /no email column/],
      [Buffer.concat([Buffer.from('email,name\n' + 'a@x.org,A\n'.repeat(150_000)), Buffer.from([0xc3, 0x28, 0x0a])]), {}, /not UTF-8/],
      ['', {}, /empty/],
      ['email,name\n', { mapping: '{"email": ' }, /JSON/],
      ['email,name\n', { mapping: JSON.stringify({ mail: 'email' }) }, /does not have: mail/],
      ['email,name\n', { mapping: JSON.stringify({ name: 'email', email: 'email' }) }, /Two columns are mapped to email/],
      ['email,name\n', { mapping: JSON.stringify({ name: 'nickname' }) }, /must be email/],
      ['email,name\n', { onExisting: 'merge' }, /onExisting/],
    ];
    for (const [file, fields, message] of cases) {
      const res = await upload(book, file, fields);
      expect([fields, res.status, res.body.error?.code]).toEqual([fields, 400, 'BAD_REQUEST']);
      expect(res.body.error.message).toMatch(message);
    }
    expect(await importCount(book)).toBe(0);
  });

  it('answers 413 past CONTACT_IMPORT_MAX_MB and keeps nothing', async () => {
    const book = await newBook();
    const res = await upload(book, 'email\n' + 'someone@example.org\n'.repeat(160_000));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await importCount(book)).toBe(0);
  });

  it('answers 400 for a body that is not multipart or has no file part, 404 for another team', async () => {
    const book = await newBook();
    const json = await request(api.app).post(imports(book)).set(api.team.auth).send({ file: 'email\n' });
    expect(json.status).toBe(400);
    const noFile = await request(api.app).post(imports(book)).set(api.team.auth).field('onExisting', 'skip');
    expect(noFile.status).toBe(400);
    expect(noFile.body.error.message).toMatch(/no `file` part/);
    const foreign = await upload(book, 'email\na@x.org\n', {}, other);
    expect(foreign.status).toBe(404);
    expect(await importCount(book)).toBe(0);
  });
});

describe('rejects report', () => {
  it('serves the rejected rows as CSV in line order; another team gets 404', async () => {
    const book = await newBook();
    const res = await upload(book, 'email\na@x.org\n');
    const id = res.body.id;
    await api.deps.db.contactImportReject.createMany({
      data: [
        { importId: id, line: 9, reason: 'email: Invalid email address', row: 'nope,"x, y"' },
        { importId: id, line: 3, reason: 'email is empty', row: ',Ada' },
      ],
    });
    const csv = await request(api.app)
      .get(`${imports(book)}/${id}/rejects`)
      .set(api.team.auth);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.text).toBe('line,reason,row\n3,email is empty,",Ada"\n9,email: Invalid email address,"nope,""x, y"""\n');
    // A row that would start a spreadsheet formula is written with a leading quote (CSV injection).
    await api.deps.db.contactImportReject.create({
      data: { importId: id, line: 12, reason: 'email is empty', row: '=cmd|"/c calc"!A0,x' },
    });
    const safe = await request(api.app)
      .get(`${imports(book)}/${id}/rejects`)
      .set(api.team.auth);
    expect(safe.text.split('\n')[3]).toBe(`12,email is empty,"'=cmd|""/c calc""!A0,x"`);
    const foreign = await request(api.app)
      .get(`${imports(book)}/${id}/rejects`)
      .set(other.auth);
    expect(foreign.status).toBe(404);
    const missing = await request(api.app)
      .get(`${imports(book)}/nope/rejects`)
      .set(api.team.auth);
    expect(missing.status).toBe(404);
  });
});
