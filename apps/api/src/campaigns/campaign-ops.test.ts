import request from 'supertest';
import { verifyUnsubscribeLink } from '@mailrail/domain/audience/links';
import { createRequire } from 'node:module';
import type * as HtmlToText from 'html-to-text';
import { seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { expectBadRequest } from '../testing/expect-bad-request';

// Campaign operations for the editor: ramp, PATCH, preview, test send, dry-run schedule.

let api: TestApi;
let book: { id: string };
const HTML = '<p>Hi {{firstName}} of {{Company,fallback=nowhere}}</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';

beforeAll(async () => {
  // Renders on the event loop: the size cap test watches html-to-text in this process. The same
  // renderer runs on a thread in production (render-pool.test.ts).
  api = await startTestApi({ CAMPAIGN_TIMEZONE: 'America/New_York', PREVIEW_RENDER_THREADS: '0' });
  await api.addDomain(api.team.teamId, 'example.com');
  book = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 3, unsubscribed: 1 }, { domain: 'people.test' });
});
afterAll(() => api.close());

const send = (method: 'post' | 'patch' | 'get', path: string, body?: unknown, auth = api.team.auth) =>
  request(api.app)
    [method](`/api/v1/campaigns${path}`)
    .set(auth)
    .send(body as object);
const base = () => ({ name: 'News', from: 'News <news@example.com>', subject: 'Hello {{firstName}}', contactBookId: book.id, html: HTML });
const create = async (extra: object = {}) => {
  const res = await send('post', '', { ...base(), ...extra });
  expect(res.status).toBe(200);
  return res.body as { id: string };
};
const row = (id: string) => api.deps.db.campaign.findUniqueOrThrow({ where: { id } });
const contact1 = () => `${book.id}_s0000001`;

describe('ramp', () => {
  it('is stored and answered on create, schedule and PATCH, and null turns it off', async () => {
    const res = await send('post', '', { ...base(), batchWindowMinutes: 60, ramp: { start: 50, factor: 2 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ramp: { start: 50, factor: 2 }, window: null });
    const id = res.body.id;
    expect(await row(id)).toMatchObject({ rampStart: 50, rampFactor: 2 });

    expect((await send('patch', `/${id}`, { ramp: { start: 10, factor: 1.5 } })).body.ramp).toEqual({ start: 10, factor: 1.5 });
    expect((await send('post', `/${id}/schedule`, { scheduledAt: '2099-01-01T00:00:00Z', ramp: null })).status).toBe(200);
    expect(await row(id)).toMatchObject({ rampStart: null, rampFactor: null, status: 'SCHEDULED' });
    expect((await send('get', `/${id}`)).body.ramp).toBeNull();
    expect((await send('post', '', base())).body.ramp).toBeNull();
  });

  it('answers 400 naming the field for a bad ramp, and for a ramp without windows', async () => {
    for (const ramp of [{ start: 0, factor: 2 }, { start: 1.5, factor: 2 }, { start: 100001, factor: 2 }, { start: 5 }, 'fast', 3]) {
      const res = await send('post', '', { ...base(), batchWindowMinutes: 5, ramp });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.error.issues)).toContain('ramp');
    }
    for (const factor of [1, 10.5, '2', null]) {
      expectBadRequest(await send('post', '', { ...base(), batchWindowMinutes: 5, ramp: { start: 5, factor } }), ['ramp', 'factor']);
    }
    const noWindow = await send('post', '', { ...base(), ramp: { start: 5, factor: 2 } });
    expectBadRequest(noWindow, ['ramp']);
    expect(noWindow.body.error.message).toMatch(/batchWindowMinutes/);
    // The check is on the result: a PATCH that removes the windows of a ramped campaign is refused.
    const c = await create({ batchWindowMinutes: 5, ramp: { start: 5, factor: 2 } });
    expectBadRequest(await send('patch', `/${c.id}`, { batchWindowMinutes: 0 }), ['ramp']);
    expectBadRequest(await send('post', `/${c.id}/schedule`, { batchWindowMinutes: 0 }), ['ramp']);
    expect(await row(c.id)).toMatchObject({ batchWindowMinutes: 5, status: 'DRAFT' });
  });

  it('answers the window the engine opened last, with the time the next may open', async () => {
    const c = await create({ batchWindowMinutes: 30, batchSize: 100, ramp: { start: 2, factor: 3 } });
    await api.deps.db.campaign.update({
      where: { id: c.id },
      data: { status: 'RUNNING', lastSentAt: new Date('2026-11-24T09:00:00Z'), windowNumber: 2, windowSize: 18 },
    });
    expect((await send('get', `/${c.id}`)).body.window).toEqual({
      number: 2,
      size: 18,
      startedAt: '2026-11-24T09:00:00.000Z',
      nextAt: '2026-11-24T09:30:00.000Z',
    });
  });
});

