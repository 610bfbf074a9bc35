import request from 'supertest';
import { buildDoubleOptInUrl } from '@mailrail/domain/audience/links';
import { queueNames } from '@mailrail/platform/queue/queues';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

let api: TestApi;
let team: TestTeam;
beforeAll(async () => {
  api = await startTestApi({ PUBLIC_URL: 'https://mail.example.test' });
  team = api.team;
  await api.addDomain(team.teamId, 'old.example.com');
  await api.addDomain(team.teamId, 'news.example.com', { region: 'eu-west-1' });
});
afterAll(async () => {
  await api.close();
});

async function newBook(body: Record<string, unknown>, t = team): Promise<string> {
  const res = await request(api.app)
    .post('/api/v1/contactBooks')
    .set(t.auth)
    .send({ name: 'DOI', doubleOptInEnabled: true, ...body });
  expect(res.status).toBe(200);
  return res.body.id;
}
const addContact = (book: string, body: Record<string, unknown>) =>
  request(api.app).post(`/api/v1/contactBooks/${book}/contacts`).set(team.auth).send(body);
const emailsTo = (address: string) => api.deps.db.email.findMany({ where: { to: { has: address } }, orderBy: { createdAt: 'asc' } });
const decode = (s: string) => s.replace(/&amp;/g, '&');

/** The confirmation link of an email body, as a relative path on the API. */
function confirmationPath(html: string): string {
  const m = /href="(https:\/\/mail\.example\.test\/subscribe\/confirm\?[^"]+)"/.exec(html);
  expect(m).not.toBeNull();
  return decode(m![1]).replace('https://mail.example.test', '');
}

