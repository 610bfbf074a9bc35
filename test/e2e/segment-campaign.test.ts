// A campaign sent to a segment: the count the API shows before sending (the segment's
// subscribedCount) is the number of recipients the worker fixes when the campaign starts, and a
// contact changed between the count and the start is taken as it is at the start. The API and the
// worker's start step (prepareRecipients) run on one database, as in production.
import request from 'supertest';
import { createSqlPool, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { prepareRecipients } from '../../apps/worker/src/campaigns/prepare-recipients';

let api: TestApi;
let sql: SqlPool;
let from: string;
const HTML = '<p>Hi</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';
const PROS = { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'pro' }] };

beforeAll(async () => {
  api = await startTestApi();
  sql = createSqlPool(api.config.DATABASE_URL, 2, () => {});
  from = `News <news@${(await api.addDomain(api.team.teamId, 'segment-campaign.test')).name}>`;
});
afterAll(async () => {
  await sql.end();
  await api.close();
});

const v1 = (path: string) => `/api/v1${path}`;

/** A book of 60 contacts: every third one on plan "pro", every fifth one unsubscribed. */
async function bookWithSegment() {
  const book = (await request(api.app).post(v1('/contactBooks')).set(api.team.auth).send({ name: 'Audience' }).expect(200)).body.id;
  const contacts = Array.from({ length: 60 }, (_, i) => ({
    email: `p${i}@example.org`,
    properties: { plan: i % 3 === 0 ? 'pro' : 'free' },
    ...(i % 5 === 0 ? { subscribed: false } : {}),
  }));
  await request(api.app)
    .post(v1(`/contactBooks/${book}/contacts/bulk`))
    .set(api.team.auth)
    .send(contacts)
    .expect(200);
  const segment = (
    await request(api.app)
      .post(v1(`/contactBooks/${book}/segments`))
      .set(api.team.auth)
      .send({ name: 'Pros', filter: PROS })
      .expect(200)
  ).body.id;
  return { book, segment };
}

async function shownCount(book: string, segment: string): Promise<number> {
  return (
    await request(api.app)
      .get(v1(`/contactBooks/${book}/segments/${segment}/contacts`))
      .set(api.team.auth)
      .expect(200)
  ).body.subscribedCount;
}

async function newCampaign(book: string, segment: string): Promise<string> {
  const res = await request(api.app)
    .post(v1('/campaigns'))
    .set(api.team.auth)
    .send({
      name: 'To pros',
      from,
      subject: 'Hi',
      html: HTML,
      contactBookId: book,
      segmentId: segment,
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    })
    .expect(200);
  expect(res.body).toMatchObject({ status: 'SCHEDULED', segmentId: segment });
  return res.body.id;
}

/** The start: what the worker's scan does once the campaign is due. */
async function start(campaignId: string) {
  await prepareRecipients({ sql }, campaignId, new Date());
  const c = await api.deps.db.campaign.findUniqueOrThrow({ where: { id: campaignId } });
  const rows = await api.deps.db.campaignEmail.findMany({ where: { campaignId }, select: { email: true } });
  return { total: c.total, emails: rows.map((r) => r.email).sort() };
}

const expectedPros = (n: number, unsubscribed: number[]) =>
  Array.from({ length: n }, (_, i) => i)
    .filter((i) => i % 3 === 0 && i % 5 !== 0 && !unsubscribed.includes(i))
    .map((i) => `p${i}@example.org`)
    .sort();

it("the count shown before sending is the number of recipients fixed at start: the segment's subscribed contacts", async () => {
  const { book, segment } = await bookWithSegment();
  const shown = await shownCount(book, segment);
  expect(shown).toBe(16); // 0, 3, ..., 57 are 20 pros; 0, 15, 30, 45 are unsubscribed
  const id = await newCampaign(book, segment);
  const started = await start(id);
  expect(started.total).toBe(shown);
  expect(started.emails).toEqual(expectedPros(60, []));
  // Starting again adds nothing.
  expect((await start(id)).total).toBe(shown);
});

it('a contact changed between the count and the start is taken as it is at the start', async () => {
  const { book, segment } = await bookWithSegment();
  const shown = await shownCount(book, segment);
  const id = await newCampaign(book, segment);
  const contactId = async (email: string) =>
    (await api.deps.db.contact.findFirstOrThrow({ where: { contactBookId: book, email }, select: { id: true } })).id;
  const contacts = (path = '') => v1(`/contactBooks/${book}/contacts${path}`);

  // After the count: a pro unsubscribes, a free contact becomes pro, a new pro arrives, a pro is deleted.
  await request(api.app)
    .patch(contacts(`/${await contactId('p3@example.org')}`))
    .set(api.team.auth)
    .send({ subscribed: false })
    .expect(200);
  await request(api.app)
    .patch(contacts(`/${await contactId('p1@example.org')}`))
    .set(api.team.auth)
    .send({ properties: { plan: 'pro' } })
    .expect(200);
  await request(api.app)
    .post(contacts())
    .set(api.team.auth)
    .send({ email: 'late@example.org', properties: { plan: 'pro' } })
    .expect(200);
  await request(api.app)
    .delete(contacts(`/${await contactId('p6@example.org')}`))
    .set(api.team.auth)
    .expect(200);

  const started = await start(id);
  const expected = [...expectedPros(60, [3, 6]), 'p1@example.org', 'late@example.org'].sort();
  expect(started.emails).toEqual(expected);
  expect(started.total).toBe(expected.length);
  expect(started.total).toBe(shown); // -2 + 2: the same number, not the same people
  expect(started.emails).not.toContain('p3@example.org');
  // The count shown now agrees with the recipients.
  expect(await shownCount(book, segment)).toBe(started.total);
  // Later changes no longer matter: the audience is fixed.
  await request(api.app)
    .patch(contacts(`/${await contactId('p2@example.org')}`))
    .set(api.team.auth)
    .send({ properties: { plan: 'pro' } })
    .expect(200);
  expect((await start(id)).emails).toEqual(expected);
});

it('a campaign without a segment still goes to every subscribed contact of the book', async () => {
  const { book } = await bookWithSegment();
  const res = await request(api.app)
    .post(v1('/campaigns'))
    .set(api.team.auth)
    .send({
      name: 'All',
      from,
      subject: 'Hi',
      html: HTML,
      contactBookId: book,
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    })
    .expect(200);
  expect(res.body.segmentId).toBeNull();
  expect((await start(res.body.id)).total).toBe(48); // 60 minus 12 unsubscribed
});
