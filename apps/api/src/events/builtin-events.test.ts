import request from 'supertest';
import { buildDoubleOptInUrl, buildUnsubscribeUrl } from '@mailrail/domain/audience/links';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { readEventFeed } from '@mailrail/domain/events/event-feed';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

// mailrail's own events (docs/custom-events.md#built-in-events), written through the real paths:
// contacts created, updated and unsubscribed through the API and the unsubscribe page, SES
// notifications as the worker's job applies them (each replayed once: nothing is written twice),
// and read back through GET /api/v1/events and the ordered feed.

let api: TestApi;
let team: TestTeam;
let bookA: string;
let bookB: string;
let domain: { id: number; name: string };

beforeAll(async () => {
  api = await startTestApi();
  // A team of its own: its events are only this file's.
  team = await api.newTeam('Built-in events');
  domain = await api.addDomain(team.teamId, 'builtin-events.test');
  const book = async (name: string) =>
    (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name }).expect(200)).body.id as string;
  [bookA, bookB] = [await book('A'), await book('B')];
});
afterAll(async () => {
  await api.close();
});

interface Listed {
  id: string;
  name: string;
  contactId: string;
  contactBookId: string;
  properties: Record<string, unknown>;
  source: string;
  eventId: string | null;
}

async function builtin(query: Record<string, string> = {}): Promise<Listed[]> {
  const res = await request(api.app)
    .get('/api/v1/events')
    .query({ source: 'mailrail', limit: 100, ...query })
    .set(team.auth)
    .expect(200);
  return res.body.data;
}
const names = (events: Listed[]) => events.map((e) => e.name).sort();

const addContact = async (book: string, body: Record<string, unknown>) =>
  (await request(api.app).post(`/api/v1/contactBooks/${book}/contacts`).set(team.auth).send(body).expect(200)).body.contactId as string;

async function sendEmail(to: string[]): Promise<string> {
  const res = await request(api.app)
    .post('/api/v1/emails')
    .set(team.auth)
    .send({ from: `a@${domain.name}`, to, subject: 'Hi', text: 'x' })
    .expect(200);
  const emailId = res.body.emailId as string;
  await api.deps.db.email.update({ where: { id: emailId }, data: { sesEmailId: `ses-${emailId}`, latestStatus: 'SENT' } });
  return emailId;
}

/** Applies an SES notification as the worker's job does, then replays it (SNS delivers at least once). */
async function sesNotification(snsMessageId: string, emailId: string, eventType: string, detail: Record<string, unknown>) {
  const message = JSON.stringify({ eventType, mail: { messageId: `ses-${emailId}`, headers: [] }, ...detail });
  const job = { snsMessageId, topicArn: 'arn', message };
  expect(await processSesEventJob({ db: api.deps.db }, job)).toBe('processed');
  expect(await processSesEventJob({ db: api.deps.db }, job)).toBe('duplicate');
}

