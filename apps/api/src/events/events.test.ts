import request from 'supertest';
import { bodyHash } from '@mailrail/domain/emails/idempotency';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { addUser, signIn } from '../dashboard/testing';
import { MAX_EVENTS_PER_BATCH } from './schemas';

// POST and GET /api/v1/events on the real database, with an injected clock: "now" is fixed, so
// occurredAt limits and default times are exact.

let api: TestApi;
let other: TestTeam;
let bookId: string;
let annId: string;
let otherContactId: string;
const NOW = new Date('2026-12-07T10:00:00.000Z');
const minutes = (m: number) => new Date(NOW.getTime() + m * 60_000).toISOString();

beforeAll(async () => {
  api = await startTestApi({}, undefined, { clock: { now: () => NOW } });
  other = await api.newTeam('Other');
  bookId = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Users' }).expect(200)).body.id;
  annId = (
    await request(api.app).post(`/api/v1/contactBooks/${bookId}/contacts`).set(api.team.auth).send({ email: 'ann@example.org' }).expect(200)
  ).body.contactId;
  const otherBook = (await request(api.app).post('/api/v1/contactBooks').set(other.auth).send({ name: 'Theirs' }).expect(200)).body.id;
  otherContactId = (
    await request(api.app).post(`/api/v1/contactBooks/${otherBook}/contacts`).set(other.auth).send({ email: 'zed@example.org' }).expect(200)
  ).body.contactId;
});

afterAll(() => api.close());

const post = (body: unknown, auth = api.team.auth) =>
  request(api.app)
    .post('/api/v1/events')
    .set(auth)
    .send(body as object);
const storedCount = () => api.deps.db.event.count({ where: { source: 'api' } });
const outbox = (type: string) => api.deps.db.webhookEvent.count({ where: { teamId: api.team.teamId, type } });

