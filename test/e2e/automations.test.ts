import { Client } from 'pg';
import request from 'supertest';
import { waitFor } from '@mailrail/testing/wait-for';
import { startTestApi, type TestApi, type TestTeam } from '../../apps/api/src/testing/api-harness';
import { automationTick } from '../../apps/worker/src/automations/automation-tick';
import { advanceDueRuns } from '../../apps/worker/src/automations/advance-runs';
import { enrollFromSources } from '../../apps/worker/src/automations/enroll-runs';
import { runDueStep, runDueSteps, type RunStepDeps } from '../../apps/worker/src/automations/run-step';
import { automationSendKey } from '../../apps/worker/src/automations/step-effects';

// Automations end to end: definitions and events through the public API, the worker's runtime
// (automationTick: enrollment from the Event table, then due steps) on the same database, and
// one injected clock for both, moved by the test: no sleeping, every wait exact.

let api: TestApi;
let team: TestTeam;
let bookId: string;
let now = new Date('2026-12-07T08:00:00.000Z');
const clock = { now: () => now };
const DOMAIN = 'auto.example.com';
const FROM = `Team <hello@${DOMAIN}>`;
const hours = (h: number) => h * 3_600_000;

beforeAll(async () => {
  api = await startTestApi({}, undefined, { clock });
  team = api.team;
  await api.addDomain(team.teamId, DOMAIN);
  bookId = (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'Users' }).expect(200)).body.id;
});
afterAll(() => api.close());

const runtime = (extra: Partial<RunStepDeps> = {}): RunStepDeps => ({
  sql: api.deps.sql,
  queues: api.deps.queues,
  log: api.deps.log,
  clock,
  config: api.config,
  ...extra,
});
const BUDGET = { perTeam: 200, total: 2000 };
const tick = () => automationTick({ ...runtime(), budgets: api.deps.budgets }, BUDGET);
const advance = (ms: number) => {
  now = new Date(now.getTime() + ms);
};

let seq = 0;
async function newContact(props: Record<string, unknown> = {}, firstName = 'Ann') {
  const email = `c${++seq}@example.org`;
  const res = await request(api.app)
    .post(`/api/v1/contactBooks/${bookId}/contacts`)
    .set(team.auth)
    .send({ email, firstName, properties: props })
    .expect(200);
  return { id: res.body.contactId as string, email };
}

async function createActive(body: Record<string, unknown>, auth = team.auth) {
  const { id } = (await request(api.app).post('/api/v1/automations').set(auth).send(body).expect(200)).body;
  await request(api.app).post(`/api/v1/automations/${id}/activate`).set(auth).expect(200);
  return id as string;
}

const sendEvent = (name: string, contactId: string, properties: Record<string, unknown> = {}) =>
  request(api.app).post('/api/v1/events').set(team.auth).send({ name, contactId, properties }).expect(200);

const emailsTo = (email: string) =>
  api.deps.db.email.findMany({
    where: { toAddresses: { has: email } },
    orderBy: { createdAt: 'asc' },
    select: { id: true, subject: true, source: true, html: true },
  });

const runsOf = (automationId: string, contactId?: string) =>
  api.deps.db.automationRun.findMany({ where: { automationId, ...(contactId ? { contactId } : {}) }, orderBy: { enteredAt: 'asc' } });

/**
 * Ticks until `done` (enrollment reads only events below the oldest running transaction of the
 * whole PostgreSQL cluster, which other test files share: one tick may come too early).
 */
async function tickUntil(done: () => Promise<boolean>, what: string, step: () => Promise<unknown> = tick) {
  await waitFor(
    async () => {
      await step();
      return done();
    },
    { timeoutMs: 20_000, intervalMs: 50, what },
  );
}

const send = (id: string, subject: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'sendEmail',
  from: FROM,
  subject,
  html: `<p>${subject} {{firstName}} {{event_plan,fallback=none}}</p>`,
  ...extra,
});