describe('double opt-in', () => {
  it('creates a new contact pending and queues one confirmation through the send pipeline', async () => {
    const book = await newBook({
      doubleOptInFrom: 'News <hello@news.example.com>',
      doubleOptInSubject: 'Confirm, {{ FIRSTNAME }}',
      doubleOptInContent: '<p>Hi {{firstName}} {{lastName}} ({{email}}), <a href="{{ doubleOptInUrl }}">confirm</a></p>',
    });
    const before = Date.now();
    const res = await addContact(book, { email: 'Ann@Example.com', firstName: 'Ann', lastName: 'Lee', subscribed: true });
    expect(res.status).toBe(200);
    const contact = await api.deps.db.contact.findUniqueOrThrow({ where: { id: res.body.contactId } });
    expect(contact).toMatchObject({ subscribed: false, unsubscribeReason: null });
    expect(contact.doubleOptInSentAt).not.toBeNull();

    const [email] = await emailsTo('ann@example.com');
    const domain = await api.deps.db.domain.findFirstOrThrow({ where: { name: 'news.example.com' } });
    expect(email).toMatchObject({
      from: 'News <hello@news.example.com>',
      subject: 'Confirm, Ann',
      domainId: domain.id,
      teamId: team.teamId,
      contactId: contact.id,
      isMarketing: false,
      latestStatus: 'QUEUED',
    });
    expect(email.html).toContain('Hi Ann Lee (ann@example.com)');
    const link = new URL(`https://mail.example.test${confirmationPath(email.html!)}`);
    expect(link.searchParams.get('contactId')).toBe(contact.id);
    const expiresAt = Number(link.searchParams.get('expiresAt'));
    expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * 24 * 3600 * 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 7 * 24 * 3600 * 1000);
    expect(link.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);

    // The send job is on the transactional queue of the domain's region, keyed by the email id.
    const job = await api.deps.queues.get(queueNames.send('eu-west-1', 'transactional')).getJob(email.id);
    expect(job?.data).toEqual({ emailId: email.id });
  });

  it('sends at most one confirmation per contact per hour', async () => {
    const book = await newBook({});
    const { contactId } = (await addContact(book, { email: 'once@x.com' })).body;
    await addContact(book, { email: 'once@x.com' });
    await request(api.app)
      .post(`/api/v1/contactBooks/${book}/contacts/bulk`)
      .set(team.auth)
      .send([{ email: 'once@x.com' }]);
    await Promise.all([addContact(book, { email: 'once@x.com' }), addContact(book, { email: 'once@x.com' })]);
    expect(await emailsTo('once@x.com')).toHaveLength(1);

    await api.deps.db.contact.update({ where: { id: contactId }, data: { doubleOptInSentAt: new Date(Date.now() - 61 * 60 * 1000) } });
    await addContact(book, { email: 'once@x.com' });
    expect(await emailsTo('once@x.com')).toHaveLength(2);
  });

  it('falls back to hello@<oldest verified domain> and the default subject and content', async () => {
    const book = await newBook({});
    await addContact(book, { email: 'fallback@x.com' });
    const [email] = await emailsTo('fallback@x.com');
    expect(email.from).toBe('hello@old.example.com');
    expect(email.subject).toBe('Please confirm your subscription');
    expect(email.html).toContain('fallback@x.com');
    confirmationPath(email.html!);
  });

  it('stores an explicit subscribed:false as unsubscribed and sends nothing', async () => {
    const book = await newBook({});
    const { contactId } = (await addContact(book, { email: 'no@x.com', subscribed: false })).body;
    expect(await api.deps.db.contact.findUniqueOrThrow({ where: { id: contactId } })).toMatchObject({
      subscribed: false,
      unsubscribeReason: 'UNSUBSCRIBED',
    });
    expect(await emailsTo('no@x.com')).toHaveLength(0);
  });

  it('bulk creates in a double opt-in book leave every new contact pending with its confirmation', async () => {
    const book = await newBook({});
    const res = await request(api.app)
      .post(`/api/v1/contactBooks/${book}/contacts/bulk`)
      .set(team.auth)
      .send([{ email: 'b1@x.com' }, { email: 'b2@x.com' }]);
    expect(res.body.count).toBe(2);
    expect(await api.deps.db.contact.count({ where: { contactBookId: book, subscribed: false, unsubscribeReason: null } })).toBe(2);
    expect(await emailsTo('b1@x.com')).toHaveLength(1);
    expect(await emailsTo('b2@x.com')).toHaveLength(1);
  });

  it('records a suppressed address as SUPPRESSED and queues nothing for it', async () => {
    const book = await newBook({});
    await api.deps.db.suppression.create({ data: { id: 'sup-doi', teamId: team.teamId, email: 'blocked@x.com', reason: 'HARD_BOUNCE' } });
    await addContact(book, { email: 'blocked@x.com' });
    const [email] = await emailsTo('blocked@x.com');
    expect(email.latestStatus).toBe('SUPPRESSED');
    const domain = await api.deps.db.domain.findFirstOrThrow({ where: { name: 'old.example.com' } });
    expect(await api.deps.queues.get(queueNames.send(domain.region, 'transactional')).getJob(email.id)).toBeUndefined();
  });

  it('still stores the contact when the team has no verified domain', async () => {
    const lonely = await api.newTeam('No domain');
    const book = await newBook({}, lonely);
    const res = await request(api.app).post(`/api/v1/contactBooks/${book}/contacts`).set(lonely.auth).send({ email: 'lonely@x.com' });
    expect(res.status).toBe(200);
    expect(await api.deps.db.contact.findUniqueOrThrow({ where: { id: res.body.contactId } })).toMatchObject({
      subscribed: false,
      doubleOptInSentAt: null,
    });
    expect(await emailsTo('lonely@x.com')).toHaveLength(0);
  });
});

describe('double opt-in with a key bound to a domain', () => {
  const domainNamed = (name: string) => api.deps.db.domain.findFirstOrThrow({ where: { teamId: team.teamId, name } });
  const boundTo = async (name: string) => ({
    Authorization: `Bearer ${await api.newKey(team.teamId, { domainId: (await domainNamed(name)).id })}`,
  });
  const addWith = (auth: { Authorization: string }, book: string, email: string) =>
    request(api.app).post(`/api/v1/contactBooks/${book}/contacts`).set(auth).send({ email });

  it("sends from hello@<the key's domain>, not from the team's oldest domain", async () => {
    const book = await newBook({});
    const res = await addWith(await boundTo('news.example.com'), book, 'bound-default@x.com');
    expect(res.status).toBe(200);
    const [email] = await emailsTo('bound-default@x.com');
    expect(email).toMatchObject({ from: 'hello@news.example.com', domainId: (await domainNamed('news.example.com')).id });
  });

  it("uses the book's doubleOptInFrom only when it is on the key's domain, else hello@<the key's domain>", async () => {
    const onOld = await newBook({ doubleOptInFrom: 'Old <team@old.example.com>' });
    const onNews = await newBook({ doubleOptInFrom: 'News <team@news.example.com>' });
    const newsKey = await boundTo('news.example.com');
    await addWith(newsKey, onOld, 'bound-foreign-from@x.com');
    await addWith(newsKey, onNews, 'bound-own-from@x.com');
    expect((await emailsTo('bound-foreign-from@x.com')).map((e) => e.from)).toEqual(['hello@news.example.com']);
    expect((await emailsTo('bound-own-from@x.com')).map((e) => e.from)).toEqual(['News <team@news.example.com>']);
    // A team-wide key still follows the book.
    await addWith(team.auth, onOld, 'teamwide@x.com');
    expect((await emailsTo('teamwide@x.com')).map((e) => e.from)).toEqual(['Old <team@old.example.com>']);
  });

  it("sends nothing from another domain when the key's own domain is not verified; the contact stays pending", async () => {
    await api.addDomain(team.teamId, 'pending.example.com', { verified: false });
    const book = await newBook({});
    const res = await addWith(await boundTo('pending.example.com'), book, 'bound-unverified@x.com');
    expect(res.status).toBe(200);
    expect(await api.deps.db.contact.findUniqueOrThrow({ where: { id: res.body.contactId } })).toMatchObject({
      subscribed: false,
      doubleOptInSentAt: null,
    });
    expect(await emailsTo('bound-unverified@x.com')).toHaveLength(0);
  });
});