describe('windowPlan', () => {
  it('answers planned against actual per window once the audience is fixed, and null before or without windows', async () => {
    const c = await create({ batchWindowMinutes: 30, batchSize: 100, ramp: { start: 1, factor: 2 } });
    expect((await send('get', `/${c.id}`)).body.windowPlan).toBeNull();
    // As the engine leaves it after two windows: 3 recipients, window 0 sent 1, window 1 sent 1 of 2.
    await api.deps.db.campaign.update({
      where: { id: c.id },
      data: { status: 'RUNNING', total: 3, recipientsReadyAt: new Date('2026-11-24T08:00:00Z'), windowNumber: 1, windowSize: 2 },
    });
    await api.deps.db.campaignWindow.createMany({
      data: [
        { campaignId: c.id, number: 0, size: 1, queued: 1, openedAt: new Date('2026-11-24T08:00:00Z') },
        { campaignId: c.id, number: 1, size: 2, queued: 1, openedAt: new Date('2026-11-24T08:30:00Z') },
      ],
    });
    expect((await send('get', `/${c.id}`)).body.windowPlan).toEqual({
      rows: [
        { number: 0, planned: 1, sent: 1, openedAt: '2026-11-24T08:00:00.000Z' },
        { number: 1, planned: 2, sent: 1, openedAt: '2026-11-24T08:30:00.000Z' },
        { number: 2, planned: 1, sent: null, openedAt: null },
      ],
      more: 0,
    });
    const plain = await create();
    await api.deps.db.campaign.update({ where: { id: plain.id }, data: { status: 'RUNNING', total: 3, recipientsReadyAt: new Date() } });
    expect((await send('get', `/${plain.id}`)).body.windowPlan).toBeNull();
  });
});