it('runs a welcome series of three emails with waits, personalised, each sent once, logged step by step', async () => {
  const id = await createActive({
    name: 'Welcome',
    trigger: { type: 'event', event: 'user.signed_up' },
    steps: [
      send('one', 'Welcome {{firstName}}'),
      { id: 'w1', type: 'wait', seconds: 86_400 },
      send('two', 'Tips'),
      { id: 'w2', type: 'wait', seconds: 2 * 86_400 },
      send('three', 'Last'),
    ],
  });
  const c = await newContact({}, 'Ada');
  await sendEvent('user.signed_up', c.id, { plan: 'pro' });
  await tickUntil(async () => (await emailsTo(c.email)).length === 1, 'the first email');
  const [first] = await emailsTo(c.email);
  expect(first).toMatchObject({ subject: 'Welcome Ada', source: 'AUTOMATION' });
  expect(first.html).toContain('Welcome Ada Ada pro');

  // Ticks before the wait is over do nothing.
  advance(hours(23));
  await tick();
  await tick();
  expect(await emailsTo(c.email)).toHaveLength(1);
  advance(hours(1));
  await tick();
  expect((await emailsTo(c.email)).map((e) => e.subject)).toEqual(['Welcome Ada', 'Tips']);
  advance(hours(47));
  await tick();
  expect(await emailsTo(c.email)).toHaveLength(2);
  advance(hours(1));
  await tick();
  await tick();
  expect((await emailsTo(c.email)).map((e) => e.subject)).toEqual(['Welcome Ada', 'Tips', 'Last']);

  const [run] = await runsOf(id, c.id);
  expect(run).toMatchObject({ status: 'COMPLETED', exitReason: 'completed', stepId: null, dueAt: null });
  const log = (await request(api.app).get(`/api/v1/automations/${id}/runs/${run.id}`).set(team.auth).expect(200)).body;
  expect(log.log.map((l: { stepId: string; outcome: string }) => `${l.stepId}:${l.outcome}`)).toEqual([
    'one:sent',
    'w1:waited',
    'two:sent',
    'w2:waited',
    'three:sent',
  ]);
  expect(log.log[0].emailId).toBe(first.id);
  // Each send carries its run-and-step idempotency record.
  expect(await api.deps.db.idempotencyRecord.count({ where: { teamId: team.teamId, key: automationSendKey(run.id, 1) } })).toBe(1);
  const runs = (await request(api.app).get(`/api/v1/automations/${id}/runs`).set(team.auth).expect(200)).body;
  expect(runs.data.map((r: { id: string }) => r.id)).toEqual([run.id]);
});

it('takes the event branch when the awaited event arrives, and the timeout branch when it does not', async () => {
  const id = await createActive({
    name: 'Trial',
    trigger: { type: 'event', event: 'trial.started' },
    steps: [
      { id: 'wait-paid', type: 'waitForEvent', event: 'order.paid', timeoutSeconds: 3 * 86_400, next: 'thanks', timeoutNext: 'nudge' },
      { ...send('thanks', 'Thanks'), next: null },
      send('nudge', 'Still there?'),
    ],
  });
  const payer = await newContact();
  const idle = await newContact();
  await sendEvent('trial.started', payer.id);
  await sendEvent('trial.started', idle.id);
  await tickUntil(
    async () => (await runsOf(id)).every((r) => r.waitEvent === 'order.paid') && (await runsOf(id)).length === 2,
    'both waiting',
  );

  advance(hours(5));
  await sendEvent('order.paid', payer.id);
  await tickUntil(async () => (await emailsTo(payer.email)).length === 1, 'the paid branch');
  expect((await emailsTo(payer.email)).map((e) => e.subject)).toEqual(['Thanks']);
  expect(await emailsTo(idle.email)).toHaveLength(0);

  advance(3 * 86_400_000);
  await tick();
  await tick();
  expect((await emailsTo(idle.email)).map((e) => e.subject)).toEqual(['Still there?']);
  expect(await emailsTo(payer.email)).toHaveLength(1);
  const [idleRun] = await runsOf(id, idle.id);
  const log = await api.deps.db.automationRunLog.findMany({ where: { runId: idleRun.id }, orderBy: { seq: 'asc' } });
  expect(log.map((l) => l.outcome)).toEqual(['timed-out', 'sent']);
  expect(log[0].detail).toContain('no "order.paid" within');
});