describe('contact events', () => {
  it('writes contact.created and contact.subscribed once for a new contact; an upsert of it again writes none', async () => {
    const id = await addContact(bookA, { email: 'new@example.org', firstName: 'New' });
    const mine = await builtin({ contactId: id });
    expect(names(mine)).toEqual(['contact.created', 'contact.subscribed']);
    expect(mine.find((e) => e.name === 'contact.created')).toMatchObject({
      contactBookId: bookA,
      source: 'mailrail',
      properties: { email: 'new@example.org', subscribed: true },
    });
    // The same contact again (a retried request): no event.
    await request(api.app).put(`/api/v1/contactBooks/${bookA}/contacts`).set(team.auth).send({ email: 'new@example.org' });
    await addContact(bookA, { email: 'new@example.org', firstName: 'Again' });
    expect(await builtin({ contactId: id })).toHaveLength(2);
  });

  it('a contact created unsubscribed, or awaiting double opt-in, is created without contact.subscribed', async () => {
    const id = await addContact(bookA, { email: 'no@example.org', subscribed: false });
    expect(names(await builtin({ contactId: id }))).toEqual(['contact.created']);
  });

  it('a contact awaiting double opt-in gets contact.subscribed when it confirms, once however often the link is used', async () => {
    const book = (
      await request(api.app)
        .post('/api/v1/contactBooks')
        .set(team.auth)
        .send({ name: 'DOI', doubleOptInEnabled: true, doubleOptInFrom: `hello@${domain.name}` })
        .expect(200)
    ).body.id as string;
    const id = await addContact(book, { email: 'pending@example.org' });
    expect(names(await builtin({ contactId: id }))).toEqual(['contact.created']);
    const url = buildDoubleOptInUrl(api.config, id, new Date());
    const path = url.replace(/^https?:\/\/[^/]+/, '');
    const form = Object.fromEntries(new URL(url).searchParams);
    await request(api.app).post(path).type('form').send(form).expect(200);
    await request(api.app).post(path).type('form').send(form);
    expect(names(await builtin({ contactId: id }))).toEqual(['contact.created', 'contact.subscribed']);
  });

  it('writes contact.unsubscribed once when the API unsubscribes, and contact.subscribed when it re-subscribes', async () => {
    const id = await addContact(bookA, { email: 'flip@example.org' });
    const patch = (subscribed: boolean) =>
      request(api.app).patch(`/api/v1/contactBooks/${bookA}/contacts/${id}`).set(team.auth).send({ subscribed }).expect(200);
    await patch(false);
    await patch(false); // no change: no event
    await request(api.app).patch(`/api/v1/contactBooks/${bookA}/contacts/${id}`).set(team.auth).send({ firstName: 'F' }).expect(200);
    let mine = await builtin({ contactId: id });
    expect(names(mine)).toEqual(['contact.created', 'contact.subscribed', 'contact.unsubscribed']);
    expect(mine.find((e) => e.name === 'contact.unsubscribed')?.properties).toEqual({ email: 'flip@example.org', reason: 'UNSUBSCRIBED' });
    await patch(true);
    mine = await builtin({ contactId: id });
    expect(names(mine)).toEqual(['contact.created', 'contact.subscribed', 'contact.subscribed', 'contact.unsubscribed']);
  });

  it('writes contact.unsubscribed once from the unsubscribe page, pressed twice', async () => {
    const id = await addContact(bookA, { email: 'page@example.org' });
    const url = buildUnsubscribeUrl(api.config, id, null);
    const path = url.replace(/^https?:\/\/[^/]+/, '');
    const form = Object.fromEntries(new URL(url).searchParams);
    await request(api.app).post(path).type('form').send(form).expect(200);
    await request(api.app).post(path).type('form').send(form).expect(200);
    expect(names(await builtin({ contactId: id, name: 'contact.unsubscribed' }))).toEqual(['contact.unsubscribed']);
  });
});

describe('email events from SES notifications', () => {
  it("a transactional email's delivery is an event of each contact of the recipient's address, in every book, written once", async () => {
    const [inA, inB] = [await addContact(bookA, { email: 'two@example.org' }), await addContact(bookB, { email: 'two@example.org' })];
    const emailId = await sendEmail(['Two <TWO@example.org>', 'stranger@example.org']);
    await sesNotification(`sns-d-${emailId}`, emailId, 'Delivery', {
      delivery: { recipients: ['two@example.org', 'stranger@example.org'] },
    });
    const delivered = await builtin({ name: 'email.delivered' });
    const mine = delivered.filter((e) => e.properties.emailId === emailId);
    expect(mine.map((e) => e.contactId).sort()).toEqual([inA, inB].sort());
    for (const e of mine) expect(e).toMatchObject({ eventId: `ses:sns-d-${emailId}`, properties: { emailId } });
  });

  it('opens and clicks go to the contacts of the `to` addresses; a click carries its link', async () => {
    const id = await addContact(bookA, { email: 'reader@example.org' });
    const emailId = await sendEmail(['reader@example.org']);
    await sesNotification(`sns-o-${emailId}`, emailId, 'Open', { open: { ipAddress: '1.2.3.4' } });
    await sesNotification(`sns-c-${emailId}`, emailId, 'Click', { click: { link: 'https://example.org/pricing' } });
    await sesNotification(`sns-c2-${emailId}`, emailId, 'Click', { click: { link: 'https://example.org/docs' } });
    const mine = await builtin({ contactId: id });
    expect(names(mine.filter((e) => e.name.startsWith('email.')))).toEqual(['email.clicked', 'email.clicked', 'email.opened']);
    expect(
      mine
        .filter((e) => e.name === 'email.clicked')
        .map((e) => e.properties.link)
        .sort(),
    ).toEqual(['https://example.org/docs', 'https://example.org/pricing']);
  });

  it('a hard bounce writes email.bounced with its type and contact.unsubscribed (the address leaves every book), once each', async () => {
    const [inA, inB] = [await addContact(bookA, { email: 'gone@example.org' }), await addContact(bookB, { email: 'gone@example.org' })];
    const emailId = await sendEmail(['gone@example.org']);
    await sesNotification(`sns-b-${emailId}`, emailId, 'Bounce', {
      bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'gone@example.org' }] },
    });
    for (const contactId of [inA, inB]) {
      const mine = await builtin({ contactId });
      expect(names(mine)).toEqual(['contact.created', 'contact.subscribed', 'contact.unsubscribed', 'email.bounced']);
      expect(mine.find((e) => e.name === 'email.bounced')?.properties).toEqual({
        emailId,
        bounceType: 'Permanent',
        bounceSubType: 'General',
      });
      expect(mine.find((e) => e.name === 'contact.unsubscribed')?.properties).toMatchObject({ reason: 'BOUNCED' });
    }
  });

  it('a complaint writes email.complained; an event about an address that is no contact writes nothing', async () => {
    const id = await addContact(bookB, { email: 'angry@example.org' });
    const emailId = await sendEmail(['angry@example.org']);
    await sesNotification(`sns-k-${emailId}`, emailId, 'Complaint', {
      complaint: { complainedRecipients: [{ emailAddress: 'angry@example.org' }], complaintFeedbackType: 'abuse' },
    });
    expect((await builtin({ contactId: id, name: 'email.complained' }))[0].properties).toEqual({ emailId, complaintFeedbackType: 'abuse' });

    const before = await api.deps.db.event.count({ where: { teamId: team.teamId } });
    const other = await sendEmail(['nobody-known@example.org']);
    await sesNotification(`sns-n-${other}`, other, 'Delivery', { delivery: { recipients: ['nobody-known@example.org'] } });
    expect(await api.deps.db.event.count({ where: { teamId: team.teamId } })).toBe(before);
  });

  it('Send, DeliveryDelay and other kinds write no built-in event', async () => {
    const id = await addContact(bookA, { email: 'quiet@example.org' });
    const emailId = await sendEmail(['quiet@example.org']);
    await sesNotification(`sns-dd-${emailId}`, emailId, 'DeliveryDelay', { deliveryDelay: { delayType: 'MailboxFull' } });
    expect(names(await builtin({ contactId: id }))).toEqual(['contact.created', 'contact.subscribed']);
  });
});

