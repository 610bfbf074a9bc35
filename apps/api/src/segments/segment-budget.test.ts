import request from 'supertest';
import { seedContacts } from '@mailrail/testing/contact-seed';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';

// Segment evaluation cannot take the pool that requests and sends need: a filter over its cost
// budget is refused before it runs (400), a team evaluates at most SEGMENT_CONCURRENCY_PER_TEAM
// filters at once (one more: 429), and they run on the heavy pool. Counted in outcomes and in
// PostgreSQL backends, never in time.

const PER_TEAM = 2;
const CONTACTS = 30_000;

let api: TestApi;
let book: string;
let bystander: TestTeam;
let bystanderBook: string;

beforeAll(async () => {
  api = await startTestApi({
    SEGMENT_CONCURRENCY_PER_TEAM: String(PER_TEAM),
    SEGMENT_CONCURRENCY: '6',
    HEAVY_DB_POOL_SIZE: '3',
    DATABASE_POOL_SIZE: '5',
    // Long enough that no preview here is stopped: what is counted is how many run at once.
    SEGMENT_PREVIEW_TIMEOUT_MS: '120000',
    SEGMENT_QUERY_TIMEOUT_MS: '120000',
  });
  book = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Big' }).expect(200)).body.id;
  await seedContacts((text, params) => api.deps.sql.execute(text, params), book, CONTACTS);
  await api.deps.sql.execute(
    `UPDATE "Contact" SET properties = properties || jsonb_build_object('bio', repeat('b', 10000)) WHERE id IN (
    SELECT id FROM "Contact" WHERE "contactBookId" = $1 ORDER BY id LIMIT 30)`,
    [book],
  );
  bystander = await api.newTeam('Bystander');
  await api.addDomain(bystander.teamId, 'bystander.example');
  bystanderBook = (await request(api.app).post('/api/v1/contactBooks').set(bystander.auth).send({ name: 'Small' }).expect(200)).body.id;
  await request(api.app)
    .post(`/api/v1/contactBooks/${bystanderBook}/contacts/bulk`)
    .set(bystander.auth)
    .send([{ email: 'one@example.com' }])
    .expect(200);
}, 120_000);
afterAll(() => api?.close());

const preview = (team: TestTeam, bookId: string, filter: unknown) =>
  request(api.app).post(`/api/v1/contactBooks/${bookId}/segments/preview`).set(team.auth).send({ filter });

// The review's filter: 20 groups of 20 `contains` conditions, each a distinct 1,000-character value,
// on a property 30 contacts hold as 10,000 characters.
const reviewFilter = {
  match: 'all',
  conditions: Array.from({ length: 20 }, (_, g) => ({
    match: 'any',
    conditions: Array.from({ length: 20 }, (_, i) => ({
      field: 'properties.bio',
      operator: 'contains',
      value: `${g}-${i}-`.padEnd(1000, 'b'),
    })),
  })),
};
// Costly but within the budget: 100 short matches per contact, all joined by OR (none short-circuits).
const costlyAllowed = {
  match: 'any',
  conditions: Array.from({ length: 5 }, (_, g) => ({
    match: 'any',
    conditions: Array.from({ length: 20 }, (_, i) => ({ field: 'properties.city', operator: 'contains', value: `no-city-${g}-${i}` })),
  })),
};
const cheap = { match: 'all', conditions: [{ field: 'email', operator: 'equals', value: 'one@example.com' }] };