describe('PATCH /api/v1/campaigns/{campaignId}', () => {
  it('edits the fields given, renders content as create does, and keeps the others', async () => {
    const c = await create({ previewText: 'Pre', replyTo: 'r@example.com' });
    const content = JSON.stringify({
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: 'New body' }] },
        {
          type: 'paragraph',
          content: [{ type: 'text', text: 'Leave', marks: [{ type: 'link', attrs: { href: '{{usesend_unsubscribe_url}}' } }] }],
        },
      ],
    });
    const res = await send('patch', `/${c.id}`, {
      name: 'Renamed',
      subject: 'New subject',
      previewText: null,
      content,
      batchSize: 7,
      batchWindowMinutes: 3,
      cc: ['cc@x.test'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      subject: 'New subject',
      previewText: null,
      content,
      batchSize: 7,
      batchWindowMinutes: 3,
      cc: ['cc@x.test'],
      replyTo: ['r@example.com'],
      from: 'News <news@example.com>',
      status: 'DRAFT',
    });
    expect(res.body.html).toContain('New body');
    // html alone replaces content.
    expect((await send('patch', `/${c.id}`, { html: HTML })).body).toMatchObject({ html: HTML, content: null });
  });

  it('checks like create: 400 naming the field, and nothing changes', async () => {
    const c = await create();
    const stranger = await api.newTeam('Book owner');
    const foreignBook = await seedContactBook(api.deps.db, stranger.teamId, { subscribed: 1 });
    expectBadRequest(await send('patch', `/${c.id}`, { contactBookId: foreignBook.id }), ['contactBookId']);
    expectBadRequest(await send('patch', `/${c.id}`, { html: '<p>no link</p>' }), ['html']);
    expectBadRequest(await send('patch', `/${c.id}`, { content: '{not json' }), ['content']);
    expectBadRequest(await send('patch', `/${c.id}`, { from: 'not an address' }), ['from']);
    expectBadRequest(await send('patch', `/${c.id}`, { from: 'a@unverified.test' }), ['from']);
    expectBadRequest(await send('patch', `/${c.id}`, { name: '' }), ['name']);
    expectBadRequest(await send('patch', `/${c.id}`, { subject: 'x'.repeat(999) }), ['subject']);
    expectBadRequest(await send('patch', `/${c.id}`, { batchSize: 0 }), ['batchSize']);
    expectBadRequest(await send('patch', `/${c.id}`, { replyTo: 'a@b.test\r\nBcc: x@y.test' }), ['replyTo', 0]);
    expect((await send('patch', `/${c.id}`, 'nonsense')).status).toBe(400);
    expect(await row(c.id)).toMatchObject({ name: 'News', html: HTML, contactBookId: book.id, batchSize: 500 });
  });

  it('a new from moves the campaign to that domain; a key bound to another domain gets 403', async () => {
    const other = await api.addDomain(api.team.teamId, 'moved.test');
    const c = await create();
    expect((await send('patch', `/${c.id}`, { from: 'a@moved.test' })).status).toBe(200);
    expect((await row(c.id)).domainId).toBe(other.id);
    const bound = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: other.id })}` };
    const res = await send('patch', `/${c.id}`, { from: 'a@example.com' }, bound);
    expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await row(c.id)).from).toBe('a@moved.test');
  });

  it('is 409 once the campaign runs, is paused, sent, or started before; 404 for another team', async () => {
    const c = await create();
    for (const status of ['RUNNING', 'PAUSED', 'SENT'] as const) {
      await api.deps.db.campaign.update({ where: { id: c.id }, data: { status } });
      const res = await send('patch', `/${c.id}`, { name: 'No' });
      expect([res.status, res.body.error.code]).toEqual([409, 'NOT_UNIQUE']);
      expect(res.body.error.message).toContain(status);
    }
    // Paused, then scheduled again: its audience is fixed and part of it has mail.
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { status: 'SCHEDULED', recipientsReadyAt: new Date() } });
    expect((await send('patch', `/${c.id}`, { name: 'No' })).status).toBe(409);
    expect((await row(c.id)).name).toBe('News');

    const scheduled = await create({ scheduledAt: '2099-01-01T00:00:00Z' });
    expect((await send('patch', `/${scheduled.id}`, { name: 'Yes' })).body).toMatchObject({ name: 'Yes', status: 'SCHEDULED' });
    const stranger = await api.newTeam('Stranger');
    const res = await send('patch', `/${scheduled.id}`, { name: 'Theirs' }, stranger.auth);
    expect([res.status, res.body.error]).toEqual([404, { code: 'NOT_FOUND', message: 'Campaign not found' }]);
  });
});

describe('POST /api/v1/campaigns/{campaignId}/preview', () => {
  it("renders for the book's first contact: personalization resolved, preheader, text part and a working unsubscribe link", async () => {
    const c = await create({ previewText: 'Sneak peek' });
    const res = await send('post', `/${c.id}/preview`, {});
    expect(res.status).toBe(200);
    expect(res.body.contact).toEqual({ id: contact1(), email: 's1@people.test' });
    expect(res.body.subject).toBe('Hello First1');
    expect(res.body.html).toContain('Hi First1 of nowhere');
    expect(res.body.html).toContain('Sneak peek');
    expect(res.body.text).toContain('Hi First1 of nowhere');
    const href = /href="([^"]+)"/.exec(res.body.html)![1].replace(/&amp;/g, '&');
    const url = new URL(href);
    expect(url.pathname).toBe('/unsubscribe');
    expect(verifyUnsubscribeLink(api.config, Object.fromEntries(url.searchParams))).toEqual({ contactId: contact1(), campaignId: c.id });
  });

  it('renders the unsaved editor text for the contact asked for', async () => {
    const c = await create();
    const res = await send('post', `/${c.id}/preview`, {
      contactId: `${book.id}_s0000002`,
      subject: 'Draft for {{firstName}} <{{email}}>',
      html: '<p>{{Company}} & {{lastName,fallback=friend}}</p>{{unsend_unsubscribe_url}}',
    });
    expect(res.status).toBe(200);
    expect(res.body.subject).toBe('Draft for First2 <s2@people.test>');
    expect(res.body.html).toMatch(/^<p>Co2 & friend<\/p>http/);
    expect((await row(c.id)).subject).toBe('Hello {{firstName}}'); // nothing saved
  });

  it("fills a variable without its own fallback from the book's property registry, for the contact without a value", async () => {
    const registered = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 2 }, { domain: 'registry.test' });
    await api.deps.db.contactProperty.createMany({
      data: [
        { contactBookId: registered.id, name: 'company', type: 'STRING', fallback: 'your company' },
        { contactBookId: registered.id, name: 'plan', type: 'STRING', fallback: null },
      ],
    });
    const c = await create({ contactBookId: registered.id });
    const html = '<p>{{Company}} / {{company,fallback=own}} / {{plan}}</p>{{usesend_unsubscribe_url}}';
    const without = await send('post', `/${c.id}/preview`, { contactId: `${registered.id}_s0000001`, html, subject: 'At {{company}}' });
    expect(without.status).toBe(200);
    expect(without.body.subject).toBe('At your company');
    expect(without.body.html).toMatch(/^<p>your company \/ own \/ \{\{plan\}\}<\/p>/);
    expect(without.body.text).toContain('your company / own');
    const withValue = await send('post', `/${c.id}/preview`, { contactId: `${registered.id}_s0000002`, html });
    expect(withValue.body.html).toMatch(/^<p>Co2 \/ Co2 \/ /);
  });

  it('answers 400 for a contact outside the book and bad overrides; an empty book previews with no contact', async () => {
    const c = await create();
    const elsewhere = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 1 });
    expectBadRequest(await send('post', `/${c.id}/preview`, { contactId: `${elsewhere.id}_s0000001` }), ['contactId']);
    expectBadRequest(await send('post', `/${c.id}/preview`, { content: '{"type":' }), ['content']);
    expectBadRequest(await send('post', `/${c.id}/preview`, { subject: 'x'.repeat(999) }), ['subject']);
    expectBadRequest(await send('post', `/${c.id}/preview`, { contactId: 'c'.repeat(129) }), ['contactId']);

    const empty = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 0 });
    const d = await create({ contactBookId: empty.id });
    const res = await send('post', `/${d.id}/preview`, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ contact: null, subject: 'Hello ' });
    expect(res.body.html).toContain('Hi  of nowhere');
  });
});

describe('preview size (CAMPAIGN_PREVIEW_MAX_MB, 2 by default)', () => {
  const overCap = 'x'.repeat(2 * 1024 * 1024);
  const hugeHtml = `<p>${overCap}</p>{{unsend_unsubscribe_url}}`;
  const hugeContent = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: overCap }] }] });

  it('answers 413 for a given or stored body over the cap, preview and test send alike, without converting it', async () => {
    // The library as core's html-to-text.ts loads it (Node's own require, not jest's registry).
    const convert = jest.spyOn(
      createRequire(require.resolve('@mailrail/domain/render/html-to-text'))('html-to-text') as typeof HtmlToText,
      'convert',
    );
    try {
      const c = await create();
      const answers = [
        await send('post', `/${c.id}/preview`, { html: hugeHtml }),
        await send('post', `/${c.id}/preview`, { content: hugeContent }),
      ];
      await api.deps.db.campaign.update({ where: { id: c.id }, data: { html: hugeHtml } });
      answers.push(await send('post', `/${c.id}/preview`, {}), await send('post', `/${c.id}/test`, { to: ['me@example.org'] }));
      for (const [i, res] of answers.entries()) {
        expect([i, res.status, res.body.error.code]).toEqual([i, 413, 'PAYLOAD_TOO_LARGE']);
        expect(res.body.error.message).toMatch(/at most 2 MB \(CAMPAIGN_PREVIEW_MAX_MB\)/);
      }
      expect(convert).not.toHaveBeenCalled();
      // Just under the cap still previews.
      const fits = await send('post', `/${c.id}/preview`, { html: `<p>${'y'.repeat(1024 * 1024)}</p>` });
      expect(fits.status).toBe(200);
      expect(convert).toHaveBeenCalledTimes(1);
    } finally {
      convert.mockRestore();
    }
  });
});

describe('preview budget (PREVIEW_CONCURRENCY_PER_TEAM)', () => {
  it("answers 429 in the error shape while the team's places are taken, another team still previews, and a freed place previews again", async () => {
    const c = await create();
    const other = await api.newTeam('Previewers');
    await api.addDomain(other.teamId, 'other-preview.test');
    const otherBook = await seedContactBook(api.deps.db, other.teamId, { subscribed: 1 }, { domain: 'other-people.test' });
    const created = await request(api.app)
      .post('/api/v1/campaigns')
      .set(other.auth)
      .send({ name: 'N', from: 'n@other-preview.test', subject: 'S', contactBookId: otherBook.id, html: HTML });
    expect(created.status).toBe(200);
    // Every place of the team held, as long renders of its own would hold them.
    const held = await Promise.all(
      Array.from({ length: api.config.PREVIEW_CONCURRENCY_PER_TEAM }, () => api.deps.budgets.acquire('preview', api.team.teamId)),
    );
    try {
      const refused = await send('post', `/${c.id}/preview`, {});
      expect([refused.status, refused.body.error?.code, refused.headers['retry-after']]).toEqual([429, 'RATE_LIMITED', '1']);
      expect((await send('post', `/${c.id}/test`, { to: ['me@example.org'] })).status).toBe(429);
      // Refused before its body is read: a body that is not even JSON gets the 429, not a 400, so
      // a team over its budget cannot make the API parse megabytes of preview body.
      const unread = await request(api.app)
        .post(`/api/v1/campaigns/${c.id}/preview`)
        .set(api.team.auth)
        .set('content-type', 'application/json')
        .send(`{"html": "${'<p>x</p>'.repeat(1000)}`);
      expect(unread.status).toBe(429);
      const otherTeam = await request(api.app).post(`/api/v1/campaigns/${created.body.id}/preview`).set(other.auth).send({});
      expect(otherTeam.status).toBe(200);
    } finally {
      await Promise.all(held.map((lease) => lease.release()));
    }
    expect((await send('post', `/${c.id}/preview`, {})).status).toBe(200);
    // With a place free, the same body is read and refused as every JSON body is.
    const malformed = await request(api.app)
      .post(`/api/v1/campaigns/${c.id}/preview`)
      .set(api.team.auth)
      .set('content-type', 'application/json')
      .send('{"html": "');
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, 'BAD_REQUEST']);
  });
});