describe('the event feed', () => {
  it("reads a team's events once each, in order, across pages", async () => {
    const sql = prismaExecutor(api.deps.db);
    const all = await api.deps.db.event.count({ where: { teamId: team.teamId } });
    const seen: string[] = [];
    let cursor: string | null = null;
    // Other databases' transactions on this server may hold the horizon back for a moment.
    for (let tries = 0; seen.length < all && tries < 600; tries++) {
      const page = await readEventFeed(sql, team.teamId, cursor, 7);
      seen.push(...page.events.map((e) => e.id));
      cursor = page.cursor;
      if (!page.events.length) await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toHaveLength(all);
    expect(new Set(seen).size).toBe(all);
    expect((await readEventFeed(sql, team.teamId, cursor, 7)).events).toEqual([]);
  });

  it('does not pass an event of a transaction still running: it is read after it commits, none skipped', async () => {
    const sql = prismaExecutor(api.deps.db);
    const contactId = await addContact(bookA, { email: 'feed@example.org' });
    const drain = async (cursor: string | null) => {
      const ids: string[] = [];
      for (;;) {
        const page = await readEventFeed(sql, team.teamId, cursor, 100);
        if (!page.events.length) return { ids, cursor };
        ids.push(...page.events.map((e) => e.id));
        cursor = page.cursor;
      }
    };
    // Every event stored so far, read (the horizon may lag a moment behind other databases' transactions).
    const stored = await api.deps.db.event.count({ where: { teamId: team.teamId } });
    let cursor: string | null = null;
    for (let read = 0, tries = 0; read < stored && tries < 600; tries++) {
      const page = await drain(cursor);
      read += page.ids.length;
      cursor = page.cursor;
      if (!page.ids.length) await new Promise((r) => setTimeout(r, 50));
    }
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // A transaction that writes an event (an earlier txid) and stays open while a later one commits.
    const slow = api.deps.db.$transaction(
      async (tx) => {
        await prismaExecutor(tx).execute(
          `INSERT INTO "Event" (id, "teamId", name, "contactId", "contactBookId", properties, source, "occurredAt", "createdAt")
           VALUES ('000slow', $1, 'slow', $2, $3, '{}', 'api', now(), now())`,
          [team.teamId, contactId, bookA],
        );
        await held;
      },
      { timeout: 30_000 },
    );
    await new Promise((r) => setTimeout(r, 200));
    await request(api.app).post('/api/v1/events').set(team.auth).send({ name: 'fast', contactId }).expect(200);
    const during = await drain(cursor);
    expect(during.ids).toEqual([]);
    release();
    await slow;
    const after: string[] = [];
    for (let tries = 0; after.length < 2 && tries < 600; tries++) {
      const page = await readEventFeed(sql, team.teamId, cursor, 100);
      after.push(...page.events.map((e) => e.name));
      cursor = page.cursor;
      if (!page.events.length) await new Promise((r) => setTimeout(r, 50));
    }
    expect(after).toEqual(['slow', 'fast']);
  });
});