describe('re-entry', () => {
  const body = (name: string, event: string, reEntry: Record<string, unknown>) => ({
    name,
    trigger: { type: 'event', event },
    reEntry,
    steps: [send('only', name)],
  });

  it('once: one run per contact however many events; everyTime: one per event; oncePerPeriod: one per period', async () => {
    const once = await createActive(body('Once', 'visit.once', { mode: 'once' }));
    const every = await createActive(body('Every', 'visit.every', { mode: 'everyTime' }));
    const period = await createActive(body('Period', 'visit.period', { mode: 'oncePerPeriod', periodSeconds: 86_400 }));
    const c = await newContact();
    for (let i = 0; i < 3; i++) {
      await sendEvent('visit.once', c.id);
      await sendEvent('visit.every', c.id);
      await sendEvent('visit.period', c.id);
    }
    await tickUntil(async () => (await runsOf(every)).length === 3, 'three entries');
    await tick();
    expect(await runsOf(once)).toHaveLength(1);
    expect(await runsOf(period)).toHaveLength(1);
    // A day later, once per period lets the contact in again; once never does.
    advance(hours(25));
    await sendEvent('visit.once', c.id);
    await sendEvent('visit.period', c.id);
    await tickUntil(async () => (await runsOf(period)).length === 2, 'the next period');
    expect(await runsOf(once)).toHaveLength(1);
    expect((await emailsTo(c.email)).filter((e) => e.subject === 'Every')).toHaveLength(3);
  });
});

it('exits a run when the contact unsubscribes, sending nothing more', async () => {
  const id = await createActive({
    name: 'Unsub',
    trigger: { type: 'event', event: 'unsub.test' },
    steps: [send('a', 'First'), { id: 'w', type: 'wait', seconds: 3600 }, send('b', 'Second')],
  });
  const c = await newContact();
  await sendEvent('unsub.test', c.id);
  await tickUntil(async () => (await emailsTo(c.email)).length === 1, 'the first email');
  await request(api.app).patch(`/api/v1/contactBooks/${bookId}/contacts/${c.id}`).set(team.auth).send({ subscribed: false }).expect(200);
  advance(hours(2));
  await tick();
  expect(await emailsTo(c.email)).toHaveLength(1);
  const [run] = await runsOf(id, c.id);
  expect(run).toMatchObject({ status: 'EXITED', exitReason: 'unsubscribed' });
});

it('ends a run when its goal event arrives, even in the middle of a long wait', async () => {
  const id = await createActive({
    name: 'Goal',
    trigger: { type: 'event', event: 'cart.abandoned' },
    goal: { event: 'order.placed' },
    steps: [{ id: 'w', type: 'wait', seconds: 7 * 86_400 }, send('remind', 'Your cart')],
  });
  const c = await newContact();
  await sendEvent('cart.abandoned', c.id);
  await tickUntil(async () => (await runsOf(id, c.id))[0]?.stepId === 'remind', 'the wait');
  advance(hours(1));
  await sendEvent('order.placed', c.id);
  await tickUntil(async () => (await runsOf(id, c.id))[0]?.status === 'COMPLETED', 'the goal');
  expect((await runsOf(id, c.id))[0].exitReason).toBe('goal');
  advance(8 * 86_400_000);
  await tick();
  expect(await emailsTo(c.email)).toHaveLength(0);
});