describe('confirmation page', () => {
  async function pendingContact(address: string) {
    const book = await newBook({});
    const { contactId } = (await addContact(book, { email: address })).body;
    const [email] = await emailsTo(address);
    return { contactId, path: confirmationPath(email.html!) };
  }
  const state = (id: string) =>
    api.deps.db.contact.findUniqueOrThrow({ where: { id }, select: { subscribed: true, unsubscribeReason: true } });

  it('GET shows a button and changes nothing; POST confirms; a second POST is harmless', async () => {
    const { contactId, path } = await pendingContact('confirm@x.com');
    const page = await request(api.app).get(path);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('<form method="post">');
    expect(page.text).toContain('Confirm subscription');
    await request(api.app).get(path);
    expect(await state(contactId)).toEqual({ subscribed: false, unsubscribeReason: null });

    // The button posts the hidden fields as a form, to the same URL.
    const q = new URL(`http://x${path}`).searchParams;
    const confirmed = await request(api.app).post(path).type('form').send(Object.fromEntries(q));
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('confirmed');
    expect(await state(contactId)).toEqual({ subscribed: true, unsubscribeReason: null });
    expect(await api.deps.db.webhookEvent.count({ where: { type: 'contact.updated', data: { path: ['id'], equals: contactId } } })).toBe(1);

    const again = await request(api.app).post('/subscribe/confirm').type('form').send(Object.fromEntries(q));
    expect(again.status).toBe(200);
    expect(await state(contactId)).toEqual({ subscribed: true, unsubscribeReason: null });
  });

  it('refuses tampered and expired links', async () => {
    const { contactId, path } = await pendingContact('tamper@x.com');
    const url = new URL(`http://x${path}`);
    const sig = url.searchParams.get('signature')!;

    const badSig = new URL(url);
    badSig.searchParams.set('signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    const otherContact = new URL(url);
    otherContact.searchParams.set('contactId', 'someoneelse0000000000000');
    const longer = new URL(url);
    longer.searchParams.set('expiresAt', String(Number(url.searchParams.get('expiresAt')) + 1000));
    const missing = new URL(url);
    missing.searchParams.delete('signature');
    for (const u of [badSig, otherContact, longer, missing]) {
      const p = `${u.pathname}${u.search}`;
      const get = await request(api.app).get(p);
      expect(get.status).toBe(400);
      expect(get.text).toContain('Invalid confirmation link');
      expect((await request(api.app).post(p).type('form').send({})).status).toBe(400);
    }

    const expired = new URL(buildDoubleOptInUrl(api.config, contactId, new Date(Date.now() - 8 * 24 * 3600 * 1000)));
    const p = `${expired.pathname}${expired.search}`;
    const res = await request(api.app).get(p);
    expect(res.status).toBe(410);
    expect(res.text).toContain('expired');
    expect((await request(api.app).post(p).type('form').send({})).status).toBe(410);
    expect(await state(contactId)).toEqual({ subscribed: false, unsubscribeReason: null });
  });

  it('does not re-subscribe an address that unsubscribed meanwhile', async () => {
    const { contactId, path } = await pendingContact('gone@x.com');
    await api.deps.db.contact.update({ where: { id: contactId }, data: { unsubscribeReason: 'UNSUBSCRIBED' } });
    expect((await request(api.app).get(path)).status).toBe(409);
    const res = await request(api.app).post(path).type('form').send({});
    expect(res.status).toBe(409);
    expect(await state(contactId)).toEqual({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
  });
});
