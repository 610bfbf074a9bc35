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

/** Every id of the log under `query`, page after page (as `who` at `at`: this file's team by default). */
async function all(query: Record<string, unknown>, who: Browser = b, at: string = url): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await who
      .get(at)
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
    source: 'API',
    domainId: expect.any(Number),
    campaignId: null,
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
    [{ source: 'FAX' }, 'source'],
    [{ source: ['API', 'api'] }, 'source'],
    [{ campaignId: 'a b' }, 'campaignId'],
    [{ campaignId: 'c'.repeat(129) }, 'campaignId'],
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

describe('source and campaign filters', () => {
  const T1 = Date.parse('2026-11-02T00:00:00Z');
  const SOURCES = ['API', 'SMTP', 'CAMPAIGN', 'SYSTEM'] as const;
  let cols: { team: string[]; bySource: Record<string, string[]>; campaign: string[]; campaignBounced: string[] };
  let campaignId: string;
  let foreignCampaignId: string;
  let u: string;
  let bb: Browser;

  beforeAll(async () => {
    // A team of its own, so the counts above stay as they are.
    const team = await api.newTeam('Sources');
    const { email } = await addUser(api, [{ teamId: team.teamId, role: 'MEMBER' }]);
    bb = await signIn(api, email);
    u = `/api/dashboard/teams/${team.teamId}/email-log`;
    const mkCampaign = (teamId: number, id: string) =>
      api.deps.db.campaign.create({ data: { id, teamId, name: id, from: 'a@x.test', subject: 'S' } });
    campaignId = (await mkCampaign(team.teamId, 'camp-mine')).id;
    const other = await api.newTeam('Other campaigns');
    foreignCampaignId = (await mkCampaign(other.teamId, 'camp-theirs')).id;
    // 24 emails, newest last: sources in turn; every CAMPAIGN one of this team's campaign.
    for (let i = 0; i < 24; i++) {
      const source = SOURCES[i % 4];
      await api.deps.db.email.create({
        data: {
          id: `src${String(i).padStart(3, '0')}`,
          teamId: team.teamId,
          from: 'a@x.test',
          to: [`r${i}@example.org`],
          subject: `S ${i}`,
          source,
          latestStatus: i % 3 ? 'DELIVERED' : 'BOUNCED',
          campaignId: source === 'CAMPAIGN' ? campaignId : null,
          createdAt: new Date(T1 + Math.floor(i / 3) * 60_000),
        },
      });
    }
    // The other team's campaign emails: never shown here, whatever the filter.
    for (let i = 0; i < 3; i++)
      await api.deps.db.email.create({
        data: {
          id: `theirs${i}`,
          teamId: other.teamId,
          from: 'x@y.z',
          to: ['t@example.org'],
          subject: 'T',
          source: 'CAMPAIGN',
          campaignId: foreignCampaignId,
        },
      });
    const rows = await api.deps.db.email.findMany({ where: { teamId: team.teamId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    cols = {
      team: rows.map((r) => r.id),
      bySource: Object.fromEntries(SOURCES.map((s) => [s, rows.filter((r) => r.source === s).map((r) => r.id)])),
      campaign: rows.filter((r) => r.campaignId === campaignId).map((r) => r.id),
      campaignBounced: rows.filter((r) => r.campaignId === campaignId && r.latestStatus === 'BOUNCED').map((r) => r.id),
    };
  });

  const allOf = (query: Record<string, unknown>) => all(query, bb, u);

  it('filters by each source, by several, and with a status', async () => {
    for (const source of SOURCES) {
      expect(cols.bySource[source]).toHaveLength(6);
      expect(await allOf({ source, limit: 4 })).toEqual(cols.bySource[source]);
    }
    const smtpOrSystem = cols.team.filter((id) => cols.bySource.SMTP.includes(id) || cols.bySource.SYSTEM.includes(id));
    expect(await allOf({ source: ['SMTP', 'SYSTEM'], limit: 5 })).toEqual(smtpOrSystem);
    const rows = await api.deps.db.email.findMany({
      where: { id: { in: cols.bySource.SMTP } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    expect(await allOf({ source: 'SMTP', status: 'BOUNCED', limit: 1 })).toEqual(
      rows.filter((r) => r.latestStatus === 'BOUNCED').map((r) => r.id),
    );
    const page = await bb.get(u).query({ source: 'SYSTEM', limit: 1 }).expect(200);
    expect(page.body.data[0]).toMatchObject({ id: cols.bySource.SYSTEM[0], source: 'SYSTEM', campaignId: null });
  });

  it('filters by a campaign of the team, alone and with a status or a source', async () => {
    expect(cols.campaign).toEqual(cols.bySource.CAMPAIGN);
    expect(await allOf({ campaignId, limit: 4 })).toEqual(cols.campaign);
    expect(await allOf({ campaignId, status: 'BOUNCED', limit: 1 })).toEqual(cols.campaignBounced);
    expect(cols.campaignBounced.length).toBeGreaterThan(0);
    expect(await allOf({ campaignId, source: 'API' })).toEqual([]);
    const first = await bb.get(u).query({ campaignId, limit: 1 }).expect(200);
    expect(first.body.data[0]).toMatchObject({ source: 'CAMPAIGN', campaignId });
  });

  it('answers nothing for another team’s campaign or an unknown one', async () => {
    const theirs = await bb.get(u).query({ campaignId: foreignCampaignId }).expect(200);
    expect(theirs.body).toEqual({ data: [], nextCursor: null, estimatedTotal: 0 });
    expect(await allOf({ campaignId: 'no-such-campaign' })).toEqual([]);
  });

  it('gives an estimated total on the first page only, from the planner', async () => {
    await api.deps.db.$executeRawUnsafe('ANALYZE "Email"');
    const first = await bb.get(u).query({ limit: 5 }).expect(200);
    // Never less than the pages show: more than one page here.
    expect(first.body.estimatedTotal).toBeGreaterThanOrEqual(6);
    // Everything on page 1: the count is the page's.
    const whole = await bb.get(u).query({ source: 'SMTP', limit: 50 }).expect(200);
    expect(whole.body.estimatedTotal).toBe(6);
    const none = await bb.get(u).query({ source: 'SMTP', status: 'BOUNCED', campaignId, limit: 5 }).expect(200);
    expect(none.body).toMatchObject({ data: [], estimatedTotal: 0 });
    const next = await bb.get(u).query({ limit: 5, cursor: first.body.nextCursor }).expect(200);
    expect(next.body).not.toHaveProperty('estimatedTotal');
  });
});