it('branches on a contact property, and an update step changes what later steps see', async () => {
  const id = await createActive({
    name: 'Plans',
    trigger: { type: 'event', event: 'plan.check' },
    steps: [
      {
        id: 'is-pro',
        type: 'branch',
        condition: { match: 'all', conditions: [{ source: 'contact', field: 'properties.plan', operator: 'equals', value: 'pro' }] },
        then: 'pro',
        else: 'free',
      },
      { ...send('pro', 'Pro tips'), next: 'mark' },
      { ...send('free', 'Upgrade'), next: 'mark' },
      { id: 'mark', type: 'updateContact', properties: { onboarded: true } },
    ],
  });
  const pro = await newContact({ plan: 'pro' });
  const free = await newContact({ plan: 'free' });
  await sendEvent('plan.check', pro.id);
  await sendEvent('plan.check', free.id);
  await tickUntil(async () => (await runsOf(id)).filter((r) => r.status === 'COMPLETED').length === 2, 'both runs');
  expect((await emailsTo(pro.email)).map((e) => e.subject)).toEqual(['Pro tips']);
  expect((await emailsTo(free.email)).map((e) => e.subject)).toEqual(['Upgrade']);
  const contact = await api.deps.db.contact.findUniqueOrThrow({ where: { id: pro.id } });
  expect(contact.properties).toMatchObject({ plan: 'pro', onboarded: true });
  const [run] = await runsOf(id, free.id);
  const [branch] = await api.deps.db.automationRunLog.findMany({ where: { runId: run.id, seq: 1 } });
  expect(branch).toMatchObject({ outcome: 'else', nextStepId: 'free' });
  expect(branch.detail).toContain('contact.properties.plan equals "pro" (was "free")');
});

it('update, add and remove steps change contacts as the contacts API does, with the same webhook rows and events', async () => {
  const vip = (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'VIP' }).expect(200)).body.id as string;
  const id = await createActive({
    name: 'Promote',
    trigger: { type: 'event', event: 'promote' },
    steps: [
      { id: 'tier', type: 'updateContact', properties: { tier: 'gold', score: 3 } },
      { id: 'add', type: 'addToBook', contactBookId: vip },
      { id: 'remove', type: 'removeFromBook', contactBookId: vip },
    ],
  });
  const c = await newContact({ tier: 'none' });
  await sendEvent('promote', c.id);
  await tickUntil(async () => (await runsOf(id, c.id))[0]?.status === 'COMPLETED', 'the run');
  const contact = await api.deps.db.contact.findUniqueOrThrow({ where: { id: c.id } });
  expect(contact.properties).toMatchObject({ tier: 'gold', score: 3 });
  expect(await api.deps.db.contact.count({ where: { contactBookId: vip } })).toBe(0);
  const hooks = await api.deps.db.webhookEvent.findMany({
    where: { teamId: team.teamId, type: { startsWith: 'contact.' } },
    orderBy: { createdAt: 'asc' },
  });
  const mine = hooks
    .filter((h) => (h.data as { email?: string }).email === c.email)
    .map((h) => [h.type, (h.data as { contactBookId?: string }).contactBookId]);
  expect(mine).toEqual(
    expect.arrayContaining([
      ['contact.updated', bookId],
      ['contact.created', vip],
      ['contact.deleted', vip],
    ]),
  );
  // The built-in event of the contact created in the VIP book, as for a contact created through the API.
  expect(await api.deps.db.event.count({ where: { teamId: team.teamId, name: 'contact.created', contactBookId: vip } })).toBe(1);
});

it('an edit creates a new version: a running contact finishes on its old one, a new contact starts on the new one', async () => {
  const id = await createActive({
    name: 'Versioned',
    trigger: { type: 'event', event: 'ver.test' },
    steps: [{ id: 'w', type: 'wait', seconds: 3600 }, send('s', 'Old subject')],
  });
  const early = await newContact();
  await sendEvent('ver.test', early.id);
  await tickUntil(async () => (await runsOf(id, early.id))[0]?.stepId === 's', 'the first run waiting');
  const edited = await request(api.app)
    .patch(`/api/v1/automations/${id}`)
    .set(team.auth)
    .send({ steps: [{ id: 'w', type: 'wait', seconds: 3600 }, send('s', 'New subject')] })
    .expect(200);
  expect(edited.body.version).toBe(2);
  // A rename alone is no new version.
  expect(
    (await request(api.app).patch(`/api/v1/automations/${id}`).set(team.auth).send({ name: 'Renamed' }).expect(200)).body.version,
  ).toBe(2);
  const late = await newContact();
  await sendEvent('ver.test', late.id);
  await tickUntil(async () => (await runsOf(id, late.id)).length === 1, 'the second run');
  advance(hours(2));
  await tick();
  await tick();
  expect((await emailsTo(early.email)).map((e) => e.subject)).toEqual(['Old subject']);
  expect((await emailsTo(late.email)).map((e) => e.subject)).toEqual(['New subject']);
  expect((await runsOf(id, early.id))[0].version).toBe(1);
  expect((await runsOf(id, late.id))[0].version).toBe(2);
});

