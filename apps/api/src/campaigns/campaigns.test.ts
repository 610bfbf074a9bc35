import request from 'supertest';
import { seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { expectBadRequest } from '../testing/expect-bad-request';
import { newEmailId } from '@mailrail/platform/ids';
import type { CampaignEmailStatus } from '@mailrail/platform/db/generated/enums';

let api: TestApi;
let book: { id: string };
const HTML = '<p>Hi {{firstName}}</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';

beforeAll(async () => {
  // Reference instants below are absolute; the zone only matters for natural language.
  api = await startTestApi({ CAMPAIGN_TIMEZONE: 'America/New_York' });
  await api.addDomain(api.team.teamId, 'example.com');
  book = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 3, unsubscribed: 1 });
});
afterAll(() => api.close());

const post = (path: string, body: unknown, auth = api.team.auth) =>
  request(api.app)
    .post(`/api/v1/campaigns${path}`)
    .set(auth)
    .send(body as object);
const base = () => ({ name: 'News', from: 'News <news@example.com>', subject: 'Hello {{firstName}}', contactBookId: book.id, html: HTML });

describe('POST /api/v1/campaigns', () => {
  it('creates a DRAFT with every field, lists normalised, defaults for batch settings', async () => {
    const res = await post('', {
      ...base(),
      previewText: 'Preview',
      replyTo: ' reply@example.com ',
      cc: ['a@x.test', 'b@x.test'],
      bcc: 'c@x.test',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'News',
      from: 'News <news@example.com>',
      status: 'DRAFT',
      scheduledAt: null,
      batchSize: 500,
      batchWindowMinutes: 0,
      replyTo: ['reply@example.com'],
      cc: ['a@x.test', 'b@x.test'],
      bcc: ['c@x.test'],
      previewText: 'Preview',
      contactBookId: book.id,
      html: HTML,
      total: 0,
      sent: 0,
      unsubscribed: 0,
      hardBounced: 0,
    });
    const row = await api.deps.db.campaign.findUnique({ where: { id: res.body.id } });
    expect(row?.teamId).toBe(api.team.teamId);
  });

  it('schedules from natural language in CAMPAIGN_TIMEZONE, and sendNow at once', async () => {
    api.deps.clock = { now: () => new Date('2026-10-31T16:00:00Z') };
    try {
      const res = await post('', { ...base(), scheduledAt: 'tomorrow at 9am', batchSize: 100, batchWindowMinutes: 5 });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 'SCHEDULED',
        scheduledAt: '2026-11-01T14:00:00.000Z',
        batchSize: 100,
        batchWindowMinutes: 5,
      });
      const now = await post('', { ...base(), sendNow: true, scheduledAt: 'next week' });
      expect(now.body).toMatchObject({ status: 'SCHEDULED', scheduledAt: '2026-10-31T16:00:00.000Z' });
    } finally {
      api.deps.clock = { now: () => new Date() };
    }
  });

  it('renders editor JSON content to the HTML it will send', async () => {
    const content = JSON.stringify({
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [{ type: 'text', text: 'Bye', marks: [{ type: 'link', attrs: { href: '{{unsend_unsubscribe_url}}' } }] }],
        },
      ],
    });
    const { html: _html, ...noHtml } = base();
    const res = await post('', { ...noHtml, content });
    expect(res.status).toBe(200);
    expect(res.body.content).toBe(content);
    expect(res.body.html).toMatch(/<a href="\{\{unsend_unsubscribe_url\}\}"\s[^>]*>Bye<\/a>/);
  });

  it('answers 400 naming the field for bad input, and writes nothing', async () => {
    const before = await api.deps.db.campaign.count();
    expectBadRequest(await post('', { ...base(), name: '' }), ['name']);
    expectBadRequest(await post('', { ...base(), batchSize: 0 }), ['batchSize']);
    expectBadRequest(await post('', { ...base(), batchSize: 100001 }), ['batchSize']);
    expectBadRequest(await post('', { ...base(), batchWindowMinutes: -1 }), ['batchWindowMinutes']);
    const { html: _h, ...noBody } = base();
    expectBadRequest(await post('', noBody), ['html']);
    expectBadRequest(await post('', { ...base(), html: '<p>no link</p>' }), ['html']);
    expectBadRequest(await post('', { ...noBody, content: '{not json' }), ['content']);
    expectBadRequest(await post('', { ...base(), from: 'x@unknown.test' }), ['from']);
    expectBadRequest(await post('', { ...base(), contactBookId: 'nope' }), ['contactBookId']);
    const badDate = await post('', { ...base(), scheduledAt: 'when pigs fly' });
    expectBadRequest(badDate, ['scheduledAt']);
    expect(badDate.body.error.message).toMatch(/tomorrow 9am/);
    expect(await api.deps.db.campaign.count()).toBe(before);
  });

  it('validates replyTo, cc and bcc as addresses: CR LF (header injection) and non-addresses are 400s', async () => {
    const before = await api.deps.db.campaign.count();
    expectBadRequest(await post('', { ...base(), replyTo: 'a@x.example\r\nBcc: injected@evil.example' }), ['replyTo', 0]);
    expectBadRequest(await post('', { ...base(), replyTo: ['Ann\r\nBcc: injected@evil.example <a@x.example>'] }), ['replyTo', 0]);
    expectBadRequest(await post('', { ...base(), cc: ['ok@x.test', 'not-an-address'] }), ['cc', 1]);
    expectBadRequest(await post('', { ...base(), bcc: 'b@x.test\nX-Injected: 1' }), ['bcc', 0]);
    expectBadRequest(await post('', { ...base(), from: 'News\r\nBcc: injected@evil.example <news@example.com>' }), ['from']);
    expect(await api.deps.db.campaign.count()).toBe(before);
  });

  it('accepts "Name <addr>" in from, replyTo, cc and bcc, kept as given', async () => {
    const res = await post('', {
      ...base(),
      replyTo: 'Replies <reply@example.com>',
      cc: ['"Doe, Jane" <jane@x.test>'],
      bcc: 'Zoë <zoe@x.test>',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from: 'News <news@example.com>',
      replyTo: ['Replies <reply@example.com>'],
      cc: ['"Doe, Jane" <jane@x.test>'],
      bcc: ['Zoë <zoe@x.test>'],
    });
  });

  // The input that made the old address regex backtrack: how long it takes is
  // bench/hostile-input/run.ts's figure, not this machine's speed here.
  it('answers 400 for a from of 4,000 spaces then x, and caps every text field', async () => {
    expectBadRequest(await post('', { ...base(), from: `${' '.repeat(4000)}x` }), ['from']);
    const before = await api.deps.db.campaign.count();
    expectBadRequest(await post('', { ...base(), name: 'n'.repeat(256) }), ['name']);
    expectBadRequest(await post('', { ...base(), subject: 's'.repeat(999) }), ['subject']);
    expectBadRequest(await post('', { ...base(), previewText: 'p'.repeat(1001) }), ['previewText']);
    expectBadRequest(await post('', { ...base(), contactBookId: 'c'.repeat(129) }), ['contactBookId']);
    expectBadRequest(await post('', { ...base(), scheduledAt: 'tomorrow '.repeat(40) }), ['scheduledAt']);
    expectBadRequest(await post('', { ...base(), replyTo: `${'r'.repeat(999)}@example.com` }), ['replyTo']);
    expectBadRequest(
      await request(api.app)
        .get(`/api/v1/campaigns?search=${'q'.repeat(1001)}`)
        .set(api.team.auth),
      ['search'],
    );
    expect(
      (
        await request(api.app)
          .get(`/api/v1/campaigns/${'c'.repeat(129)}`)
          .set(api.team.auth)
      ).status,
    ).toBe(400);
    expect(await api.deps.db.campaign.count()).toBe(before);
  });

  it('is all-or-nothing: a schedule that cannot run leaves no DRAFT behind', async () => {
    const empty = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 0, unsubscribed: 2, pending: 1 });
    const before = await api.deps.db.campaign.count();
    const res = await post('', { ...base(), contactBookId: empty.id, sendNow: true });
    expectBadRequest(res, ['contactBookId']);
    expect(res.body.error.message).toBe('No subscribed contacts to send');
    expect(await api.deps.db.campaign.count()).toBe(before);
  });

  it("refuses another team's book (400) and a domain-bound key on another domain (403)", async () => {
    const other = await api.newTeam('Other');
    await api.addDomain(other.teamId, 'other.test');
    const res = await post('', { ...base(), from: 'a@other.test' }, other.auth);
    expectBadRequest(res, ['contactBookId']);
    const domain = await api.addDomain(api.team.teamId, 'second.test');
    const bound = await api.newKey(api.team.teamId, { domainId: domain.id });
    const forbidden = await post('', base(), { Authorization: `Bearer ${bound}` });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('FORBIDDEN');
  });
});

