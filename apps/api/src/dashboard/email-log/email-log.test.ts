import request from 'supertest';
import { startTestApi, type TestApi } from '../../testing/api-harness';
import { addUser, signIn, type Browser } from '../testing';

// The Emails page's log: newest first, keyset pages that neither skip nor repeat a row, filters
// that combine, a search in subjects and recipients, and strict input.

let api: TestApi;
let b: Browser;
let url: string;
let domainA: number;
let domainB: number;
const ids: string[] = []; // newest first
const T0 = Date.parse('2026-11-01T00:00:00Z');

beforeAll(async () => {
  api = await startTestApi();
  domainA = (await api.addDomain(api.team.teamId, 'a.log.test')).id;
  domainB = (await api.addDomain(api.team.teamId, 'b.log.test')).id;
  // 30 emails, one per minute; some share a createdAt (the id breaks the tie).
  const statuses = ['DELIVERED', 'BOUNCED', 'QUEUED'] as const;
  for (let i = 0; i < 30; i++) {
    const createdAt = new Date(T0 + Math.floor(i / 2) * 60_000);
    await api.deps.db.email.create({
      data: {
        id: `email${String(i).padStart(3, '0')}`,
        teamId: api.team.teamId,
        domainId: i % 2 ? domainB : domainA,
        from: 'a@a.log.test',
        to: [`Reader${i}@Example.org`],
        subject: i === 7 ? 'Invoice 100%_done' : `Order ${i}`,
        searchText: (i === 7 ? 'invoice 100%_done' : `order ${i}`) + `\nreader${i}@example.org`,
        toAddresses: [`reader${i}@example.org`],
        latestStatus: statuses[i % 3],
        createdAt,
      },
    });
  }
  const other = await api.newTeam('Other');
  await api.deps.db.email.create({
    data: {
      id: 'foreign',
      teamId: other.teamId,
      from: 'x@y.z',
      to: ['reader1@example.org'],
      subject: 'Order 1',
      searchText: 'order 1\nreader1@example.org',
    },
  });
  const rows = await api.deps.db.email.findMany({
    where: { teamId: api.team.teamId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { id: true },
  });
  ids.push(...rows.map((r) => r.id));
  const { email } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
  b = await signIn(api, email);
  url = `/api/dashboard/teams/${api.team.teamId}/email-log`;
});
afterAll(async () => {
  await api.close();
});

async function all(query: Record<string, unknown>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await b
      .get(url)
      .query({ ...query, ...(cursor ? { cursor } : {}) })
      .expect(200);
    seen.push(...res.body.data.map((e: { id: string }) => e.id));
    cursor = res.body.nextCursor ?? undefined;
    if (!cursor) return seen;
  }
  throw new Error('too many pages');
}

it('pages through the team’s emails newest first, each exactly once, with the list fields only', async () => {
  const first = await b.get(url).query({ limit: 7 }).expect(200);
  expect(first.body.data[0]).toEqual({
    id: ids[0],
    from: 'a@a.log.test',
    to: [expect.any(String)],
    subject: expect.any(String),
    latestStatus: expect.any(String),
    domainId: expect.any(Number),
    scheduledAt: null,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });
  expect(await all({ limit: 7 })).toEqual(ids);
  expect(await all({ limit: 100 })).toEqual(ids);
  expect(ids).toHaveLength(30);
});

it('filters by status, domain, date range and search, alone and together', async () => {
  const rows = await api.deps.db.email.findMany({ where: { teamId: api.team.teamId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  const expectIds = (pred: (e: (typeof rows)[number]) => boolean) => rows.filter(pred).map((e) => e.id);
  expect(await all({ status: 'BOUNCED', limit: 3 })).toEqual(expectIds((e) => e.latestStatus === 'BOUNCED'));
  expect(await all({ status: ['BOUNCED', 'QUEUED'], limit: 4 })).toEqual(
    expectIds((e) => e.latestStatus === 'BOUNCED' || e.latestStatus === 'QUEUED'),
  );
  expect(await all({ domainId: domainB, limit: 4 })).toEqual(expectIds((e) => e.domainId === domainB));
  expect(await all({ domainId: [domainA, domainB], status: 'DELIVERED', limit: 2 })).toEqual(
    expectIds((e) => e.latestStatus === 'DELIVERED'),
  );
  const start = new Date(T0 + 3 * 60_000);
  const end = new Date(T0 + 9 * 60_000);
  expect(await all({ startDate: start.toISOString(), endDate: end.toISOString(), limit: 5 })).toEqual(
    expectIds((e) => e.createdAt >= start && e.createdAt < end),
  );
  expect(await all({ search: 'READER1', limit: 5 })).toEqual(expectIds((e) => /reader1/i.test(e.to[0])));
  expect(await all({ search: 'reader12@example.org' })).toEqual(['email012']);
  expect(await all({ search: 'order 2', status: 'QUEUED' })).toEqual(
    expectIds((e) => e.subject.startsWith('Order 2') && e.latestStatus === 'QUEUED'),
  );
  // LIKE's wildcards are plain characters in a search.
  expect(await all({ search: '100%_d' })).toEqual(['email007']);
  expect(await all({ search: '1%0' })).toEqual([]);
  expect(await all({ search: 'nothing like it' })).toEqual([]);
  // Another team's email never shows, even when it matches.
  expect(await all({ search: 'order 1' })).not.toContain('foreign');
});

it('refuses bad filters and cursors with a 400 naming the field', async () => {
  for (const [query, field] of [
    [{ status: 'LOST' }, 'status'],
    [{ domainId: 'x' }, 'domainId'],
    [{ search: 'ab' }, 'search'],
    [{ search: 'x'.repeat(201) }, 'search'],
    [{ startDate: 'yesterday' }, 'startDate'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ cursor: 'not-a-cursor' }, 'cursor'],
    [{ cursor: Buffer.from('["2026-01-01T00:00:00Z", 5]').toString('base64url') }, 'cursor'],
  ] as const) {
    const res = await b.get(url).query(query).expect(400);
    expect(res.body.error.issues[0].path[0]).toBe(field);
  }
});

it('finds emails sent through the API by subject and by recipient (the insert writes the search text)', async () => {
  const sent = await request(api.app)
    .post('/api/v1/emails')
    .set(api.team.auth)
    .send({ from: 'a@a.log.test', to: ['Grace <Grace@Hopper.dev>'], cc: ['cc@example.org'], subject: 'Quarterly Report', text: 'hi' })
    .expect(200);
  expect(await all({ search: 'grace@hopper' })).toEqual([sent.body.emailId]);
  expect(await all({ search: 'QUARTERLY rep' })).toEqual([sent.body.emailId]);
  // A whole address is an exact recipient match, whatever the display name and case.
  expect(await all({ search: ' GRACE@hopper.dev ' })).toEqual([sent.body.emailId]);
  expect(await all({ search: 'race@hopper.dev' })).toEqual([]);
  expect(await all({ search: 'cc@example.org' })).toEqual([]); // recipients are the `to` addresses
});