it('pause stops enrollment and steps; resume goes on from where runs were, without enrolling what happened meanwhile', async () => {
  const id = await createActive({
    name: 'Pausable',
    trigger: { type: 'event', event: 'pause.test' },
    reEntry: { mode: 'everyTime' },
    steps: [{ id: 'w', type: 'wait', seconds: 600 }, send('s', 'After pause')],
  });
  const c = await newContact();
  await sendEvent('pause.test', c.id);
  await tickUntil(async () => (await runsOf(id, c.id))[0]?.stepId === 's', 'the wait');
  await request(api.app).post(`/api/v1/automations/${id}/pause`).set(team.auth).expect(200);
  await request(api.app).post(`/api/v1/automations/${id}/pause`).set(team.auth).expect(400);
  // A transaction of another session, older than the event and still open at resume (another
  // tenant's export, say): the event, committed while paused, must not enroll once it ends.
  const older = new Client({ connectionString: api.config.DATABASE_URL });
  await older.connect();
  try {
    await older.query('BEGIN');
    await older.query('SELECT pg_current_xact_id()');
    await sendEvent('pause.test', c.id);
    advance(hours(1));
    await tick();
    await tick();
    expect(await emailsTo(c.email)).toHaveLength(0);
    expect(await runsOf(id)).toHaveLength(1);
    const resumed = await request(api.app).post(`/api/v1/automations/${id}/resume`).set(team.auth).expect(200);
    expect(resumed.body.status).toBe('ACTIVE');
    await tick();
    expect((await emailsTo(c.email)).map((e) => e.subject)).toEqual(['After pause']);
  } finally {
    await older.query('ROLLBACK');
    await older.end();
  }
  await tick();
  await tick();
  expect(await runsOf(id)).toHaveLength(1);
  // An event after resume still enrolls.
  await sendEvent('pause.test', c.id);
  await tickUntil(async () => (await runsOf(id)).length === 2, 'the event after resume');
});

it('dry run shows the path one contact would take, writing nothing', async () => {
  const { id } = (
    await request(api.app)
      .post('/api/v1/automations')
      .set(team.auth)
      .send({
        name: 'Dry',
        trigger: {
          type: 'event',
          event: 'dry.test',
          filter: { match: 'all', conditions: [{ source: 'event', field: 'plan', operator: 'exists' }] },
        },
        steps: [
          send('hello', 'Hello'),
          { id: 'wait-buy', type: 'waitForEvent', event: 'order.paid', timeoutSeconds: 86_400, next: 'thanks', timeoutNext: 'nudge' },
          { ...send('thanks', 'Thanks'), next: null },
          send('nudge', 'Nudge'),
        ],
      })
      .expect(200)
  ).body;
  const c = await newContact();
  const dry = (body: Record<string, unknown>) =>
    request(api.app).post(`/api/v1/automations/${id}/dry-run`).set(team.auth).send(body).expect(200);
  const timeout = (await dry({ contactId: c.id, event: { properties: { plan: 'pro' } } })).body;
  expect(timeout.enters).toBe(true);
  expect(timeout.path.map((p: { stepId: string; outcome: string }) => `${p.stepId}:${p.outcome}`)).toEqual([
    'hello:sent',
    'wait-buy:timed-out',
    'nudge:sent',
  ]);
  const paid = (await dry({ contactId: c.id, event: { properties: { plan: 'pro' } }, arrivingEvents: ['order.paid'] })).body;
  expect(paid.path.map((p: { stepId: string }) => p.stepId)).toEqual(['hello', 'wait-buy', 'thanks']);
  const filtered = (await dry({ contactId: c.id })).body;
  expect(filtered).toMatchObject({ enters: false, path: [] });
  expect(await emailsTo(c.email)).toHaveLength(0);
  expect(await runsOf(id)).toHaveLength(0);
  await request(api.app).post(`/api/v1/automations/${id}/dry-run`).set(team.auth).send({ contactId: 'nope' }).expect(400);
});

