import request from 'supertest';
import { seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { startTestApi, type TestApi } from '../testing/api-harness';

// One sender-domain rule (packages/domain/src/domains/sender-domain.ts) serves emails, batch,
// campaigns and contact-book double opt-in: each refusal is answered the same way wherever the
// routes document the same answer.

let api: TestApi;
let bookId: string;
type Auth = { Authorization: string };
let boundAuth: Auth;
const team = () => api.team.auth;

beforeAll(async () => {
  api = await startTestApi();
  await api.addDomain(api.team.teamId, 'verified.org');
  await api.addDomain(api.team.teamId, 'pending.org', { verified: false });
  const brand = await api.addDomain(api.team.teamId, 'brand.org');
  boundAuth = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: brand.id })}` };
  bookId = (await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 1, unsubscribed: 0 })).id;
});
afterAll(() => api.close());

const sendEmail = (from: string, auth: Auth) =>
  request(api.app).post('/api/v1/emails').set(auth).send({ from, to: 'a@dest.org', subject: 'S', text: 'T' });
const sendBatch = (from: string, auth: Auth) =>
  request(api.app)
    .post('/api/v1/emails/batch')
    .set(auth)
    .send([{ from, to: 'a@dest.org', subject: 'S', text: 'T' }]);
const createCampaign = (from: string, auth: Auth) =>
  request(api.app).post('/api/v1/campaigns').set(auth).send({
    name: 'N',
    from,
    subject: 'S',
    contactBookId: bookId,
    html: '<a href="{{usesend_unsubscribe_url}}">u</a>',
  });
const createBook = (doubleOptInFrom: string, auth: Auth) =>
  request(api.app).post('/api/v1/contactBooks').set(auth).send({ name: 'B', doubleOptInFrom });

const refusals: [string, string, () => Auth, number, string][] = [
  ['an unknown domain', 'News <news@unknown.org>', team, 400, 'Domain: unknown.org not found. Add it and verify it before sending'],
  ['an unverified domain', 'news@pending.org', team, 400, 'Domain: pending.org is not verified'],
  ['a key bound to another domain', 'news@verified.org', () => boundAuth, 403, 'API key does not have access to domain: verified.org'],
];

describe.each(refusals)('sending from %s', (_what, from, auth, status, message) => {
  it('is refused alike by a single email and by a campaign', async () => {
    const [email, campaign] = await Promise.all([sendEmail(from, auth()), createCampaign(from, auth())]);
    expect(email.status).toBe(status);
    expect(email.body.error.message).toBe(message);
    expect(campaign.status).toBe(email.status);
    expect(campaign.body).toEqual(email.body);
  });

  it('is refused by a batch with the same message, indexed', async () => {
    const res = await sendBatch(from, auth());
    expect(res.status).toBe(status);
    expect(res.body.error.message).toBe(status === 403 ? message : `Invalid email at index 0: ${message}`);
  });

  it('is, for a double opt-in sender, the one 400 on doubleOptInFrom', async () => {
    const res = await createBook(from, auth());
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'Invalid request body: doubleOptInFrom: must use a verified domain of your team',
      issues: [{ path: ['doubleOptInFrom'], message: 'must use a verified domain of your team' }],
    });
  });
});

it('accepts a verified domain of the team everywhere (and the bound key on its own domain)', async () => {
  expect((await sendEmail('news@verified.org', team())).status).toBe(200);
  expect((await createCampaign('News <news@VERIFIED.org>', team())).status).toBe(200);
  expect((await createBook('news@verified.org', team())).status).toBe(200);
  expect((await sendEmail('news@brand.org', boundAuth)).status).toBe(200);
  expect((await createCampaign('news@brand.org', boundAuth)).status).toBe(200);
  expect((await createBook('news@brand.org', boundAuth)).status).toBe(200);
});
