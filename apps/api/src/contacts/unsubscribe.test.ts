import request from 'supertest';
import { buildOneClickUnsubscribeUrl, buildUnsubscribeUrl } from '@mailrail/domain/audience/links';
import { newId } from '@mailrail/platform/ids';
import { unsubscribeEverywhere } from '@mailrail/domain/audience/unsubscribe';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { startTestApi, type TestApi } from '../testing/api-harness';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ PUBLIC_URL: 'https://mail.example.test' });
});
afterAll(async () => {
  await api.close();
});

async function newBook(teamId = api.team.teamId) {
  return api.deps.db.contactBook.create({ data: { id: newId(), teamId, name: 'Book' } });
}
async function newContact(
  contactBookId: string,
  email: string,
  data: { subscribed?: boolean; unsubscribeReason?: 'UNSUBSCRIBED' | 'BOUNCED' | null } = {},
) {
  return api.deps.db.contact.create({ data: { id: newId(), contactBookId, email, ...data } });
}
async function newCampaign(contactBookId: string, teamId = api.team.teamId) {
  return api.deps.db.campaign.create({ data: { id: newId(), teamId, name: 'C', from: 'a@x.com', subject: 'S', contactBookId } });
}
const pathOf = (url: string) => url.replace('https://mail.example.test', '');
const contactState = (id: string) =>
  api.deps.db.contact.findUniqueOrThrow({ where: { id }, select: { subscribed: true, unsubscribeReason: true } });
const unsubscribedCount = async (id: string) => (await api.deps.db.campaign.findUniqueOrThrow({ where: { id } })).unsubscribed;

