import request from 'supertest';
import { seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { STARTER_DOCUMENT, STARTER_HTML } from '@mailrail/domain/campaigns/campaign-starter';
import { startTestApi, type TestApi } from '../testing/api-harness';

// The pre-send check (GET /api/v1/campaigns/{id}/check) and the schedule paths that refuse its
// errors: every rule, the exact audience, the segment budget, and who may ask.

let api: TestApi;
const HTML = '<p>Hi {{firstName}}, from {{Company,fallback=us}}</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>';
const auth = () => api.team.auth;

beforeAll(async () => {
  api = await startTestApi({ SEGMENT_CONCURRENCY_PER_TEAM: '2' });
  await api.addDomain(api.team.teamId, 'presend.test');
});
afterAll(() => api.close());

let seq = 0;
/** A DRAFT in a fresh book of 5 subscribed (s1..s5, Company on s2 and s4) and 2 unsubscribed contacts. */
async function draft(fields: Record<string, unknown> = {}, counts = { subscribed: 5, unsubscribed: 2 }) {
  const book = await seedContactBook(api.deps.db, api.team.teamId, counts, { domain: `book${++seq}.test` });
  const res = await request(api.app)
    .post('/api/v1/campaigns')
    .set(auth())
    .send({
      name: 'News',
      from: 'News <news@presend.test>',
      subject: 'Hello',
      previewText: 'This week',
      contactBookId: book.id,
      html: HTML,
      ...fields,
    })
    .expect(200);
  return { id: res.body.id as string, bookId: book.id, domain: `book${seq}.test` };
}
const check = (id: string, headers = auth()) => request(api.app).get(`/api/v1/campaigns/${id}/check`).set(headers);
const schedule = (id: string, body: object = {}) => request(api.app).post(`/api/v1/campaigns/${id}/schedule`).set(auth()).send(body);
const rules = (body: { problems: { rule: string; severity: string }[] }) => body.problems.map((p) => `${p.severity}:${p.rule}`);

describe('GET /api/v1/campaigns/{id}/check', () => {
  it('a campaign with nothing wrong: ready, no problem, and the exact audience', async () => {
    const c = await draft();
    const res = await check(c.id).expect(200);
    expect(res.body).toEqual({
      ready: true,
      audience: { contactBookId: c.bookId, segmentId: null, subscribed: 5, suppressed: 0, unsubscribed: 2, recipients: 5, fixed: false },
      problems: [],
    });
  });

  it('counts suppressed addresses out of the audience, and per segment when the campaign targets one', async () => {
    const c = await draft();
    await api.deps.db.suppression.create({
      data: { id: `sup-${c.id}`, teamId: api.team.teamId, email: `s1@${c.domain}`, reason: 'HARD_BOUNCE' },
    });
    expect((await check(c.id).expect(200)).body.audience).toMatchObject({ subscribed: 5, suppressed: 1, unsubscribed: 2, recipients: 4 });

    // s1 (suppressed), s2 and u1 (unsubscribed): two subscribed, one of them suppressed.
    const filter = {
      match: 'any',
      conditions: ['s1', 's2', 'u1'].map((p) => ({ field: 'email', operator: 'startsWith', value: `${p}@` })),
    };
    const seg = await request(api.app)
      .post(`/api/v1/contactBooks/${c.bookId}/segments`)
      .set(auth())
      .send({ name: 'Few', filter })
      .expect(200);
    await request(api.app).patch(`/api/v1/campaigns/${c.id}`).set(auth()).send({ segmentId: seg.body.id }).expect(200);
    const res = await check(c.id).expect(200);
    expect(res.body.audience).toEqual({
      contactBookId: c.bookId,
      segmentId: seg.body.id,
      subscribed: 2,
      suppressed: 1,
      unsubscribed: 1,
      recipients: 1,
      fixed: false,
    });
    expect(res.body.ready).toBe(true);
  });

  it('every subscribed contact suppressed is an error, and so is a book without subscribed contacts', async () => {
    const c = await draft({}, { subscribed: 1, unsubscribed: 1 });
    await api.deps.db.suppression.create({
      data: { id: `sup-${c.id}`, teamId: api.team.teamId, email: `s1@${c.domain}`, reason: 'COMPLAINT' },
    });
    const res = await check(c.id).expect(200);
    expect(res.body.ready).toBe(false);
    expect(res.body.problems).toEqual([
      { rule: 'audience', severity: 'error', field: 'contactBookId', message: expect.stringContaining('suppression list') },
    ]);
    const empty = await draft({}, { subscribed: 0, unsubscribed: 3 });
    expect((await check(empty.id).expect(200)).body.problems).toEqual([
      { rule: 'audience', severity: 'error', field: 'contactBookId', message: 'No subscribed contacts to send' },
    ]);
  });

  it("the untouched starter text is an error (the dashboard's block starter and its HTML one); placeholder-like text is a warning", async () => {
    for (const body of [{ html: STARTER_HTML }, { html: undefined, content: STARTER_DOCUMENT }]) {
      const starter = await draft(body);
      const res = await check(starter.id).expect(200);
      expect(res.body.ready).toBe(false);
      expect(res.body.problems).toEqual([
        { rule: 'starterText', severity: 'error', field: 'html', message: expect.stringContaining('Write your message here.') },
      ]);
    }
    const lorem = await draft({ html: `<p>Lorem   ipsum dolor</p>${HTML}` });
    expect(rules((await check(lorem.id).expect(200)).body)).toEqual(['warning:placeholderText']);
  });

  it('a missing unsubscribe link, an empty subject and an unverified sender domain are errors', async () => {
    const c = await draft();
    // Written past the API's own refusals, as a campaign saved before a rule existed would be.
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { html: '<p>Hi</p>', subject: '  ' } });
    expect(rules((await check(c.id).expect(200)).body)).toEqual(['error:subject', 'error:unsubscribeLink']);

    const later = await api.addDomain(api.team.teamId, 'later.presend.test');
    const fromLater = await draft({ from: 'news@later.presend.test' });
    await api.deps.db.domain.update({ where: { id: later.id }, data: { status: 'PENDING' } });
    const res = await check(fromLater.id).expect(200);
    expect(res.body.problems).toEqual([
      { rule: 'senderDomain', severity: 'error', field: 'from', message: 'Domain: later.presend.test is not verified' },
    ]);
  });

  it('no preview text and a variable no contact has are warnings; a variable some contact has is none', async () => {
    const c = await draft({
      previewText: undefined,
      subject: 'For {{Plan}}',
      html: `<p>{{Company}} {{Tier,fallback=gold}}</p>${HTML}`,
    });
    const res = await check(c.id).expect(200);
    expect(res.body.ready).toBe(true);
    expect(res.body.problems).toEqual([
      { rule: 'previewText', severity: 'warning', field: 'previewText', message: expect.any(String) },
      { rule: 'variables', severity: 'warning', field: 'html', message: expect.stringMatching(/\{\{Plan\}\}.*no fallback/) },
      { rule: 'variables', severity: 'warning', field: 'html', message: expect.stringMatching(/\{\{Tier\}\}.*fallback/) },
    ]);
  });

  it("a variable with no fallback of its own takes the book's registry fallback: the warning says so", async () => {
    const c = await draft({ subject: 'For {{plan}}' });
    await request(api.app)
      .put(`/api/v1/contactBooks/${c.bookId}/properties`)
      .set(auth())
      .send({ properties: [{ name: 'Plan', type: 'string', fallback: 'our plan' }] })
      .expect(200);
    expect((await check(c.id).expect(200)).body.problems).toEqual([
      {
        rule: 'variables',
        severity: 'warning',
        field: 'html',
        message: 'No contact has a value for {{plan}}: every email shows its fallback',
      },
    ]);
  });

  it('another team’s key gets 404 and a SENDING key 403; unknown ids 404', async () => {
    const c = await draft();
    const other = await api.newTeam('Other presend');
    await check(c.id, other.auth).expect(404);
    await check(c.id, { Authorization: `Bearer ${await api.newKey(api.team.teamId, { permission: 'SENDING' })}` }).expect(403);
    await check('nope').expect(404);
  });

  it("past the team's segment budget the check is a 429, and another team is still answered", async () => {
    const c = await draft();
    const held = await Promise.all([1, 2].map(() => api.deps.budgets.acquire('segment', api.team.teamId)));
    try {
      const refused = await check(c.id);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect((await schedule(c.id)).status).toBe(429);
    } finally {
      await Promise.all(held.map((l) => l.release()));
    }
    await check(c.id).expect(200);
  });
});

