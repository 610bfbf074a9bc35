import request from 'supertest';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { addUser, signIn, type Browser } from '../dashboard/testing';

// GET /api/v1/addresses/{address} ("Why didn't this arrive?", docs/deliverability.md): one address
// across the suppression list, the contact books and the email log, explained; scoped to the team,
// to a bound key's domain, closed to SENDING keys; the same answer for the dashboard's two roles.

let api: TestApi;
let teamB: TestTeam;
let d1: { id: number; name: string };
let d2: { id: number; name: string };
let member: Browser;
let admin: Browser;
let adminB: Browser;
const ids: Record<string, string> = {};

const ADDRESS = 'gone@example.org';
const get = (path: string, auth: { Authorization: string }) => request(api.app).get(`/api/v1${path}`).set(auth);

async function send(body: Record<string, unknown>): Promise<string> {
  const res = await request(api.app).post('/api/v1/emails').set(api.team.auth).send(body);
  if (res.status !== 200) throw new Error(`send → ${res.status} ${res.text}`);
  return res.body.emailId;
}

/** What SES would report for an email: the id SES gave it, then the event (as the worker's ses-events job runs it). */
async function sesEvent(emailId: string, eventType: string, detail: Record<string, unknown>) {
  await api.deps.db.email.update({ where: { id: emailId }, data: { sesEmailId: `ses-${emailId}`, latestStatus: 'SENT' } });
  const message = JSON.stringify({ eventType, mail: { messageId: `ses-${emailId}`, headers: [] }, ...detail });
  expect(await processSesEventJob({ db: api.deps.db }, { snsMessageId: `${emailId}-${eventType}`, topicArn: 'arn', message })).toBe(
    'processed',
  );
}

beforeAll(async () => {
  api = await startTestApi();
  teamB = await api.newTeam('Team B');
  d1 = await api.addDomain(api.team.teamId, 'one.addresses.test');
  d2 = await api.addDomain(api.team.teamId, 'two.addresses.test');
  const book = await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Newsletter' });
  await request(api.app).post(`/api/v1/contactBooks/${book.body.id}/contacts`).set(api.team.auth).send({ email: ADDRESS }).expect(200);
  ids.book = book.body.id;

  // Oldest first: a cc from domain 2, a campaign message, the email that bounces, the next email
  // (the address then suppressed and not sent to), and a delayed one to someone else.
  ids.cc = await send({ from: `a@${d2.name}`, to: 'someone@example.org', cc: `Gone <${ADDRESS}>`, subject: 'Copy', text: 'x' });
  const campaign = await api.deps.db.campaign.create({
    data: {
      id: `camp-${Date.now()}`,
      teamId: api.team.teamId,
      domainId: d1.id,
      name: 'December news',
      from: `n@${d1.name}`,
      subject: 'News',
    },
  });
  ids.campaign = campaign.id;
  ids.campaignEmail = await send({ from: `n@${d1.name}`, to: ADDRESS, subject: 'News', text: 'x' });
  await api.deps.db.email.update({ where: { id: ids.campaignEmail }, data: { campaignId: campaign.id } });
  await sesEvent(ids.campaignEmail, 'Delivery', { delivery: { recipients: [ADDRESS], smtpResponse: '250 ok' } });
  ids.bounced = await send({ from: `a@${d1.name}`, to: 'GONE@example.org', subject: 'Order 1', text: 'x' });
  await sesEvent(ids.bounced, 'Bounce', {
    bounce: {
      bounceType: 'Permanent',
      bounceSubType: 'General',
      bouncedRecipients: [{ emailAddress: ADDRESS, diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
    },
  });
  ids.after = await send({ from: `a@${d1.name}`, to: [ADDRESS, 'ada@example.org'], subject: 'Order 2', text: 'x' });

  const [m, a, b] = [
    await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]),
    await addUser(api, [{ teamId: api.team.teamId, role: 'ADMIN' }]),
    await addUser(api, [{ teamId: teamB.teamId, role: 'ADMIN' }]),
  ];
  [member, admin, adminB] = [await signIn(api, m.email), await signIn(api, a.email), await signIn(api, b.email)];
});
afterAll(async () => {
  await api.close();
});