it('enrolls each contact added to a book', async () => {
  const book = (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'Newsletter' }).expect(200)).body.id;
  const id = await createActive({ name: 'Joined', trigger: { type: 'contactAdded', contactBookId: book }, steps: [send('hi', 'Joined')] });
  const res = await request(api.app)
    .post(`/api/v1/contactBooks/${book}/contacts`)
    .set(team.auth)
    .send({ email: 'joined@example.org' })
    .expect(200);
  await tickUntil(async () => (await emailsTo('joined@example.org')).length === 1, 'the joined email');
  expect((await runsOf(id))[0].contactId).toBe(res.body.contactId);
});

describe('exactly once', () => {
  it('a runtime killed between the email it wrote and its commit sends nothing; the step runs again once', async () => {
    const id = await createActive({ name: 'Crash', trigger: { type: 'event', event: 'crash.test' }, steps: [send('s', 'Once only')] });
    const c = await newContact();
    await sendEvent('crash.test', c.id);
    await tickUntil(
      async () => (await runsOf(id, c.id)).length === 1,
      'the run',
      () => enrollFromSources(runtime(), 200),
    );
    const [run] = await runsOf(id, c.id);
    // The step's transaction dies after its email row is written, before the run moves on.
    const crashing = runtime({
      afterEffect: () => {
        throw new Error('killed');
      },
    });
    await expect(runDueStep(crashing, run.id)).rejects.toThrow('killed');
    expect(await emailsTo(c.email)).toHaveLength(0);
    expect((await runsOf(id, c.id))[0]).toMatchObject({ status: 'ACTIVE', stepId: 's', stepCount: 0 });
    // The next tick runs it again: one email, one log entry.
    await advanceDueRuns(runtime(), BUDGET);
    await advanceDueRuns(runtime(), BUDGET);
    expect(await emailsTo(c.email)).toHaveLength(1);
    expect(await api.deps.db.automationRunLog.count({ where: { runId: run.id } })).toBe(1);
  });

  it('two runtimes racing on the same due runs send each email once', async () => {
    const id = await createActive({ name: 'Race', trigger: { type: 'event', event: 'race.test' }, steps: [send('s', 'Raced')] });
    const contacts = await Promise.all(Array.from({ length: 8 }, () => newContact()));
    for (const c of contacts) await sendEvent('race.test', c.id);
    await tickUntil(async () => (await runsOf(id)).length === 8, 'eight runs');
    const batched = { ...BUDGET, batch: 3 };
    await Promise.all([advanceDueRuns(runtime(), batched), advanceDueRuns(runtime(), batched), advanceDueRuns(runtime(), batched)]);
    for (const c of contacts) expect(await emailsTo(c.email)).toHaveLength(1);
  });

  it('runs a batch of steps in one transaction; a step that throws holds back only its own run', async () => {
    const id = await createActive({ name: 'Batch', trigger: { type: 'event', event: 'batch.test' }, steps: [send('s', 'Batched')] });
    const contacts = await Promise.all(Array.from({ length: 6 }, () => newContact()));
    for (const c of contacts) await sendEvent('batch.test', c.id);
    await tickUntil(
      async () => (await runsOf(id)).length === 6,
      'six runs',
      () => enrollFromSources(runtime(), 200),
    );
    const runs = await runsOf(id);
    const victim = runs[2];
    const victimEmail = contacts.find((c) => c.id === victim.contactId)!.email;
    const throwing = runtime({
      afterEffect: (runId) => {
        if (runId === victim.id) throw new Error('bad run');
      },
    });
    const counts = await advanceDueRuns(throwing, { ...BUDGET, batch: 10 });
    expect(counts).toMatchObject({ finished: 5, skipped: 1 });
    for (const c of contacts) expect(await emailsTo(c.email)).toHaveLength(c.email === victimEmail ? 0 : 1);
    expect((await runsOf(id, victim.contactId))[0]).toMatchObject({ status: 'ACTIVE', stepCount: 0 });
    // The next tick runs the held-back step, once; the others are not run again.
    await advanceDueRuns(runtime(), { ...BUDGET, batch: 10 });
    for (const c of contacts) expect(await emailsTo(c.email)).toHaveLength(1);
    expect(await api.deps.db.automationRunLog.count({ where: { runId: { in: runs.map((r) => r.id) } } })).toBe(6);
  });

  it('a step later in a batch sees the contact as an earlier step of the batch left it', async () => {
    const marker = await createActive({
      name: 'Marker',
      trigger: { type: 'event', event: 'mark.test' },
      steps: [{ id: 'm', type: 'updateContact', properties: { tier: 'gold' } }],
    });
    const reader = await createActive({
      name: 'Reader',
      trigger: { type: 'event', event: 'mark.test' },
      steps: [
        {
          id: 'b',
          type: 'branch',
          condition: { match: 'all', conditions: [{ source: 'contact', field: 'properties.tier', operator: 'equals', value: 'gold' }] },
          then: 'gold',
          else: 'plain',
        },
        send('gold', 'Gold'),
        send('plain', 'Plain'),
      ],
    });
    const c = await newContact({ tier: 'none' });
    await sendEvent('mark.test', c.id);
    await tickUntil(
      async () => (await runsOf(marker, c.id)).length + (await runsOf(reader, c.id)).length === 2,
      'both runs',
      () => enrollFromSources(runtime(), 200),
    );
    const [m] = await runsOf(marker, c.id);
    const [r] = await runsOf(reader, c.id);
    const outcomes = await runDueSteps(runtime(), [m.id, r.id]);
    expect(outcomes.get(m.id)).toBe('finished');
    const [branch] = await api.deps.db.automationRunLog.findMany({ where: { runId: r.id, seq: 1 } });
    expect(branch).toMatchObject({ outcome: 'then', nextStepId: 'gold' });
  });
});