describe('cost budget of a filter', () => {
  it("refuses the review's filter with 400 on preview, create and update, before evaluating it", async () => {
    const expectTooCostly = (res: request.Response) => {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('too costly') });
    };
    expectTooCostly(await preview(api.team, book, reviewFilter));
    expectTooCostly(
      await request(api.app)
        .post(`/api/v1/contactBooks/${book}/segments`)
        .set(api.team.auth)
        .send({ name: 'Costly', filter: reviewFilter }),
    );
    const saved = await request(api.app)
      .post(`/api/v1/contactBooks/${book}/segments`)
      .set(api.team.auth)
      .send({ name: 'Fine', filter: cheap })
      .expect(200);
    expectTooCostly(
      await request(api.app)
        .patch(`/api/v1/contactBooks/${book}/segments/${saved.body.id}`)
        .set(api.team.auth)
        .send({ filter: reviewFilter }),
    );
  });

  it('refuses a filter whose contains values pass the character budget even with few conditions', async () => {
    const long = {
      match: 'any',
      conditions: Array.from({ length: 3 }, (_, i) => ({ field: 'properties.bio', operator: 'contains', value: `${i}`.padEnd(1000, 'x') })),
    };
    const res = await preview(api.team, book, long).expect(400);
    expect(res.body.error.message).toContain('characters of contains');
  });

  it('a saved filter over the budget (saved before it existed) is refused when evaluated, not run', async () => {
    const id = 'legacy-costly-segment';
    await api.deps.sql.execute(
      `INSERT INTO "Segment" (id, "contactBookId", "teamId", name, filter, "updatedAt") VALUES ($1, $2, $3, 'Legacy', $4::jsonb, now())`,
      [id, book, api.team.teamId, JSON.stringify(reviewFilter)],
    );
    const res = await request(api.app).get(`/api/v1/contactBooks/${book}/segments/${id}/contacts`).set(api.team.auth).expect(400);
    expect(res.body.error.message).toContain('too costly');
    await request(api.app).get(`/api/v1/contactBooks/${book}/contacts/export?segmentId=${id}`).set(api.team.auth).expect(400);
  });
});

describe('segment budget', () => {
  it("a team's preview past its own limit gets 429 in the error shape; another team's preview and sends answer", async () => {
    // Two evaluations of the team in progress (as two slow previews would hold them).
    const held = await Promise.all(Array.from({ length: PER_TEAM }, () => api.deps.budgets.acquire('segment', api.team.teamId)));
    try {
      const refused = await preview(api.team, book, cheap);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.stringContaining(`${PER_TEAM} segment`) } });
      // The saved segment's contacts page is an evaluation too.
      const saved = await request(api.app)
        .post(`/api/v1/contactBooks/${book}/segments`)
        .set(api.team.auth)
        .send({ name: 'Cheap', filter: cheap })
        .expect(200);
      await request(api.app).get(`/api/v1/contactBooks/${book}/segments/${saved.body.id}/contacts`).set(api.team.auth).expect(429);

      expect((await preview(bystander, bystanderBook, cheap).expect(200)).body.count).toBe(1);
      await request(api.app)
        .post('/api/v1/emails')
        .set(bystander.auth)
        .send({ from: 'a@bystander.example', to: 'x@example.com', subject: 'Hi', text: 'Hi' })
        .expect(200);
    } finally {
      await Promise.all(held.map((l) => l.release()));
    }
    await preview(api.team, book, cheap).expect(200);
  });

  it('ten concurrent costly previews of one team evaluate at most its limit at once, and another team keeps being answered', async () => {
    const runningEvaluations = async () => {
      const [row] = await api.deps.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND query LIKE '%ILIKE%' AND pid <> pg_backend_pid()`,
      );
      return row.n;
    };
    let done = false;
    const observed: number[] = [];
    const sampling = (async () => {
      while (!done) {
        observed.push(await runningEvaluations());
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const previews = Promise.all(Array.from({ length: 10 }, () => preview(api.team, book, costlyAllowed)));
    // Meanwhile another team reads, sends and previews, and the instance is ready.
    const bystanderAnswers: number[] = [];
    for (let i = 0; i < 3; i++) {
      bystanderAnswers.push((await request(api.app).get('/api/v1/contactBooks').set(bystander.auth)).status);
      bystanderAnswers.push(
        (
          await request(api.app)
            .post('/api/v1/emails')
            .set(bystander.auth)
            .send({ from: 'a@bystander.example', to: `y${i}@example.com`, subject: 'Hi', text: 'Hi' })
        ).status,
      );
      bystanderAnswers.push((await preview(bystander, bystanderBook, cheap)).status);
      bystanderAnswers.push((await request(api.app).get('/ready')).status);
    }
    const statuses = (await previews).map((r) => r.status);
    done = true;
    await sampling;

    // Before the budget, all ten ran at once on the request pool (as many as it had connections).
    expect(Math.max(...observed)).toBeLessThanOrEqual(PER_TEAM);
    expect(bystanderAnswers).toEqual(bystanderAnswers.map(() => 200));
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
  }, 120_000);
});