describe('POST /api/v1/events', () => {
  it('stores one event by contact id, with its properties, and answers its id', async () => {
    const res = await post({ name: 'user.signed_up', contactId: annId, properties: { plan: 'pro', seats: 3, tags: ['a'] } }).expect(200);
    expect(res.body).toEqual({ id: expect.stringMatching(/^000/), duplicate: false });
    const row = await api.deps.db.event.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row).toMatchObject({
      teamId: api.team.teamId,
      name: 'user.signed_up',
      contactId: annId,
      contactBookId: bookId,
      properties: { plan: 'pro', seats: 3, tags: ['a'] },
      externalId: null,
      source: 'api',
      occurredAt: NOW,
      createdAt: NOW,
    });
    const got = await request(api.app).get(`/api/v1/events/${res.body.id}`).set(api.team.auth).expect(200);
    expect(got.body).toMatchObject({
      id: res.body.id,
      eventId: null,
      name: 'user.signed_up',
      occurredAt: NOW.toISOString(),
      source: 'api',
    });
  });

  it('stores a batch in order, each with its own id', async () => {
    const res = await post({
      events: [
        { name: 'a', contactId: annId, occurredAt: minutes(-5) },
        { name: 'b', email: 'ANN@example.org', contactBookId: bookId },
      ],
    }).expect(200);
    expect(res.body.data).toHaveLength(2);
    const rows = await api.deps.db.event.findMany({ where: { id: { in: res.body.data.map((d: { id: string }) => d.id) } } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(res.body.data[0].id)).toMatchObject({ name: 'a', occurredAt: new Date(minutes(-5)) });
    expect(byId.get(res.body.data[1].id)).toMatchObject({ name: 'b', contactId: annId });
  });

  it('replays an eventId sent again with the same event, and refuses it with another event (409, nothing stored)', async () => {
    const event = { name: 'order.paid', eventId: 'order-1', contactId: annId, properties: { total: 12 } };
    const first = await post(event).expect(200);
    const before = await storedCount();
    const again = await post(event).expect(200);
    expect(again.body).toEqual({ id: first.body.id, duplicate: true });
    // Also inside a batch, beside a new event: the new one is stored, the known one answered.
    const batch = await post({ events: [{ name: 'x', contactId: annId }, event] }).expect(200);
    expect(batch.body.data[1]).toEqual({ id: first.body.id, duplicate: true });
    expect(await storedCount()).toBe(before + 1);

    const changed = await post({ ...event, properties: { total: 13 } }).expect(409);
    expect(changed.body.error).toMatchObject({
      code: 'NOT_UNIQUE',
      issues: [{ path: ['eventId'], message: 'already used with another event' }],
    });
    const mixed = await post({
      events: [
        { name: 'y', contactId: annId },
        { ...event, name: 'order.refunded' },
      ],
    }).expect(409);
    expect(mixed.body.error.issues).toEqual([{ path: ['events', 1, 'eventId'], message: 'already used with another event' }]);
    expect(await storedCount()).toBe(before + 1);

    // Twice in one batch: the same event once; two different events under one id, a 400.
    const twice = await post({
      events: [
        { ...event, eventId: 'order-2' },
        { ...event, eventId: 'order-2' },
      ],
    }).expect(200);
    expect(twice.body.data[1]).toEqual({ id: twice.body.data[0].id, duplicate: true });
    const clash = await post({
      events: [
        { ...event, eventId: 'order-3' },
        { ...event, eventId: 'order-3', name: 'z' },
      ],
    }).expect(400);
    expect(clash.body.error.issues[0].path).toEqual(['events', 1, 'eventId']);
    // Another team's eventId space is its own.
    const otherTeams = await post({ ...event, contactId: otherContactId }, other.auth).expect(200);
    expect(otherTeams.body.duplicate).toBe(false);
  });

  it('keeps the first event when two requests race on one eventId', async () => {
    const event = { name: 'race', eventId: 'race-1', contactId: annId };
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(event)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => !a.body.duplicate)).toHaveLength(1);
    expect(await api.deps.db.event.count({ where: { externalId: 'race-1' } })).toBe(1);
  });

  // The other request's key is written but not committed when this one checks its keys: this one
  // then waits on the key's row in its INSERT, and decides once the other commits.
  async function whileAnotherRequestHoldsKey(key: string, hash: string, act: () => Promise<request.Response>) {
    let answer!: Promise<request.Response>;
    await api.deps.sql.transaction(async (tx) => {
      await tx.execute(
        `INSERT INTO "EventKey" ("teamId", key, "eventId", "bodyHash", "createdAt") VALUES ($1, $2, 'winner-id', $3, now())`,
        [api.team.teamId, key, hash],
      );
      answer = act();
      void answer.catch(() => undefined);
      await waitFor(
        async () =>
          (
            await api.deps.db.$queryRawUnsafe<{ n: number }[]>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          )[0].n > 0,
        { timeoutMs: 10_000, intervalMs: 10, what: 'the request waiting on the key' },
      );
    });
    return answer;
  }

  it('answers the id of a concurrent request that stored the same eventId first, or 409 for another event, storing nothing of the batch', async () => {
    const same = { name: 'raced', eventId: 'race-same', contactId: annId };
    const replay = await whileAnotherRequestHoldsKey('race-same', bodyHash(same), () => post(same));
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ id: 'winner-id', duplicate: true });

    const before = await storedCount();
    const mine = { name: 'raced', eventId: 'race-other', contactId: annId };
    const clash = await whileAnotherRequestHoldsKey('race-other', bodyHash({ ...mine, name: 'theirs' }), () =>
      post({ events: [{ name: 'bystander', contactId: annId }, mine] }),
    );
    expect(clash.status).toBe(409);
    expect(clash.body.error.issues).toEqual([{ path: ['events', 1, 'eventId'], message: 'already used with another event' }]);
    expect(await storedCount()).toBe(before);
  });

  it('creates the contact of an unknown address only when createContact is true, through the contacts service (one contact.created)', async () => {
    const created = await outbox('contact.created');
    const refused = await post({ name: 'signup', email: 'new@example.org', contactBookId: bookId }).expect(400);
    expect(refused.body.error.issues[0].path).toEqual(['email']);
    expect(await api.deps.db.contact.count({ where: { email: 'new@example.org' } })).toBe(0);

    const res = await post({
      events: [
        { name: 'signup', email: 'new@example.org', contactBookId: bookId, createContact: true },
        { name: 'visit', email: 'new@example.org', contactBookId: bookId, createContact: true },
        { name: 'visit', email: 'ann@example.org', contactBookId: bookId, createContact: true },
      ],
    }).expect(200);
    const contact = await api.deps.db.contact.findUniqueOrThrow({
      where: { contactBookId_email: { contactBookId: bookId, email: 'new@example.org' } },
    });
    const rows = await api.deps.db.event.findMany({ where: { id: { in: res.body.data.map((d: { id: string }) => d.id) } } });
    expect(rows.map((r) => r.contactId).sort()).toEqual([annId, contact.id, contact.id].sort());
    // One contact created, and the existing one left as it was (no contact.updated).
    expect(await outbox('contact.created')).toBe(created + 1);
    expect(await api.deps.db.contact.count({ where: { contactBookId: bookId } })).toBe(2);
  });

  it("refuses an unknown contact, another team's contact and another team's book, naming each item; nothing is stored", async () => {
    const before = await storedCount();
    const res = await post({
      events: [
        { name: 'ok', contactId: annId },
        { name: 'a', contactId: 'nope' },
        { name: 'b', contactId: otherContactId },
        { name: 'c', email: 'zed@example.org', contactBookId: 'not-a-book', createContact: true },
      ],
    }).expect(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.issues).toEqual([
      { path: ['events', 1, 'contactId'], message: 'Contact not found' },
      { path: ['events', 2, 'contactId'], message: 'Contact not found' },
      { path: ['events', 3, 'contactBookId'], message: 'Contact book not found' },
    ]);
    expect(await storedCount()).toBe(before);
    expect((await post({ name: 'x', contactId: otherContactId }).expect(400)).body.error.issues[0].path).toEqual(['contactId']);
  });

  it('refuses bad names, caps, far-future times and oversized properties in the error shape, never a 500', async () => {
    const before = await storedCount();
    const nested = (depth: number): unknown => (depth === 0 ? 1 : { n: nested(depth - 1) });
    const cases: [unknown, (string | number)[]][] = [
      [{ name: 'has space', contactId: annId }, ['name']],
      [{ name: 'é', contactId: annId }, ['name']],
      [{ name: 'a'.repeat(101), contactId: annId }, ['name']],
      [{ name: 'mailrail:contact.created', contactId: annId }, ['name']],
      [{ name: 'contact.created', contactId: annId }, ['name']],
      [{ name: 'Email.Opened', contactId: annId }, ['name']],
      [{ name: 'campaign.anything', contactId: annId }, ['name']],
      [{ name: '', contactId: annId }, ['name']],
      [{ name: 'ok' }, ['contactId']],
      [{ name: 'ok', contactId: annId, email: 'ann@example.org', contactBookId: bookId }, ['contactId']],
      [{ name: 'ok', email: 'ann@example.org' }, ['contactBookId']],
      [{ name: 'ok', contactId: annId, createContact: true }, ['createContact']],
      [{ name: 'ok', contactId: annId, event: 'typo' }, []],
      [{ name: 'ok', contactId: annId, eventId: 'k'.repeat(129) }, ['eventId']],
      [{ name: 'ok', contactId: annId, occurredAt: minutes(24 * 60 + 1) }, ['occurredAt']],
      [{ name: 'ok', contactId: annId, occurredAt: 'yesterday' }, ['occurredAt']],
      [{ name: 'ok', contactId: annId, properties: { big: 'x'.repeat(17 * 1024) } }, ['properties']],
      [{ name: 'ok', contactId: annId, properties: nested(6) }, ['properties']],
      [{ name: 'ok', contactId: annId, properties: { list: Array.from({ length: 600 }, () => 0) } }, ['properties']],
      [{ name: 'ok', contactId: annId, properties: ['not', 'an', 'object'] }, ['properties']],
      [{ name: 'ok', contactId: annId, properties: { ['k'.repeat(129)]: 1 } }, ['properties']],
      [{ events: [] }, ['events']],
      [{ events: Array.from({ length: MAX_EVENTS_PER_BATCH + 1 }, () => ({ name: 'ok', contactId: annId })) }, ['events']],
      [[{ name: 'ok', contactId: annId }], []],
    ];
    const wrong: string[] = [];
    for (const [body, path] of cases) {
      const res = await post(body);
      const paths = (res.body.error?.issues ?? []).map((i: { path: unknown[] }) => i.path.join('.'));
      if (
        res.status !== 400 ||
        res.body.error.code !== 'BAD_REQUEST' ||
        (path.length && !paths.some((p: string) => p.startsWith(path.join('.'))))
      )
        wrong.push(`${JSON.stringify(body).slice(0, 80)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
    // Within the caps: 24 hours ahead exactly, five levels, a name of 100 of every allowed character.
    await post({
      name: `Aa0_.:-${'x'.repeat(93)}`,
      contactId: annId,
      occurredAt: minutes(24 * 60),
      properties: nested(4) as object,
    }).expect(200);
    // A batch with one bad item stores nothing, and names the item.
    const batch = await post({
      events: [
        { name: 'ok', contactId: annId },
        { name: 'bad name', contactId: annId },
      ],
    }).expect(400);
    expect(batch.body.error.issues[0].path).toEqual(['events', 1, 'name']);
    expect(await storedCount()).toBe(before + 1);
  });
});

describe('GET /api/v1/events', () => {
  let team: TestTeam;
  let book: string;
  let bob: string;
  let cyd: string;
  beforeAll(async () => {
    // A team of its own, so the other tests' events are not in these lists.
    team = await api.newTeam('Lister');
    book = (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'B' }).expect(200)).body.id;
    const add = async (email: string) =>
      (await request(api.app).post(`/api/v1/contactBooks/${book}/contacts`).set(team.auth).send({ email }).expect(200)).body
        .contactId as string;
    [bob, cyd] = [await add('bob@example.org'), await add('cyd@example.org')];
    await post(
      {
        events: [
          { name: 'open', contactId: bob, occurredAt: minutes(-50) },
          { name: 'click', contactId: bob, occurredAt: minutes(-40) },
          { name: 'open', contactId: cyd, occurredAt: minutes(-30) },
          { name: 'open', contactId: bob, occurredAt: minutes(-20) },
          { name: 'buy', contactId: cyd, occurredAt: minutes(-10) },
        ],
      },
      team.auth,
    ).expect(200);
  });

  const list = (query: Record<string, string | number>, auth = team.auth) => request(api.app).get('/api/v1/events').query(query).set(auth);
  const ago = (body: { data: { occurredAt: string }[] }) => body.data.map((e) => (NOW.getTime() - Date.parse(e.occurredAt)) / 60_000);

  it('lists newest first by occurredAt, filtered by name, source, contact, email and time range', async () => {
    // Adding bob and cyd wrote their built-in contact.created and contact.subscribed, now.
    expect(ago((await list({}).expect(200)).body)).toEqual([0, 0, 0, 0, 10, 20, 30, 40, 50]);
    expect((await list({ source: 'mailrail' })).body.data.map((e: { name: string }) => e.name).sort()).toEqual([
      'contact.created',
      'contact.created',
      'contact.subscribed',
      'contact.subscribed',
    ]);
    expect(ago((await list({ source: 'api' }).expect(200)).body)).toEqual([10, 20, 30, 40, 50]);
    expect(ago((await list({ name: 'open' })).body)).toEqual([20, 30, 50]);
    expect(ago((await list({ contactId: bob, source: 'api' })).body)).toEqual([20, 40, 50]);
    expect(ago((await list({ email: 'CYD@example.org', source: 'api' })).body)).toEqual([10, 30]);
    expect(ago((await list({ name: 'open', email: 'bob@example.org' })).body)).toEqual([20, 50]);
    expect(ago((await list({ startDate: minutes(-40), endDate: minutes(-10) })).body)).toEqual([20, 30, 40]);
    expect((await list({ email: 'nobody@example.org' })).body.data).toEqual([]);
  });

  it('pages by cursor without repeating or skipping an event', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: request.Response = await list({ limit: 2, source: 'api', ...(cursor ? { cursor } : {}) }).expect(200);
      seen.push(...ago(res.body));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([10, 20, 30, 40, 50]);
    expect(pages).toBe(3);
  });

  it("shows another team none of these events: empty lists, 404 by id, even filtered by this team's contact", async () => {
    const [one] = (await list({ limit: 1 })).body.data;
    await request(api.app).get(`/api/v1/events/${one.id}`).set(other.auth).expect(404);
    await request(api.app).get(`/api/v1/events/nope`).set(team.auth).expect(404);
    expect((await list({ contactId: bob }, other.auth)).body.data).toEqual([]);
    expect((await list({ email: 'bob@example.org' }, other.auth)).body.data).toEqual([]);
    // Built-in events too: the other team's list never holds this team's contacts' events.
    const theirs = (await list({ source: 'mailrail', limit: 100 }, other.auth).expect(200)).body.data as { contactId: string }[];
    expect(theirs.filter((e) => e.contactId === bob || e.contactId === cyd)).toEqual([]);
    expect((await list({ source: 'mailrail', contactId: bob }, other.auth)).body.data).toEqual([]);
  });

  it('refuses bad filters in the documented error shape', async () => {
    const bad: Record<string, string | number>[] = [
      { cursor: 'nope' },
      { limit: 1000 },
      { startDate: 'yesterday' },
      { name: 'bad name' },
      { email: 'not-an-address' },
      { source: 'webhook' },
    ];
    for (const query of bad) {
      const res = await list(query);
      expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    }
  });
});

describe('access', () => {
  it('refuses a SENDING key; a key bound to a domain records and reads team-wide', async () => {
    const sending = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { permission: 'SENDING' })}` };
    expect((await post({ name: 'x', contactId: annId }, sending)).status).toBe(403);
    expect((await request(api.app).get('/api/v1/events').set(sending)).status).toBe(403);
    const domain = await api.addDomain(api.team.teamId, 'events.example.com');
    const bound = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: domain.id })}` };
    const { id } = (await post({ name: 'bound', contactId: annId }, bound).expect(200)).body;
    await request(api.app).get(`/api/v1/events/${id}`).set(bound).expect(200);
  });

  it("counts against the team's rate limit, a batch as one request", async () => {
    const team = await api.newTeam('Rated');
    await api.deps.db.team.update({ where: { id: team.teamId }, data: { apiRateLimit: 50 } });
    const res = await post({ events: [{ name: 'x', contactId: otherContactId }] }, team.auth).expect(400);
    expect(res.headers['x-ratelimit-limit']).toBe('50');
    expect(res.headers['x-ratelimit-remaining']).toBe('49');
  });

  it('works for both dashboard roles through the team API', async () => {
    const { email: memberEmail } = await addUser(api, [{ teamId: api.team.teamId, role: 'MEMBER' }]);
    const member = await signIn(api, memberEmail);
    const base = `/api/dashboard/teams/${api.team.teamId}/v1/events`;
    const { id } = (await member.post(base, { name: 'from.dashboard', contactId: annId }).expect(200)).body;
    expect((await member.get(`${base}/${id}`).expect(200)).body.name).toBe('from.dashboard');
    expect((await member.get(base).query({ name: 'from.dashboard' }).expect(200)).body.data).toHaveLength(1);
  });
});