it("one team's burst does not delay another team's run: each tick serves every team up to its budget", async () => {
  const other = await api.newTeam('Quiet');
  await api.addDomain(other.teamId, 'quiet.example.com');
  const otherBook = (await request(api.app).post('/api/v1/contactBooks').set(other.auth).send({ name: 'Q' }).expect(200)).body.id;
  const loud = await createActive({
    name: 'Loud',
    trigger: { type: 'event', event: 'burst' },
    reEntry: { mode: 'everyTime' },
    steps: [
      { id: 'w', type: 'wait', seconds: 60 },
      { id: 'x', type: 'exit' },
    ],
  });
  const quiet = await createActive(
    {
      name: 'Quiet',
      trigger: { type: 'event', event: 'burst' },
      steps: [
        { id: 'w', type: 'wait', seconds: 60 },
        { id: 'x', type: 'exit' },
      ],
    },
    other.auth,
  );
  const c = await newContact();
  await request(api.app)
    .post('/api/v1/events')
    .set(team.auth)
    .send({ events: Array.from({ length: 30 }, () => ({ name: 'burst', contactId: c.id })) })
    .expect(200);
  const q = (
    await request(api.app).post(`/api/v1/contactBooks/${otherBook}/contacts`).set(other.auth).send({ email: 'q@example.org' }).expect(200)
  ).body.contactId;
  await request(api.app).post('/api/v1/events').set(other.auth).send({ name: 'burst', contactId: q }).expect(200);
  await tickUntil(async () => (await runsOf(loud)).length === 30 && (await runsOf(quiet)).length === 1, 'every run enrolled');
  advance(hours(1));
  // A tick of 6 with 3 per team: the quiet team's one run is in the first tick, beside 3 of the loud team's 30.
  await advanceDueRuns(runtime(), { perTeam: 3, total: 6 });
  expect((await runsOf(quiet))[0].status).toBe('EXITED');
  expect((await runsOf(loud)).filter((r) => r.status === 'EXITED').length).toBeLessThanOrEqual(3);
});