describe('schedule and send refuse the errors only', () => {
  it('a blocking error refuses schedule with 400 and one issue per error; nothing changes', async () => {
    const c = await draft({ html: STARTER_HTML });
    await api.deps.db.campaign.update({ where: { id: c.id }, data: { subject: '' } });
    const res = await schedule(c.id, { scheduledAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'BAD_REQUEST',
      message: 'The subject is empty (and 1 more problem)',
      issues: [
        { path: ['subject'], message: 'The subject is empty' },
        { path: ['html'], message: expect.stringContaining('starter text') },
      ],
    });
    expect((await schedule(c.id, { dryRun: true })).status).toBe(400);
    expect((await api.deps.db.campaign.findUniqueOrThrow({ where: { id: c.id } })).status).toBe('DRAFT');
  });

  it('create with sendNow is refused for the starter text, before anything is written', async () => {
    const before = await api.deps.db.campaign.count();
    const book = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 2 });
    const res = await request(api.app)
      .post('/api/v1/campaigns')
      .set(auth())
      .send({ name: 'N', from: 'news@presend.test', subject: 'S', contactBookId: book.id, html: STARTER_HTML, sendNow: true });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path: ['html'], message: expect.stringContaining('starter text') }]);
    expect(await api.deps.db.campaign.count()).toBe(before);
  });

  it('a useSend client sending without preview text, with an unknown variable and lorem ipsum, is not refused', async () => {
    const book = await seedContactBook(api.deps.db, api.team.teamId, { subscribed: 2 });
    const html = '<p>Lorem ipsum {{Plan}}</p><a href="{{unsend_unsubscribe_url}}">Unsubscribe</a>';
    const created = await request(api.app)
      .post('/api/v1/campaigns')
      .set(auth())
      .send({ name: 'N', from: 'news@presend.test', subject: 'S', contactBookId: book.id, html, sendNow: true })
      .expect(200);
    expect(created.body.status).toBe('SCHEDULED');
    const c = await draft({ previewText: undefined, html });
    expect(rules((await check(c.id).expect(200)).body)).toEqual(['warning:previewText', 'warning:placeholderText', 'warning:variables']);
    expect((await schedule(c.id).expect(200)).body).toEqual({ success: true });
  });
});
