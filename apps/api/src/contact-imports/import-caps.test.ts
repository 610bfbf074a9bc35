import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

// Per-team caps on CSV imports at upload: how many may be unfinished at once and how many bytes of
// files they may keep stored. No worker runs here, so an accepted import stays queued with its file.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({
    CONTACT_IMPORT_MAX_MB: '2',
    CONTACT_IMPORT_MAX_OPEN_PER_TEAM: '2',
    CONTACT_IMPORT_MAX_STORED_MB_PER_TEAM: '1',
  });
});
afterAll(() => api.close());

async function newBook(team: TestTeam): Promise<string> {
  return (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'Book' }).expect(200)).body.id;
}
const upload = (team: TestTeam, bookId: string, file: string) =>
  request(api.app)
    .post(`/api/v1/contactBooks/${bookId}/imports`)
    .set(team.auth)
    .attach('file', Buffer.from(file), { filename: 'people.csv', contentType: 'text/csv' });
const openImports = (bookId: string) => api.deps.db.contactImport.count({ where: { contactBookId: bookId } });
const SMALL = 'email\na@x.org\n';

it('refuses (429) an upload past the team’s unfinished imports, keeps nothing of it, and leaves other teams alone', async () => {
  const team = await api.newTeam('Busy');
  const other = await api.newTeam('Quiet');
  const book = await newBook(team);
  await upload(team, book, SMALL).expect(202);
  await upload(team, book, SMALL).expect(202);
  const refused = await upload(team, book, SMALL);
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.stringMatching(/already has 2 imports/) } });
  expect(await openImports(book)).toBe(2);
  await upload(other, await newBook(other), SMALL).expect(202);

  // One finishes: the team may upload again.
  const done = await api.deps.db.contactImport.findFirstOrThrow({ where: { contactBookId: book } });
  await api.deps.db.contactImport.update({ where: { id: done.id }, data: { status: 'COMPLETED' } });
  await upload(team, book, SMALL).expect(202);
});

it('counts before it stores: of 6 simultaneous uploads of one team, exactly 2 are taken', async () => {
  const team = await api.newTeam('Rush');
  const book = await newBook(team);
  const answers = await Promise.all(Array.from({ length: 6 }, () => upload(team, book, SMALL)));
  expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 429, 429, 429, 429]);
  expect(await openImports(book)).toBe(2);
});

it('refuses (429) an upload whose file would take the team past its stored bytes, and drops what it had stored', async () => {
  const team = await api.newTeam('Heavy');
  const book = await newBook(team);
  const rows = (n: number, tag: string) =>
    'email,note\n' + Array.from({ length: n }, (_, i) => `${tag}${i}@x.org,${'n'.repeat(40)}`).join('\n');
  const sixHundredKb = rows(10_500, 'a');
  await upload(team, book, sixHundredKb).expect(202);
  const refused = await upload(team, book, rows(10_500, 'b'));
  expect(refused.status).toBe(429);
  expect(refused.body.error.message).toMatch(/keep 1 MB of uploaded files/);
  expect(await openImports(book)).toBe(1);
  expect(await api.deps.db.contactImportChunk.count({ where: { import: { contactBookId: book } } })).toBeGreaterThan(0);
});