describe('POST /api/v1/campaigns/{campaignId}/test', () => {
  it('sends one email per address through the email path, rendered for the contact, subject prefixed', async () => {
    const c = await create({ replyTo: 'reply@example.com' });
    const res = await send('post', `/${c.id}/test`, {
      to: ['me@example.org', 'Boss <boss@example.org>'],
      contactId: `${book.id}_s0000002`,
    });
    expect(res.status).toBe(200);
    expect(res.body.emailIds).toHaveLength(2);
    const emails = await api.deps.db.email.findMany({ where: { id: { in: res.body.emailIds } }, orderBy: { createdAt: 'asc' } });
    expect(emails.map((e) => e.to[0]).sort()).toEqual(['Boss <boss@example.org>', 'me@example.org']);
    for (const e of emails) {
      expect(e).toMatchObject({
        subject: '[Test] Hello First2',
        from: 'News <news@example.com>',
        replyTo: ['reply@example.com'],
        campaignId: null,
      });
      expect(e.html).toContain('Hi First2 of Co2');
    }
    expect((await row(c.id)).status).toBe('DRAFT');
  });

  it('applies the checks of POST /api/v1/emails: suppressions, and an unverified sender domain', async () => {
    const c = await create();
    await api.deps.db.suppression.create({
      data: { id: 'sup-test', teamId: api.team.teamId, email: 'gone@example.org', reason: 'MANUAL' },
    });
    const res = await send('post', `/${c.id}/test`, { to: 'gone@example.org' });
    expect(res.status).toBe(200);
    const [email] = await api.deps.db.email.findMany({ where: { id: res.body.emailIds[0] } });
    expect(email.latestStatus).toBe('SUPPRESSED');

    const later = await api.addDomain(api.team.teamId, 'later.test');
    const e = await create({ from: 'x@later.test' });
    await api.deps.db.domain.update({ where: { id: later.id }, data: { status: 'FAILED' } });
    const refused = await send('post', `/${e.id}/test`, { to: 'me@example.org' });
    expectBadRequest(refused, [0, 'from']);
    expect(refused.body.error.message).toMatch(/later\.test/);
  });

  it('answers 400 for bad recipients and writes nothing', async () => {
    const c = await create();
    const before = await api.deps.db.email.count();
    expectBadRequest(
      await send('post', `/${c.id}/test`, { to: ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test', 'f@x.test'] }),
      ['to'],
    );
    expectBadRequest(await send('post', `/${c.id}/test`, { to: 'not an address' }), ['to']);
    expectBadRequest(await send('post', `/${c.id}/test`, { to: [] }), ['to']);
    expectBadRequest(await send('post', `/${c.id}/test`, {}), ['to']);
    expectBadRequest(await send('post', `/${c.id}/test`, { to: 'a@x.test', contactId: 'missing' }), ['contactId']);
    expect(await api.deps.db.email.count()).toBe(before);
  });
});

describe('POST /api/v1/campaigns/{campaignId}/schedule with dryRun', () => {
  it('answers the time the real schedule resolves to, in the team time zone, and changes nothing', async () => {
    api.deps.clock = { now: () => new Date('2026-10-31T16:00:00Z') };
    try {
      const c = await create();
      const dry = await send('post', `/${c.id}/schedule`, { scheduledAt: 'tomorrow at 9am', dryRun: true });
      // 9am in New York on 2026-11-01, the day its clocks go back: EST, UTC-5.
      expect(dry.status).toBe(200);
      expect(dry.body).toEqual({ scheduledAt: '2026-11-01T14:00:00.000Z', timeZone: 'America/New_York' });
      expect(await row(c.id)).toMatchObject({ status: 'DRAFT', scheduledAt: null });
      expect((await send('post', `/${c.id}/schedule`, { scheduledAt: 'tomorrow at 9am' })).body).toEqual({ success: true });
      expect((await row(c.id)).scheduledAt?.toISOString()).toBe(dry.body.scheduledAt);
      expect((await send('post', `/${c.id}/schedule`, { dryRun: true })).body.scheduledAt).toBe('2026-10-31T16:00:00.000Z');
    } finally {
      api.deps.clock = { now: () => new Date() };
    }
  });

  it('runs every check of a real schedule: bad dates, bad states, no recipients', async () => {
    const c = await create();
    expectBadRequest(await send('post', `/${c.id}/schedule`, { scheduledAt: 'when pigs fly', dryRun: true }), ['scheduledAt']);
    expectBadRequest(await send('post', `/${c.id}/schedule`, { dryRun: 'yes' }), ['dryRun']);
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { status: 'SENT' } });
    expect((await send('post', `/${c.id}/schedule`, { dryRun: true })).status).toBe(400);
    const empty = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 0 });
    const d = await create({ contactBookId: empty.id });
    const res = await send('post', `/${d.id}/schedule`, { dryRun: true });
    expect(res.body.error.message).toBe('No subscribed contacts to send');
  });
});