describe('reading, listing and the state rules', () => {
  it('lists 30 per page newest first, filters by status and searches name or subject', async () => {
    const team = await api.newTeam('Lister');
    await api.addDomain(team.teamId, 'lister.test');
    const b = await seedContactBook(api.deps.db, team.teamId, { subscribed: 1 });
    for (let i = 0; i < 32; i++) {
      const res = await post(
        '',
        { ...base(), from: 'a@lister.test', contactBookId: b.id, name: `Camp ${i}`, subject: i === 5 ? 'Black FRIDAY deals' : 'Weekly' },
        team.auth,
      );
      expect(res.status).toBe(200);
    }
    const list = (q: string) => request(api.app).get(`/api/v1/campaigns${q}`).set(team.auth);
    const first = await list('');
    expect(first.body.campaigns).toHaveLength(30);
    expect(first.body.totalPage).toBe(2);
    expect(first.body.campaigns[0].name).toBe('Camp 31');
    expect(Object.keys(first.body.campaigns[0]).sort()).toEqual(
      [
        'createdAt',
        'delivered',
        'from',
        'id',
        'name',
        'scheduledAt',
        'sent',
        'status',
        'subject',
        'total',
        'unsubscribed',
        'updatedAt',
      ].sort(),
    );
    expect((await list('?page=2')).body.campaigns).toHaveLength(2);
    expect((await list('?search=friday')).body.campaigns.map((c: { name: string }) => c.name)).toEqual(['Camp 5']);
    expect((await list('?search=CAMP 1')).body.campaigns).toHaveLength(11);
    expect((await list('?status=DRAFT')).body.campaigns).toHaveLength(30);
    expect((await list('?status=SENT')).body).toEqual({ campaigns: [], totalPage: 0 });
    expectBadRequest(await list('?status=DONE'), ['status']);
  });

  it('applies the state rules: pause from SCHEDULED/RUNNING, resume from PAUSED, no delete while RUNNING', async () => {
    const c = (await post('', base())).body;
    const act = (what: string) => post(`/${c.id}/${what}`, {});
    // DRAFT: cannot pause or resume.
    expect((await act('pause')).status).toBe(400);
    expect((await act('resume')).status).toBe(400);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await post(`/${c.id}/schedule`, { scheduledAt: future, batchSize: 7, batchWindowMinutes: 2 })).body).toEqual({ success: true });
    let row = (await request(api.app).get(`/api/v1/campaigns/${c.id}`).set(api.team.auth)).body;
    expect(row).toMatchObject({ status: 'SCHEDULED', scheduledAt: future, batchSize: 7, batchWindowMinutes: 2 });
    expect((await act('pause')).body).toEqual({ success: true });
    expect((await act('pause')).status).toBe(400);
    expect((await act('resume')).body).toEqual({ success: true });
    row = (await request(api.app).get(`/api/v1/campaigns/${c.id}`).set(api.team.auth)).body;
    expect(row.status).toBe('SCHEDULED');
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { status: 'RUNNING' } });
    const del = await request(api.app).delete(`/api/v1/campaigns/${c.id}`).set(api.team.auth);
    expect(del.status).toBe(400);
    expect(del.body.error.message).toMatch(/RUNNING/);
    expect((await post(`/${c.id}/schedule`, {})).status).toBe(400);
    expect((await act('pause')).status).toBe(200);
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { status: 'SENT' } });
    expect((await act('resume')).status).toBe(400);
    expect((await post(`/${c.id}/schedule`, {})).status).toBe(400);
    const gone = await request(api.app).delete(`/api/v1/campaigns/${c.id}`).set(api.team.auth);
    expect(gone.status).toBe(200);
    expect(gone.body.id).toBe(c.id);
    expect((await request(api.app).get(`/api/v1/campaigns/${c.id}`).set(api.team.auth)).status).toBe(404);
  });

  it('rejects an unreadable schedule with an example', async () => {
    const c = (await post('', base())).body;
    const res = await post(`/${c.id}/schedule`, { scheduledAt: 'someday maybe' });
    expectBadRequest(res, ['scheduledAt']);
    expect(res.body.error.message).toMatch(/ISO 8601/);
    expectBadRequest(await post(`/${c.id}/schedule`, { batchSize: 0 }), ['batchSize']);
  });

  it("answers 404 for another team's campaign on every route", async () => {
    const c = (await post('', base())).body;
    const other = await api.newTeam('Stranger');
    const g = (r: request.Test) => r.set(other.auth);
    expect((await g(request(api.app).get(`/api/v1/campaigns/${c.id}`))).status).toBe(404);
    for (const what of ['schedule', 'pause', 'resume']) {
      const res = await post(`/${c.id}/${what}`, {}, other.auth);
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Campaign not found' });
    }
    expect((await g(request(api.app).delete(`/api/v1/campaigns/${c.id}`))).status).toBe(404);
    expect((await g(request(api.app).get('/api/v1/campaigns'))).body.campaigns).toEqual([]);
    expect((await api.deps.db.campaign.findUnique({ where: { id: c.id } }))?.status).toBe('DRAFT');
  });

  it("answers 404 to a key bound to another domain of the team, like another team's campaign, and lists only its domain's", async () => {
    const c = (await post('', base())).body; // from example.com
    const scoped = await api.addDomain(api.team.teamId, 'scoped.test');
    const bound = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: scoped.id })}` };
    const own = (await post('', { ...base(), from: 'a@scoped.test' }, bound)).body;
    const notFound = (res: request.Response) =>
      expect([res.status, res.body.error]).toEqual([404, { code: 'NOT_FOUND', message: 'Campaign not found' }]);
    notFound(await request(api.app).get(`/api/v1/campaigns/${c.id}`).set(bound));
    notFound(await post(`/${c.id}/schedule`, {}, bound));
    notFound(await post(`/${c.id}/pause`, {}, bound));
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { status: 'PAUSED' } });
    notFound(await post(`/${c.id}/resume`, {}, bound));
    notFound(await request(api.app).delete(`/api/v1/campaigns/${c.id}`).set(bound));
    expect((await api.deps.db.campaign.findUnique({ where: { id: c.id } }))?.status).toBe('PAUSED');
    expect((await request(api.app).get('/api/v1/campaigns').set(bound)).body.campaigns.map((x: { id: string }) => x.id)).toEqual([own.id]);
    // Its own domain's campaign works as usual.
    expect((await request(api.app).get(`/api/v1/campaigns/${own.id}`).set(bound)).status).toBe(200);
    expect((await post(`/${own.id}/schedule`, { scheduledAt: '2099-01-01T00:00:00Z' }, bound)).status).toBe(200);
    expect((await post(`/${own.id}/pause`, {}, bound)).status).toBe(200);
    expect((await post(`/${own.id}/resume`, {}, bound)).status).toBe(200);
    expect((await request(api.app).delete(`/api/v1/campaigns/${own.id}`).set(bound)).status).toBe(200);
  });
});

describe('recipients by outcome', () => {
  /**
   * A SENT campaign to 8 contacts whose engine left each kind of outcome (as the worker's tests
   * show it does): 2 still in progress, 3 sent (delivered, bounced, no news), 1 suppressed, 1
   * unsubscribed after the start, 1 failed.
   */
  async function campaignWithOutcomes(): Promise<{ id: string; contact: (i: number) => string }> {
    const c = (await post('', base())).body;
    const { db } = api.deps;
    const now = new Date();
    const contact = (i: number) => `${c.id}-c${i}`;
    const email = async (latestStatus: 'DELIVERED' | 'BOUNCED' | 'SENT' | 'QUEUED' | 'FAILED') => {
      const e = await db.email.create({
        data: {
          id: newEmailId(new Date()),
          teamId: api.team.teamId,
          from: c.from,
          to: ['x@dest.test'],
          subject: 's',
          campaignId: c.id,
          latestStatus,
        },
      });
      return e.id;
    };
    const rows: { status: CampaignEmailStatus; reason?: string; emailId?: string }[] = [
      { status: 'PENDING' },
      { status: 'QUEUED', emailId: await email('QUEUED') },
      { status: 'SENT', emailId: await email('DELIVERED') },
      { status: 'SENT', emailId: await email('BOUNCED') },
      { status: 'SENT', emailId: await email('SENT') },
      { status: 'SUPPRESSED', reason: 'HARD_BOUNCE' },
      { status: 'UNSUBSCRIBED', reason: 'UNSUBSCRIBED' },
      { status: 'FAILED', reason: 'FAILED', emailId: await email('FAILED') },
    ];
    await db.campaignEmail.createMany({
      data: rows.map((r, i) => ({ campaignId: c.id, contactId: contact(i), email: `c${i}@dest.test`, ...r })),
    });
    await db.campaign.update({ where: { id: c.id }, data: { status: 'RUNNING', total: rows.length, sent: 3, recipientsReadyAt: now } });
    return { id: c.id, contact };
  }
  const get = (path: string, auth = api.team.auth) => request(api.app).get(`/api/v1/campaigns${path}`).set(auth);

  it('GET a campaign adds recipientOutcomes that add up to total, and keeps every useSend field', async () => {
    const draft = (await post('', base())).body;
    expect((await get(`/${draft.id}`)).body).toMatchObject({ total: 0, recipientOutcomes: null });
    const { id } = await campaignWithOutcomes();
    const res = await get(`/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 8, sent: 3, delivered: 0, unsubscribed: 0 });
    const o = res.body.recipientOutcomes;
    expect(o).toMatchObject({ sent: 3, suppressed: 1, unsubscribed: 1, failed: 1, inProgress: 2 });
    expect(o.sent + o.suppressed + o.unsubscribed + o.failed + o.inProgress).toBe(res.body.total);
    expect(o.skippedByReason).toMatchObject({ HARD_BOUNCE: 1, UNSUBSCRIBED: 1, FAILED: 1, COMPLAINT: 0, CONTACT_DELETED: 0, UNKNOWN: 0 });
  });

  it('lists the recipients with their outcome, filters by outcome and pages by contactId', async () => {
    const { id, contact } = await campaignWithOutcomes();
    const all = await get(`/${id}/recipients`);
    expect(all.status).toBe(200);
    expect(all.body.nextAfter).toBeNull();
    expect(all.body.recipients.map((r: { outcome: string; reason: string | null }) => [r.outcome, r.reason])).toEqual([
      ['pending', null],
      ['pending', null],
      ['delivered', null],
      ['bounced', null],
      ['sent', null],
      ['suppressed', 'HARD_BOUNCE'],
      ['unsubscribed', 'UNSUBSCRIBED'],
      ['failed', 'FAILED'],
    ]);
    expect(all.body.recipients[0]).toEqual({
      contactId: contact(0),
      email: 'c0@dest.test',
      outcome: 'pending',
      reason: null,
      emailId: null,
    });
    const only = async (outcome: string) =>
      (await get(`/${id}/recipients?outcome=${outcome}`)).body.recipients.map((r: { contactId: string }) => r.contactId);
    expect(await only('pending')).toEqual([contact(0), contact(1)]);
    expect(await only('sent')).toEqual([contact(4)]);
    expect(await only('delivered')).toEqual([contact(2)]);
    expect(await only('bounced')).toEqual([contact(3)]);
    expect(await only('complained')).toEqual([]);
    expect(await only('suppressed')).toEqual([contact(5)]);
    expect(await only('unsubscribed')).toEqual([contact(6)]);
    expect(await only('failed')).toEqual([contact(7)]);

    const seen: string[] = [];
    let after: string | null = '';
    while (after !== null) {
      const page: request.Response = await get(`/${id}/recipients?limit=3${after ? `&after=${after}` : ''}`);
      expect(page.body.recipients.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.recipients.map((r: { contactId: string }) => r.contactId));
      after = page.body.nextAfter;
    }
    expect(seen).toEqual(Array.from({ length: 8 }, (_, i) => contact(i)));
  });

  it('answers 400 in the documented shape for a bad outcome, limit or after, and 404 for another team or domain', async () => {
    const { id } = await campaignWithOutcomes();
    expectBadRequest(await get(`/${id}/recipients?outcome=lost`), ['outcome']);
    expectBadRequest(await get(`/${id}/recipients?limit=101`), ['limit']);
    expectBadRequest(await get(`/${id}/recipients?limit=0`), ['limit']);
    expectBadRequest(await get(`/${id}/recipients?after=${'x'.repeat(200)}`), ['after']);
    const other = await api.newTeam('Recipients stranger');
    const res = await get(`/${id}/recipients`, other.auth);
    expect([res.status, res.body.error]).toEqual([404, { code: 'NOT_FOUND', message: 'Campaign not found' }]);
    const scoped = await api.addDomain(api.team.teamId, 'recipients-scoped.test');
    const bound = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: scoped.id })}` };
    expect((await get(`/${id}/recipients`, bound)).status).toBe(404);
    const sending = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { permission: 'SENDING' })}` };
    expect((await get(`/${id}/recipients`, sending)).status).toBe(403);
  });
});