describe('unsubscribe page', () => {
  it('GET shows a button without changing anything; the button unsubscribes and counts once', async () => {
    const book = await newBook();
    const contact = await newContact(book.id, 'page@x.com');
    const campaign = await newCampaign(book.id);
    const url = buildUnsubscribeUrl(api.config, contact.id, campaign.id);
    expect(url).toMatch(/^https:\/\/mail\.example\.test\/unsubscribe\?c=[0-9a-z]+&cid=[0-9a-z]+&sig=[0-9a-f]{64}$/);

    const page = await request(api.app).get(pathOf(url));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post">');
    expect(await contactState(contact.id)).toEqual({ subscribed: true, unsubscribeReason: null });

    const q = Object.fromEntries(new URL(url).searchParams);
    const done = await request(api.app).post(pathOf(url)).type('form').send(q);
    expect(done.status).toBe(200);
    expect(done.text).toContain('unsubscribed');
    expect(await contactState(contact.id)).toEqual({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
    expect(await unsubscribedCount(campaign.id)).toBe(1);

    // Clicking again, or the page afterwards, changes nothing more.
    await request(api.app).post('/unsubscribe').type('form').send(q);
    expect(await unsubscribedCount(campaign.id)).toBe(1);
    expect((await request(api.app).get(pathOf(url))).text).toContain('You are unsubscribed');
    expect(await api.deps.db.webhookEvent.count({ where: { type: 'contact.updated', data: { path: ['id'], equals: contact.id } } })).toBe(
      1,
    );
  });

  it('refuses links whose signature does not match the contact and campaign', async () => {
    const book = await newBook();
    const contact = await newContact(book.id, 'sig@x.com');
    const campaign = await newCampaign(book.id);
    const url = new URL(buildUnsubscribeUrl(api.config, contact.id, campaign.id));
    const forged: Record<string, string>[] = [
      { ...Object.fromEntries(url.searchParams), cid: 'anothercampaign' },
      { ...Object.fromEntries(url.searchParams), c: 'anothercontact' },
      { ...Object.fromEntries(url.searchParams), sig: '0'.repeat(64) },
      { c: contact.id, cid: campaign.id },
    ];
    for (const q of forged) {
      const qs = new URLSearchParams(q).toString();
      expect((await request(api.app).get(`/unsubscribe?${qs}`)).status).toBe(400);
      expect((await request(api.app).post(`/unsubscribe?${qs}`).type('form').send({})).status).toBe(400);
      expect((await request(api.app).post(`/unsubscribe/one-click?${qs}`).type('form').send('List-Unsubscribe=One-Click')).status).toBe(
        400,
      );
    }
    expect(await contactState(contact.id)).toEqual({ subscribed: true, unsubscribeReason: null });
  });
});

describe('RFC 8058 one-click', () => {
  it('unsubscribes on POST List-Unsubscribe=One-Click and answers 200', async () => {
    const book = await newBook();
    const contact = await newContact(book.id, 'oneclick@x.com');
    const campaign = await newCampaign(book.id);
    const url = buildOneClickUnsubscribeUrl(api.config, contact.id, campaign.id);
    expect(url).toContain('/unsubscribe/one-click?');
    const res = await request(api.app)
      .post(pathOf(url))
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Successfully unsubscribed' });
    expect(await contactState(contact.id)).toEqual({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
    expect(await unsubscribedCount(campaign.id)).toBe(1);

    const again = await request(api.app).post(pathOf(url)).type('form').send('List-Unsubscribe=One-Click');
    expect(again.status).toBe(200);
    expect(await unsubscribedCount(campaign.id)).toBe(1);
  });

  it('a one-click POST to the page URL works too; a GET of the one-click URL changes nothing', async () => {
    const book = await newBook();
    const contact = await newContact(book.id, 'either@x.com');
    const campaign = await newCampaign(book.id);
    expect((await request(api.app).get(pathOf(buildOneClickUnsubscribeUrl(api.config, contact.id, campaign.id)))).status).toBe(404);
    expect(await contactState(contact.id)).toEqual({ subscribed: true, unsubscribeReason: null });
    const res = await request(api.app)
      .post(pathOf(buildUnsubscribeUrl(api.config, contact.id, campaign.id)))
      .type('form')
      .send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);
    expect(await contactState(contact.id)).toEqual({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
  });

  it('does not count a pending or already unsubscribed contact on the campaign', async () => {
    const book = await newBook();
    const campaign = await newCampaign(book.id);
    const pending = await newContact(book.id, 'pending@x.com', { subscribed: false });
    const bounced = await newContact(book.id, 'bounced@x.com', { subscribed: false, unsubscribeReason: 'BOUNCED' });
    for (const c of [pending, bounced]) {
      const res = await request(api.app)
        .post(pathOf(buildOneClickUnsubscribeUrl(api.config, c.id, campaign.id)))
        .type('form')
        .send('List-Unsubscribe=One-Click');
      expect(res.status).toBe(200);
    }
    expect(await contactState(pending.id)).toEqual({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
    expect(await contactState(bounced.id)).toEqual({ subscribed: false, unsubscribeReason: 'BOUNCED' });
    expect(await unsubscribedCount(campaign.id)).toBe(0);
  });

  it('counts concurrent one-clicks of the same link once', async () => {
    const book = await newBook();
    const contact = await newContact(book.id, 'race@x.com');
    const campaign = await newCampaign(book.id);
    const path = pathOf(buildOneClickUnsubscribeUrl(api.config, contact.id, campaign.id));
    const all = await Promise.all(
      Array.from({ length: 5 }, () => request(api.app).post(path).type('form').send('List-Unsubscribe=One-Click')),
    );
    expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await unsubscribedCount(campaign.id)).toBe(1);
  });

  it('answers 404 for a deleted contact', async () => {
    const res = await request(api.app)
      .post(pathOf(buildOneClickUnsubscribeUrl(api.config, 'deletedcontact', null)))
      .type('form')
      .send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(404);
  });
});

describe('unsubscribeEverywhere (hard bounces and complaints)', () => {
  it('unsubscribes the address in every book of the team only, counting the campaign once', async () => {
    const other = await api.newTeam('Other');
    const [b1, b2, b3] = [await newBook(), await newBook(), await newBook(other.teamId)];
    const c1 = await newContact(b1.id, 'hard@x.com');
    const c2 = await newContact(b2.id, 'hard@x.com', { subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
    const c3 = await newContact(b3.id, 'hard@x.com');
    const bystander = await newContact(b1.id, 'fine@x.com');
    const campaign = await newCampaign(b1.id);

    const res = await unsubscribeEverywhere(prismaExecutor(api.deps.db), api.team.teamId, ['HARD@x.com'], 'BOUNCED', {
      campaignId: campaign.id,
      contactId: c1.id,
    });
    expect(res.contactIds).toEqual([c1.id]);
    expect(await contactState(c1.id)).toEqual({ subscribed: false, unsubscribeReason: 'BOUNCED' });
    // An earlier reason is kept; other teams and other addresses are untouched.
    expect(await contactState(c2.id)).toEqual({ subscribed: false, unsubscribeReason: 'UNSUBSCRIBED' });
    expect(await contactState(c3.id)).toEqual({ subscribed: true, unsubscribeReason: null });
    expect(await contactState(bystander.id)).toEqual({ subscribed: true, unsubscribeReason: null });
    expect(await unsubscribedCount(campaign.id)).toBe(1);
    const events = await api.deps.db.webhookEvent.findMany({ where: { data: { path: ['id'], equals: c1.id } } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'contact.updated',
      teamId: api.team.teamId,
      data: { unsubscribeReason: 'BOUNCED', subscribed: false },
    });

    const again = await unsubscribeEverywhere(prismaExecutor(api.deps.db), api.team.teamId, ['hard@x.com'], 'COMPLAINED', {
      campaignId: campaign.id,
      contactId: c1.id,
    });
    expect(again.contactIds).toEqual([]);
    expect(await unsubscribedCount(campaign.id)).toBe(1);
    expect((await unsubscribeEverywhere(prismaExecutor(api.deps.db), api.team.teamId, ['nobody@x.com'], 'COMPLAINED')).contactIds).toEqual(
      [],
    );
  });
});