it('a suppressed address after a bounce: the entry with the bounce that caused it, the contact unsubscribed, every message with its outcome explained', async () => {
  const res = await get(`/addresses/${encodeURIComponent('Gone <GONE@Example.org>')}`, api.team.auth).expect(200);
  const body = res.body;
  expect(body.address).toBe(ADDRESS);
  expect(body.suppression).toMatchObject({ reason: 'HARD_BOUNCE', causedByEmailId: ids.bounced });
  expect(body.suppression.cause).toMatchObject({ title: 'Hard bounce', action: 'suppressed', code: 'Permanent / General · 5.1.1' });
  expect(body.suppression.cause.sentence).toContain('5.1.1: the mailbox does not exist');
  expect(body.contacts).toEqual([
    expect.objectContaining({
      contactBookId: ids.book,
      contactBookName: 'Newsletter',
      subscribed: false,
      unsubscribeReason: 'BOUNCED',
      state: 'UNSUBSCRIBED',
    }),
  ]);

  const byId = Object.fromEntries(body.messages.map((m: { emailId: string }) => [m.emailId, m]));
  expect(body.messages.map((m: { emailId: string }) => m.emailId)).toEqual([ids.after, ids.bounced, ids.campaignEmail, ids.cc]);
  expect(byId[ids.after]).toMatchObject({ type: 'to', status: 'SUPPRESSED', campaign: null, statusAt: null });
  expect(byId[ids.after].explanation).toMatchObject({ title: 'Suppressed after a hard bounce', action: 'not-sent' });
  expect(byId[ids.bounced]).toMatchObject({ status: 'BOUNCED', statusAt: expect.any(String) });
  expect(byId[ids.bounced].explanation).toMatchObject({ title: 'Hard bounce', action: 'suppressed' });
  expect(byId[ids.campaignEmail]).toMatchObject({ status: 'DELIVERED', campaign: { id: ids.campaign, name: 'December news' } });
  expect(byId[ids.campaignEmail].explanation.sentence).toContain('250 ok');
  expect(byId[ids.cc]).toMatchObject({ type: 'cc', status: 'QUEUED', explanation: null });
  expect(body.nextCursor).toBeNull();
});

it('pages newest first with a cursor, bounded by limit', async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const res: request.Response = await get(`/addresses/${ADDRESS}`, api.team.auth)
      .query({ limit: 3, ...(cursor ? { cursor } : {}) })
      .expect(200);
    expect(res.body.messages.length).toBeLessThanOrEqual(3);
    seen.push(...res.body.messages.map((m: { emailId: string }) => m.emailId));
    cursor = res.body.nextCursor;
  } while (cursor);
  expect(seen).toEqual([ids.after, ids.bounced, ids.campaignEmail, ids.cc]);
});

it('an address the team never wrote to: 200 with empty sections', async () => {
  expect((await get('/addresses/nobody@example.org', api.team.auth).expect(200)).body).toEqual({
    address: 'nobody@example.org',
    suppression: null,
    contacts: [],
    messages: [],
    nextCursor: null,
  });
});

it("another team sees none of this team's data; a key bound to a domain sees that domain's messages only; a SENDING key is refused", async () => {
  const other = (await get(`/addresses/${ADDRESS}`, teamB.auth).expect(200)).body;
  expect(other).toEqual({ address: ADDRESS, suppression: null, contacts: [], messages: [], nextCursor: null });

  const bound = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: d2.id })}` };
  const own = (await get(`/addresses/${ADDRESS}`, bound).expect(200)).body;
  expect(own.messages.map((m: { emailId: string }) => m.emailId)).toEqual([ids.cc]);
  // The suppression list and contact books are team-wide; the email that caused it is domain 1's.
  expect(own.suppression).toMatchObject({ reason: 'HARD_BOUNCE', causedByEmailId: null, cause: null });
  expect(own.contacts).toHaveLength(1);

  const sending = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { permission: 'SENDING' })}` };
  expect((await get(`/addresses/${ADDRESS}`, sending).expect(403)).body.error.code).toBe('FORBIDDEN');
});

it("both dashboard roles get the API's answer; another team's admin gets 404 on this team's path", async () => {
  const viaKey = (await get(`/addresses/${ADDRESS}`, api.team.auth).expect(200)).body;
  for (const b of [member, admin]) {
    const res = await b.get(`/api/dashboard/teams/${api.team.teamId}/v1/addresses/${ADDRESS}`).expect(200);
    expect(res.body).toEqual(viaKey);
  }
  const foreign = await adminB.get(`/api/dashboard/teams/${api.team.teamId}/v1/addresses/${ADDRESS}`).expect(404);
  expect(foreign.body.error.message).toBe('Team not found');
  const ownTeam = await adminB.get(`/api/dashboard/teams/${teamB.teamId}/v1/addresses/${ADDRESS}`).expect(200);
  expect(ownTeam.body.messages).toEqual([]);
  expect(ownTeam.body.suppression).toBeNull();
});

it.each([
  ['not an address', '/addresses/not-an-address'],
  ['too long', `/addresses/${'a'.repeat(320)}@example.org`],
  ['a control character', `/addresses/${encodeURIComponent('a\nb@example.org')}`],
  ['a bad cursor', `/addresses/${ADDRESS}?cursor=nonsense`],
  ['a limit over 50', `/addresses/${ADDRESS}?limit=51`],
  ['a zero limit', `/addresses/${ADDRESS}?limit=0`],
])('400 for %s', async (_what, path) => {
  const res = await get(path, api.team.auth).expect(400);
  expect(res.body.error.code).toBe('BAD_REQUEST');
});
