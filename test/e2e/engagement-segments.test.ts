// Engagement segments (docs/audience.md, "Email activity"): segment conditions on deliveries, opens
// and clicks within N days and on a given campaign, through the public API (preview, counts,
// validation), the campaign start (prepareRecipients), and the one-contact evaluator automations
// use. Emails are sent through POST /api/v1/emails and their activity arrives through the real SES
// event processing (processSesEventJob, as the worker's ses-events job runs it). "Now" is a fixed
// clock given to the API, the worker step and the evaluator alike.
import request from 'supertest';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { contactMatchesFilter } from '@mailrail/domain/audience/segments/segment-sql';
import { segmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { createSqlPool, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { startTestApi, type TestApi, type TestTeam } from '../../apps/api/src/testing/api-harness';
import { expectBadRequest } from '../../apps/api/src/testing/expect-bad-request';
import { prepareRecipients } from '../../apps/worker/src/campaigns/prepare-recipients';

const DAY = 86_400_000;
const NOW = new Date(Date.UTC(2026, 11, 7, 12, 0, 0));
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

let api: TestApi;
let teamB: TestTeam;
let sql: SqlPool;
let fromA: string;
let fromB: string;
let bookA: string;
let bookB: string;
let campaignA: string;
let campaignB: string;
const v1 = (path: string) => `/api/v1${path}`;
const HTML = '<p>Hi</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';

// Team A's book: who did what (the emails are team A's unless said otherwise).
//   opened3    delivered and opened 3 days ago
//   clicked10  delivered 10 days ago, clicked 10 days ago (a click is also an open)
//   delivered2 delivered 2 days ago, nothing else
//   old100     delivered and opened 100 days ago
//   cc5        in cc of an email opened 5 days ago
//   quiet      never mailed by team A; team B's email to the same address was opened yesterday
//   campaign   opened campaign A 20 days ago (delivered too)
const PEOPLE = ['opened3', 'clicked10', 'delivered2', 'old100', 'cc5', 'quiet', 'campaign'];
const address = (name: string) => `${name}@engage.test`;

async function send(auth: { Authorization: string }, body: Record<string, unknown>): Promise<string> {
  const res = await request(api.app).post(v1('/emails')).set(auth).send(body);
  if (res.status !== 200) throw new Error(`send → ${res.status} ${res.text}`);
  return res.body.emailId;
}

let sequence = 0;
/** One SES event for the email, as SNS delivers it and the worker's ses-events job applies it. */
async function sesEvent(emailId: string, eventType: 'Delivery' | 'Open' | 'Click', at: Date, detail: Record<string, unknown> = {}) {
  const key = eventType === 'Delivery' ? 'delivery' : eventType === 'Open' ? 'open' : 'click';
  const message = JSON.stringify({
    eventType,
    mail: { messageId: `ses-${emailId}`, timestamp: at.toISOString(), headers: [{ name: 'X-Usesend-Email-ID', value: emailId }] },
    [key]: { timestamp: at.toISOString(), ...detail },
  });
  const outcome = await processSesEventJob({ db: api.deps.db }, { snsMessageId: `sns-${++sequence}`, topicArn: 'arn', message });
  expect(outcome).toBe('processed');
}

async function newBook(auth: { Authorization: string }, name: string): Promise<string> {
  const book = (await request(api.app).post(v1('/contactBooks')).set(auth).send({ name }).expect(200)).body.id as string;
  await request(api.app)
    .post(v1(`/contactBooks/${book}/contacts/bulk`))
    .set(auth)
    .send(PEOPLE.map((p) => ({ email: address(p) })))
    .expect(200);
  return book;
}

async function newCampaign(auth: { Authorization: string }, from: string, book: string, segmentId?: string): Promise<string> {
  return (
    await request(api.app)
      .post(v1('/campaigns'))
      .set(auth)
      .send({
        name: 'News',
        from,
        subject: 'Hi',
        html: HTML,
        contactBookId: book,
        ...(segmentId ? { segmentId } : {}),
        scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      })
      .expect(200)
  ).body.id;
}

beforeAll(async () => {
  api = await startTestApi({}, undefined, { clock: { now: () => NOW } });
  sql = createSqlPool(api.config.DATABASE_URL, 2, () => {});
  teamB = await api.newTeam('Team B');
  fromA = `News <news@${(await api.addDomain(api.team.teamId, 'a.engage.test')).name}>`;
  fromB = `News <news@${(await api.addDomain(teamB.teamId, 'b.engage.test')).name}>`;
  bookA = await newBook(api.team.auth, 'A');
  bookB = await newBook(teamB.auth, 'B');
  campaignA = await newCampaign(api.team.auth, fromA, bookA);
  campaignB = await newCampaign(teamB.auth, fromB, bookB);

  const to = (name: string) => ({ from: fromA, to: address(name), subject: 'Hello', text: 'x' });
  const e1 = await send(api.team.auth, to('opened3'));
  await sesEvent(e1, 'Delivery', ago(3), { recipients: [address('opened3')] });
  await sesEvent(e1, 'Open', ago(3));
  const e2 = await send(api.team.auth, to('clicked10'));
  await sesEvent(e2, 'Delivery', ago(10));
  await sesEvent(e2, 'Click', ago(10), { link: 'https://example.org' });
  const e3 = await send(api.team.auth, to('delivered2'));
  await sesEvent(e3, 'Delivery', ago(2));
  const e4 = await send(api.team.auth, to('old100'));
  await sesEvent(e4, 'Delivery', ago(100));
  await sesEvent(e4, 'Open', ago(100));
  const e5 = await send(api.team.auth, { ...to('someone-else'), cc: [`CC Person <${address('cc5')}>`] });
  await sesEvent(e5, 'Open', ago(5));
  // Team B's activity on an address team A has as a contact too: never team A's.
  const b1 = await send(teamB.auth, { from: fromB, to: address('quiet'), subject: 'Hello', text: 'x' });
  await sesEvent(b1, 'Delivery', ago(1));
  await sesEvent(b1, 'Open', ago(1));
  await sesEvent(b1, 'Click', ago(1));

  // Campaign A's message to "campaign": the recipient row the campaign start writes, and its email.
  const c1 = await send(api.team.auth, to('campaign'));
  const contact = await api.deps.db.contact.findFirstOrThrow({ where: { contactBookId: bookA, email: address('campaign') } });
  await api.deps.db.email.update({ where: { id: c1 }, data: { campaignId: campaignA } });
  await api.deps.db.campaignEmail.create({
    data: { campaignId: campaignA, contactId: contact.id, email: address('campaign'), emailId: c1, status: 'SENT' },
  });
  await sesEvent(c1, 'Delivery', ago(20));
  await sesEvent(c1, 'Open', ago(20));
}, 60_000);

afterAll(async () => {
  await sql.end();
  await api.close();
});

const one = (operator: string, value: unknown) => ({ match: 'all', conditions: [{ field: 'emailActivity', operator, value }] });

async function preview(book: string, filter: unknown, auth = api.team.auth): Promise<string[]> {
  const res = await request(api.app)
    .post(v1(`/contactBooks/${book}/segments/preview`))
    .set(auth)
    .send({ filter })
    .expect(200);
  expect(res.body.count).toBe(res.body.contacts.length);
  return (res.body.contacts as { email: string }[]).map((c) => c.email.split('@')[0]).sort();
}

it('delivered, opened and clicked within N days count the deliveries, opens and clicks of the last N days', async () => {
  expect(await preview(bookA, one('deliveredWithin', 7))).toEqual(['delivered2', 'opened3']);
  expect(await preview(bookA, one('deliveredWithin', 30))).toEqual(['campaign', 'clicked10', 'delivered2', 'opened3']);
  expect(await preview(bookA, one('openedWithin', 7))).toEqual(['cc5', 'opened3']);
  // A click is an open too.
  expect(await preview(bookA, one('openedWithin', 14))).toEqual(['cc5', 'clicked10', 'opened3']);
  expect(await preview(bookA, one('openedWithin', 365))).toEqual(['campaign', 'cc5', 'clicked10', 'old100', 'opened3']);
  expect(await preview(bookA, one('clickedWithin', 30))).toEqual(['clicked10']);
  // The win-back segment: nothing opened in 30 days.
  expect(await preview(bookA, one('notOpenedWithin', 30))).toEqual(['delivered2', 'old100', 'quiet']);
});

it('a team never matches on another team’s activity, for the same address', async () => {
  // "quiet" opened and clicked team B's email yesterday: team A sees no activity.
  expect(await preview(bookA, one('clickedWithin', 365))).not.toContain('quiet');
  expect(await preview(bookA, one('deliveredWithin', 365))).not.toContain('quiet');
  // Team B sees its own activity only.
  expect(await preview(bookB, one('openedWithin', 365), teamB.auth)).toEqual(['quiet']);
  expect(await preview(bookB, one('deliveredWithin', 365), teamB.auth)).toEqual(['quiet']);
});

it('opened and clicked a campaign match its recipients by address; another team’s campaign is refused at the field', async () => {
  expect(await preview(bookA, one('openedCampaign', campaignA))).toEqual(['campaign']);
  expect(await preview(bookA, one('clickedCampaign', campaignA))).toEqual([]);
  expect(await preview(bookA, one('notOpenedCampaign', campaignA))).toHaveLength(PEOPLE.length - 1);
  const foreign = await request(api.app)
    .post(v1(`/contactBooks/${bookA}/segments`))
    .set(api.team.auth)
    .send({
      name: 'Theirs',
      filter: { match: 'any', conditions: [{ match: 'all', conditions: [one('openedCampaign', campaignB).conditions[0]] }] },
    });
  expectBadRequest(foreign, ['filter', 'conditions', 0, 'conditions', 0, 'value']);
  expect(foreign.body.error.issues[0].message).toContain('not found');
  expectBadRequest(
    await request(api.app)
      .post(v1(`/contactBooks/${bookA}/segments/preview`))
      .set(api.team.auth)
      .send({ filter: one('clickedCampaign', 'nope') }),
    ['filter', 'conditions', 0, 'value'],
  );
});

it('refuses a look-back outside 1 to 365 whole days, a wrong value and an operator of another field, at the field', async () => {
  const post = (filter: unknown) =>
    request(api.app)
      .post(v1(`/contactBooks/${bookA}/segments/preview`))
      .set(api.team.auth)
      .send({ filter });
  for (const value of [0, 366, 1.5, '30', null])
    expectBadRequest(await post(one('openedWithin', value)), ['filter', 'conditions', 0, 'value']);
  expectBadRequest(await post(one('openedCampaign', 7)), ['filter', 'conditions', 0, 'value']);
  expectBadRequest(await post(one('equals', 'x')), ['filter', 'conditions', 0, 'operator']);
  expectBadRequest(await post({ match: 'all', conditions: [{ field: 'email', operator: 'openedWithin', value: 3 }] }), [
    'filter',
    'conditions',
    0,
    'operator',
  ]);
  // More than 10 activity conditions is over the cost budget.
  const many = { match: 'any', conditions: Array.from({ length: 11 }, (_, i) => one('openedWithin', i + 1).conditions[0]) };
  expectBadRequest(await post(many), ['filter', 'conditions']);
});

it('a saved segment counts the same, and a campaign to it starts with exactly those subscribed contacts', async () => {
  const filter = { match: 'any', conditions: [one('openedWithin', 7).conditions[0], one('clickedWithin', 30).conditions[0]] };
  const segment = (
    await request(api.app)
      .post(v1(`/contactBooks/${bookA}/segments`))
      .set(api.team.auth)
      .send({ name: 'Engaged', filter })
      .expect(200)
  ).body.id;
  const counted = await request(api.app)
    .get(v1(`/contactBooks/${bookA}/segments/${segment}/contacts`))
    .set(api.team.auth)
    .expect(200);
  expect(counted.body.subscribedCount).toBe(3);
  const id = await newCampaign(api.team.auth, fromA, bookA, segment);
  await prepareRecipients({ sql }, id, NOW);
  const rows = await api.deps.db.campaignEmail.findMany({ where: { campaignId: id }, select: { email: true } });
  expect(rows.map((r) => r.email.split('@')[0]).sort()).toEqual(['cc5', 'clicked10', 'opened3']);
});

it('contactMatchesFilter answers for one contact of the team, at the instant given, and never for another team', async () => {
  const contact = async (book: string, name: string) =>
    (await api.deps.db.contact.findFirstOrThrow({ where: { contactBookId: book, email: address(name) } })).id;
  const opened7 = segmentFilter.parse(one('openedWithin', 7));
  const scopeA = { teamId: api.team.teamId, now: NOW };
  expect(await contactMatchesFilter(sql, scopeA, await contact(bookA, 'opened3'), opened7)).toBe(true);
  expect(await contactMatchesFilter(sql, scopeA, await contact(bookA, 'clicked10'), opened7)).toBe(false);
  // Five days later the open of 3 days ago is 8 days old.
  expect(
    await contactMatchesFilter(sql, { ...scopeA, now: new Date(NOW.getTime() + 5 * DAY) }, await contact(bookA, 'opened3'), opened7),
  ).toBe(false);
  // Team B's contact "quiet" opened yesterday (team B's email): true for team B, nothing for team A's scope.
  const quietB = await contact(bookB, 'quiet');
  expect(await contactMatchesFilter(sql, { teamId: teamB.teamId, now: NOW }, quietB, opened7)).toBe(true);
  expect(await contactMatchesFilter(sql, scopeA, quietB, opened7)).toBe(false);
  expect(await contactMatchesFilter(sql, scopeA, await contact(bookA, 'quiet'), opened7)).toBe(false);
  // Other conditions work as in counts; a contact that does not exist matches nothing.
  const notOpened = segmentFilter.parse(one('notOpenedWithin', 30));
  expect(await contactMatchesFilter(sql, scopeA, await contact(bookA, 'quiet'), notOpened)).toBe(true);
  expect(await contactMatchesFilter(sql, scopeA, 'no-such-contact', notOpened)).toBe(false);
  const campaign = segmentFilter.parse(one('openedCampaign', campaignA));
  expect(await contactMatchesFilter(sql, scopeA, await contact(bookA, 'campaign'), campaign)).toBe(true);
});

it('repeated and out-of-order events keep the latest activity per address and the first open of a campaign', async () => {
  const rowOf = (name: string) =>
    api.deps.db.emailActivity.findUniqueOrThrow({ where: { teamId_address: { teamId: api.team.teamId, address: address(name) } } });
  expect((await rowOf('opened3')).lastOpenedAt).toEqual(ago(3));
  const e = await send(api.team.auth, { from: fromA, to: address('opened3'), subject: 'Again', text: 'x' });
  await sesEvent(e, 'Open', ago(1));
  await sesEvent(e, 'Open', ago(6)); // an older open arriving later changes nothing
  expect((await rowOf('opened3')).lastOpenedAt).toEqual(ago(1));
  const recipient = await api.deps.db.campaignEmail.findFirstOrThrow({ where: { campaignId: campaignA } });
  expect(recipient.openedAt).toEqual(ago(20));
  expect(recipient.clickedAt).toBeNull();
});