describe('at scale', () => {
  const waitThenExit = [
    { id: 'w', type: 'wait', seconds: 60 },
    { id: 'x', type: 'exit' },
  ];

  it("a burst larger than one enrollment batch enrolls every event once, one batch per tick; once: the contact's first event in the feed wins", async () => {
    const every = await createActive({
      name: 'Batched',
      trigger: { type: 'event', event: 'batched' },
      reEntry: { mode: 'everyTime' },
      steps: waitThenExit,
    });
    const once = await createActive({ name: 'Batched once', trigger: { type: 'event', event: 'batched' }, steps: waitThenExit });
    const c = await newContact();
    const d = await newContact();
    const events = Array.from({ length: 23 }, (_, i) => ({ name: 'batched', contactId: i % 2 ? d.id : c.id, properties: { i } }));
    await request(api.app).post('/api/v1/events').set(team.auth).send({ events }).expect(200);
    const reads: number[] = [];
    await tickUntil(
      async () => (await runsOf(every)).length === 23,
      'every event enrolled',
      async () => reads.push((await enrollFromSources(runtime(), 5)).read),
    );
    // Five events a tick (a tick may come before the events are below the read mark: 0).
    expect(Math.max(...reads)).toBe(5);
    const runs = await runsOf(every);
    expect(new Set(runs.map((r) => r.sourceId)).size).toBe(23);
    const onceRuns = await runsOf(once);
    expect(onceRuns).toHaveLength(2);
    // The feed's order is (transaction, id): the contact's event with the smallest id came first.
    const firstOf = async (contactId: string) =>
      (await api.deps.db.event.findFirst({ where: { contactId, name: 'batched' }, orderBy: { id: 'asc' } }))?.id;
    expect(onceRuns.find((r) => r.contactId === c.id)?.sourceId).toBe(await firstOf(c.id));
    expect(onceRuns.find((r) => r.contactId === d.id)?.sourceId).toBe(await firstOf(d.id));
  });

  it('a tick past its time budget takes no further run; the runs stay due for the next tick', async () => {
    const id = await createActive({ name: 'Budget', trigger: { type: 'event', event: 'budget' }, steps: [send('s', 'Budget')] });
    const c = await newContact();
    await sendEvent('budget', c.id);
    await tickUntil(
      async () => (await runsOf(id)).length === 1,
      'the run',
      () => enrollFromSources(runtime(), 200),
    );
    const spent = await advanceDueRuns(runtime(), { perTeam: 200, total: 2000, maxMs: 0 });
    expect(spent.finished + spent.advanced + spent.continued).toBe(0);
    expect((await runsOf(id))[0]).toMatchObject({ status: 'ACTIVE', stepCount: 0 });
    await advanceDueRuns(runtime(), { perTeam: 200, total: 2000, maxMs: 60_000 });
    expect((await runsOf(id))[0].status).toBe('COMPLETED');
  });

  it('advancing side by side runs each due step once, and still serves every team within its budget', async () => {
    const id = await createActive({
      name: 'Lanes',
      trigger: { type: 'event', event: 'lanes' },
      reEntry: { mode: 'everyTime' },
      steps: [send('s', 'Lane')],
    });
    const c = await newContact();
    await request(api.app)
      .post('/api/v1/events')
      .set(team.auth)
      .send({ events: Array.from({ length: 40 }, () => ({ name: 'lanes', contactId: c.id })) })
      .expect(200);
    await tickUntil(
      async () => (await runsOf(id)).length === 40,
      'forty runs',
      () => enrollFromSources(runtime(), 200),
    );
    const wide = { perTeam: 200, total: 2000, concurrency: 6 };
    await Promise.all([advanceDueRuns(runtime(), wide), advanceDueRuns(runtime(), wide)]);
    expect((await runsOf(id)).every((r) => r.status === 'COMPLETED')).toBe(true);
    expect((await emailsTo(c.email)).filter((e) => e.subject === 'Lane')).toHaveLength(40);
    expect(await api.deps.db.automationRunLog.count({ where: { run: { automationId: id } } })).toBe(40);
  });
});
