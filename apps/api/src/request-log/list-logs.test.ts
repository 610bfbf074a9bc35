import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

// GET /api/v1/logs over rows written here directly: the writer (record-requests.test.ts) is not
// what these tests are about, and direct rows make times and keys exact.

let api: TestApi;
let other: TestTeam;
let fullKeyId: number;
let boundKey: { Authorization: string };
let boundKeyId: number;
const base = Date.parse('2026-12-01T10:00:00Z');
const at = (minutes: number) => new Date(base + minutes * 60_000);

beforeAll(async () => {
  // A long flush: the rows of these tests' own calls stay out of the way until close.
  api = await startTestApi({ REQUEST_LOG_FLUSH_MS: '3600000' });
  other = await api.newTeam('Other');
  const domain = await api.addDomain(api.team.teamId, 'example.com');
  const bound = await api.newKey(api.team.teamId, { domainId: domain.id });
  boundKey = { Authorization: `Bearer ${bound}` };
  const keys = await api.deps.db.apiKey.findMany({ where: { teamId: api.team.teamId }, orderBy: { id: 'asc' } });
  [fullKeyId, boundKeyId] = [keys[0].id, keys[1].id];
  const otherKeyId = (await api.deps.db.apiKey.findFirstOrThrow({ where: { teamId: other.teamId } })).id;
  const row = (teamId: number, apiKeyId: number | null, minutes: number, status: number, path: string) => ({
    teamId,
    apiKeyId,
    source: 'api',
    method: 'POST',
    path,
    status,
    errorCode: status >= 400 ? 'BAD_REQUEST' : null,
    errorMessage: status >= 400 ? 'bad' : null,
    durationMs: 3,
    createdAt: at(minutes),
  });
  await api.deps.db.requestLog.createMany({
    data: [
      row(api.team.teamId, fullKeyId, 1, 200, '/api/v1/emails'),
      row(api.team.teamId, fullKeyId, 2, 400, '/api/v1/emails/batch'),
      row(api.team.teamId, fullKeyId, 3, 500, '/api/v1/contactBooks'),
      row(api.team.teamId, boundKeyId, 4, 200, '/api/v1/emails'),
      row(api.team.teamId, fullKeyId, 5, 404, '/api/v1/domains/9'),
      row(other.teamId, otherKeyId, 6, 200, '/api/v1/emails'),
    ],
  });
});

afterAll(() => api.close());

const list = (query: Record<string, string | number>, auth = api.team.auth) => request(api.app).get('/api/v1/logs').query(query).set(auth);
const minutesOf = (body: { data: { createdAt: string }[] }) => body.data.map((e) => (Date.parse(e.createdAt) - base) / 60_000);
const before = { endDate: at(10).toISOString() };

it("lists the team's entries newest first, with the key's name and no other team's", async () => {
  const res = await list(before).expect(200);
  expect(minutesOf(res.body)).toEqual([5, 4, 3, 2, 1]);
  const key = await api.deps.db.apiKey.findUniqueOrThrow({ where: { id: fullKeyId } });
  expect(res.body.data[0]).toMatchObject({
    method: 'POST',
    path: '/api/v1/domains/9',
    status: 404,
    error: { code: 'BAD_REQUEST', message: 'bad' },
    apiKey: { id: fullKeyId, name: key.name },
    requestBody: null,
  });
  expect(res.body.nextCursor).toBeNull();
});

it('filters by status class, path prefix, key and time range', async () => {
  expect(minutesOf((await list({ ...before, status: '4xx' })).body)).toEqual([5, 2]);
  expect(minutesOf((await list({ ...before, status: '5xx' })).body)).toEqual([3]);
  expect(minutesOf((await list({ ...before, path: '/api/v1/emails' })).body)).toEqual([4, 2, 1]);
  expect(minutesOf((await list({ ...before, path: '/api/v1/emails/' })).body)).toEqual([2]);
  // LIKE's wildcards in a prefix are matched as written.
  expect(minutesOf((await list({ ...before, path: '/api/v1/e%' })).body)).toEqual([]);
  expect(minutesOf((await list({ ...before, apiKeyId: boundKeyId })).body)).toEqual([4]);
  expect(minutesOf((await list({ startDate: at(2).toISOString(), endDate: at(4).toISOString() })).body)).toEqual([3, 2]);
});

it('pages by cursor without repeating or skipping an entry', async () => {
  const seen: number[] = [];
  let cursor: string | null = null;
  do {
    const res: request.Response = await list({ ...before, limit: 2, ...(cursor ? { cursor } : {}) }).expect(200);
    seen.push(...minutesOf(res.body));
    cursor = res.body.nextCursor;
  } while (cursor);
  expect(seen).toEqual([5, 4, 3, 2, 1]);
});

it('shows a key bound to a domain only its own requests', async () => {
  expect(minutesOf((await list(before, boundKey).expect(200)).body)).toEqual([4]);
  expect(minutesOf((await list({ ...before, apiKeyId: fullKeyId }, boundKey).expect(200)).body)).toEqual([]);
});

it("shows another team none of this team's entries, even asked by this team's key id", async () => {
  const res = await list({ ...before, apiKeyId: fullKeyId }, other.auth).expect(200);
  expect(res.body.data).toEqual([]);
  expect(minutesOf((await list(before, other.auth)).body)).toEqual([6]);
});

it('refuses a SENDING key and bad filters in the documented error shape', async () => {
  const sending = await api.newKey(api.team.teamId, { permission: 'SENDING' });
  expect((await list({}, { Authorization: `Bearer ${sending}` })).status).toBe(403);
  const bad: Record<string, string | number>[] = [
    { status: '6xx' },
    { path: 'no-slash' },
    { path: `/${'a'.repeat(300)}` },
    { cursor: 'nope' },
    { limit: 1000 },
    { startDate: 'yesterday' },
  ];
  for (const query of bad) {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  }
});
