import request from 'supertest';
import { waitFor } from '@mailrail/testing/wait-for';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { startTestApi, type TestApi, type TestTeam } from '../../apps/api/src/testing/api-harness';
import { BudgetFull } from '@mailrail/platform/budgets/budget-gate';
import { automationTick } from '../../apps/worker/src/automations/automation-tick';
import { advanceContactTriggers } from '../../apps/worker/src/automations/contact-triggers';
import type { RunStepDeps } from '../../apps/worker/src/automations/run-step';

// The triggers that watch contacts (segment entry, dates) and the branch conditions on segments
// and engagement (docs/automations.md), end to end: definitions, contacts and segments through
// the public API, SES events through the worker's job, the automation tick on the same database,
// one injected clock moved by the test.

let api: TestApi;
let team: TestTeam;
let other: TestTeam;
let bookId: string;
let now = new Date('2026-12-07T08:00:00.000Z');
const clock = { now: () => now };
const DOMAIN = 'triggers.example.com';
const FROM = `Team <hello@${DOMAIN}>`;
const DAY = 86_400_000;

beforeAll(async () => {
  api = await startTestApi({}, undefined, { clock });
  team = api.team;
  other = await api.newTeam('Other');
  await api.addDomain(team.teamId, DOMAIN);
  bookId = (await request(api.app).post('/api/v1/contactBooks').set(team.auth).send({ name: 'Users' }).expect(200)).body.id;
});
afterAll(() => api.close());

const runtime = (): RunStepDeps => ({ sql: api.deps.sql, queues: api.deps.queues, log: api.deps.log, clock, config: api.config });
const tick = () => automationTick({ ...runtime(), budgets: api.deps.budgets }, { perTeam: 200, total: 2000 });

let seq = 0;
async function newContact(properties: Record<string, unknown> = {}) {
  const email = `t${++seq}@example.org`;
  const res = await request(api.app).post(`/api/v1/contactBooks/${bookId}/contacts`).set(team.auth).send({ email, properties }).expect(200);
  return { id: res.body.contactId as string, email };
}
const patchContact = (id: string, body: Record<string, unknown>) =>
  request(api.app).patch(`/api/v1/contactBooks/${bookId}/contacts/${id}`).set(team.auth).send(body).expect(200);

async function newSegment(filter: unknown, auth = team.auth, book = bookId) {
  const res = await request(api.app).post(`/api/v1/contactBooks/${book}/segments`).set(auth).send({ name: 'S', filter }).expect(200);
  return res.body.id as string;
}

async function createActive(body: Record<string, unknown>) {
  const { id } = (await request(api.app).post('/api/v1/automations').set(team.auth).send(body).expect(200)).body;
  await request(api.app).post(`/api/v1/automations/${id}/activate`).set(team.auth).expect(200);
  return id as string;
}

const send = (id: string, subject: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'sendEmail',
  from: FROM,
  subject,
  html: `<p>${subject}</p>`,
  ...extra,
});
const subjectsTo = async (email: string) =>
  (await api.deps.db.email.findMany({ where: { toAddresses: { has: email }, source: 'AUTOMATION' }, orderBy: { createdAt: 'asc' } })).map(
    (e) => e.subject,
  );
const runsOf = (automationId: string, contactId?: string) =>
  api.deps.db.automationRun.findMany({ where: { automationId, ...(contactId ? { contactId } : {}) } });
const sendEvent = (name: string, contactId: string) =>
  request(api.app).post('/api/v1/events').set(team.auth).send({ name, contactId }).expect(200);

/** Ticks until `done`: the contact and event feeds read only below the cluster's oldest running transaction. */
async function tickUntil(done: () => Promise<boolean>, what: string) {
  await waitFor(
    async () => {
      await tick();
      return done();
    },
    { timeoutMs: 20_000, intervalMs: 50, what },
  );
}
const baselineDone = async (automationId: string) =>
  (await api.deps.db.automationTriggerState.findUnique({ where: { automationId } }))?.baselineDone === true;

let ses = 0;
/** An email of the team to `to`, opened at `at`, applied by the worker's SES event job. */
async function openedAt(to: string, at: Date) {
  const res = await request(api.app).post('/api/v1/emails').set(team.auth).send({ from: FROM, to, subject: 'News', text: 'x' }).expect(200);
  const emailId = res.body.emailId as string;
  for (const eventType of ['Delivery', 'Open'] as const) {
    const message = JSON.stringify({
      eventType,
      mail: { messageId: `ses-${emailId}`, timestamp: at.toISOString(), headers: [{ name: 'X-Usesend-Email-ID', value: emailId }] },
      [eventType === 'Delivery' ? 'delivery' : 'open']: {
        timestamp: at.toISOString(),
        ...(eventType === 'Delivery' ? { recipients: [to] } : {}),
      },
    });
    expect(await processSesEventJob({ db: api.deps.db }, { snsMessageId: `sns-trig-${++ses}`, topicArn: 'arn', message })).toBe(
      'processed',
    );
  }
}

describe('segment entry', () => {
  it('enrolls a contact that comes to match, not one that matched at activation, and once', async () => {
    const segmentId = await newSegment({ match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'pro' }] });
    const already = await newContact({ plan: 'pro' });
    const later = await newContact({ plan: 'free' });
    const id = await createActive({
      name: 'Upgraded',
      trigger: { type: 'segmentEntered', segmentId },
      steps: [send('hi', 'Welcome to Pro')],
    });
    await tickUntil(() => baselineDone(id), 'the baseline');
    expect(await runsOf(id)).toHaveLength(0);

    await patchContact(later.id, { properties: { plan: 'pro' } });
    await tickUntil(async () => (await subjectsTo(later.email)).length === 1, 'the entry');
    expect(await subjectsTo(later.email)).toEqual(['Welcome to Pro']);
    expect(await subjectsTo(already.email)).toEqual([]);

    // Leaving and coming back under the default re-entry rule (once) enrolls no second run.
    await patchContact(later.id, { properties: { plan: 'free' } });
    await tickUntil(
      async () => (await api.deps.db.automationSegmentMember.count({ where: { automationId: id, contactId: later.id } })) === 0,
      'the exit',
    );
    await patchContact(later.id, { properties: { plan: 'pro' } });
    await tickUntil(
      async () => (await api.deps.db.automationSegmentMember.count({ where: { automationId: id, contactId: later.id } })) === 1,
      'the re-entry',
    );
    expect(await runsOf(id, later.id)).toHaveLength(1);
    expect(await runsOf(id, already.id)).toHaveLength(0);
  });

  it('a time-based segment (not opened within 30 days) is entered by time alone, on the periodic re-evaluation', async () => {
    const c = await newContact({ cohort: 'winback' });
    await openedAt(c.email, new Date(now.getTime() - 20 * DAY));
    const segmentId = await newSegment({
      match: 'all',
      conditions: [
        { field: 'properties.cohort', operator: 'equals', value: 'winback' },
        { field: 'emailActivity', operator: 'notOpenedWithin', value: 30 },
      ],
    });
    const id = await createActive({ name: 'Win-back', trigger: { type: 'segmentEntered', segmentId }, steps: [send('wb', 'We miss you')] });
    await tickUntil(() => baselineDone(id), 'the baseline');
    expect(await runsOf(id)).toHaveLength(0);
    now = new Date(now.getTime() + 11 * DAY); // 31 days since the open: no row changed
    await tickUntil(async () => (await subjectsTo(c.email)).length === 1, 'the win-back');
    expect(await subjectsTo(c.email)).toEqual(['We miss you']);
  });
});

describe('date trigger', () => {
  it('fires at the date plus the offset at 09:00 in the contact zone, once per date value; a new date counts', async () => {
    now = new Date('2026-12-20T08:00:00.000Z');
    const c = await newContact({ signedUpOn: '2026-12-20', timezone: 'America/New_York' });
    const id = await createActive({
      name: 'Day 3',
      trigger: { type: 'date', contactBookId: bookId, property: 'properties.signedUpOn', offsetDays: 3, timezoneProperty: 'timezone' },
      reEntry: { mode: 'everyTime' },
      steps: [send('d3', 'Three days in')],
    });
    const due = new Date('2026-12-23T14:00:00.000Z'); // 09:00 EST
    await tickUntil(
      async () =>
        (await api.deps.db.automationDateSchedule.findFirst({ where: { automationId: id, contactId: c.id } }))?.dueAt?.getTime() ===
        due.getTime(),
      'the schedule',
    );
    now = new Date(due.getTime() - 1000);
    await tick();
    expect(await runsOf(id)).toHaveLength(0);
    now = due;
    await tickUntil(async () => (await subjectsTo(c.email)).length === 1, 'the date');
    // Later ticks, and a change to another property, do not fire it again.
    await patchContact(c.id, { firstName: 'Ann' });
    for (let i = 0; i < 3; i++) {
      now = new Date(now.getTime() + DAY);
      await tick();
    }
    expect(await runsOf(id, c.id)).toHaveLength(1);
    // A new date value counts (re-entry everyTime): fires three days after it.
    await patchContact(c.id, { properties: { signedUpOn: '2027-01-10', timezone: 'America/New_York' } });
    const second = new Date('2027-01-13T14:00:00.000Z');
    await tickUntil(
      async () =>
        (await api.deps.db.automationDateSchedule.findFirst({ where: { automationId: id, contactId: c.id } }))?.dueAt?.getTime() ===
        second.getTime(),
      'the new schedule',
    );
    now = second;
    await tickUntil(async () => (await subjectsTo(c.email)).length === 2, 'the second date');
    expect(await runsOf(id, c.id)).toHaveLength(2);
  });
});

describe('branch conditions', () => {
  it('engagement: opened within 7 days takes then, else takes else', async () => {
    now = new Date('2027-02-01T08:00:00.000Z');
    const engaged = await newContact();
    const idle = await newContact();
    await openedAt(engaged.email, new Date(now.getTime() - 2 * DAY));
    await openedAt(idle.email, new Date(now.getTime() - 9 * DAY));
    const id = await createActive({
      name: 'Engaged?',
      trigger: { type: 'event', event: 'engage.check' },
      steps: [
        {
          id: 'b',
          type: 'branch',
          condition: { conditions: [{ source: 'emailActivity', operator: 'openedWithin', value: 7 }] },
          then: 'hot',
          else: 'cold',
        },
        { ...send('hot', 'Then'), next: null },
        send('cold', 'Else'),
      ],
    });
    await sendEvent('engage.check', engaged.id);
    await sendEvent('engage.check', idle.id);
    await tickUntil(
      async () => (await subjectsTo(engaged.email)).length === 1 && (await subjectsTo(idle.email)).length === 1,
      'both paths',
    );
    expect(await subjectsTo(engaged.email)).toEqual(['Then']);
    expect(await subjectsTo(idle.email)).toEqual(['Else']);
    const [run] = await runsOf(id, engaged.id);
    const log = await api.deps.db.automationRunLog.findFirstOrThrow({ where: { runId: run.id, seq: 1 } });
    expect(log).toMatchObject({ outcome: 'then' });
    expect(log.detail).toContain('openedWithin');
  });

  it('segment membership: in takes then, notIn the others', async () => {
    const segmentId = await newSegment({ match: 'all', conditions: [{ field: 'properties.vip', operator: 'equals', value: 'yes' }] });
    const vip = await newContact({ vip: 'yes' });
    const plain = await newContact({ vip: 'no' });
    await createActive({
      name: 'VIP?',
      trigger: { type: 'event', event: 'vip.check' },
      steps: [
        {
          id: 'b',
          type: 'branch',
          condition: { conditions: [{ source: 'segment', segmentId, operator: 'in' }] },
          then: 'vip',
          else: 'plain',
        },
        { ...send('vip', 'VIP'), next: null },
        send('plain', 'Plain'),
      ],
    });
    await sendEvent('vip.check', vip.id);
    await sendEvent('vip.check', plain.id);
    await tickUntil(async () => (await subjectsTo(vip.email)).length === 1 && (await subjectsTo(plain.email)).length === 1, 'both paths');
    expect(await subjectsTo(vip.email)).toEqual(['VIP']);
    expect(await subjectsTo(plain.email)).toEqual(['Plain']);
  });

  it("an event trigger's filter on segment membership enrolls only the segment's contacts; the dry run reads it the same way", async () => {
    const segmentId = await newSegment({ match: 'all', conditions: [{ field: 'properties.beta', operator: 'equals', value: 'on' }] });
    const tester = await newContact({ beta: 'on' });
    const others = await newContact({ beta: 'off' });
    const id = await createActive({
      name: 'Beta only',
      trigger: { type: 'event', event: 'beta.feature', filter: { conditions: [{ source: 'segment', segmentId, operator: 'in' }] } },
      steps: [send('b', 'Beta news')],
    });
    await sendEvent('beta.feature', others.id);
    await sendEvent('beta.feature', tester.id);
    await tickUntil(async () => (await subjectsTo(tester.email)).length === 1, 'the tester');
    await tick();
    expect(await runsOf(id, others.id)).toHaveLength(0);
    const dry = await request(api.app).post(`/api/v1/automations/${id}/dry-run`).set(team.auth).send({ contactId: others.id }).expect(200);
    expect(dry.body.enters).toBe(false);
    expect(dry.body.why).toContain('does not match');
  });
});

describe('references', () => {
  it("refuses another team's segment or campaign, and more than 10 segment and activity conditions", async () => {
    const otherBook = (await request(api.app).post('/api/v1/contactBooks').set(other.auth).send({ name: 'B' }).expect(200)).body.id;
    const theirSegment = await newSegment(
      { match: 'all', conditions: [{ field: 'email', operator: 'contains', value: 'x' }] },
      other.auth,
      otherBook,
    );
    await api.addDomain(other.teamId, 'their.example.com');
    const theirCampaign = (
      await request(api.app)
        .post('/api/v1/campaigns')
        .set(other.auth)
        .send({
          name: 'C',
          from: 'a@their.example.com',
          subject: 'Hi',
          html: '<p>Hi</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>',
          contactBookId: otherBook,
        })
        .expect(200)
    ).body.id as string;
    const branch = (condition: unknown) => ({
      name: 'X',
      trigger: { type: 'event', event: 'x.y' },
      steps: [{ id: 'b', type: 'branch', condition: { conditions: [condition] } }, send('s', 'S')],
    });
    const post = (body: object) => request(api.app).post('/api/v1/automations').set(team.auth).send(body);

    const bySegment = await post(branch({ source: 'segment', segmentId: theirSegment, operator: 'in' })).expect(400);
    expect(bySegment.body.error.issues).toEqual([
      expect.objectContaining({ path: ['steps', 0, 'condition', 'conditions', 0, 'segmentId'], message: 'Segment not found' }),
    ]);
    const byTrigger = await post({
      name: 'X',
      trigger: { type: 'segmentEntered', segmentId: theirSegment },
      steps: [send('s', 'S')],
    }).expect(400);
    expect(byTrigger.body.error.issues[0].path).toEqual(['trigger', 'segmentId']);
    const byCampaign = await post(branch({ source: 'emailActivity', operator: 'openedCampaign', value: theirCampaign })).expect(400);
    expect(byCampaign.body.error.issues[0].path).toEqual(['steps', 0, 'condition', 'conditions', 0, 'value']);
    const byDateBook = await post({
      name: 'X',
      trigger: { type: 'date', contactBookId: otherBook, property: 'createdAt', offsetDays: 1 },
      steps: [send('s', 'S')],
    }).expect(400);
    expect(byDateBook.body.error.issues[0].path).toEqual(['trigger', 'contactBookId']);
    // A bad value shape and an offset out of range are refused by the schema.
    await post(branch({ source: 'emailActivity', operator: 'openedWithin', value: 'abc' })).expect(400);
    await post({
      name: 'X',
      trigger: { type: 'date', contactBookId: bookId, property: 'createdAt', offsetDays: 366 },
      steps: [send('s', 'S')],
    }).expect(400);
    const many = Array.from({ length: 11 }, () => ({ source: 'emailActivity', operator: 'openedWithin', value: 7 }));
    const tooMany = await post({
      name: 'X',
      trigger: { type: 'event', event: 'x.y' },
      steps: [{ id: 'b', type: 'branch', condition: { match: 'any', conditions: many } }, send('s', 'S')],
    }).expect(400);
    expect(JSON.stringify(tooMany.body)).toContain('at most 10 segment and email activity conditions');
  });
});

describe('fairness and resets', () => {
  const deps = () => ({ sql: api.deps.sql, clock, log: api.deps.log, config: api.config, budgets: api.deps.budgets });
  const members = (automationId: string) => api.deps.db.automationSegmentMember.count({ where: { automationId } });

  async function teamWithSegmentAutomation(name: string, contacts: number) {
    const t = await api.newTeam(name);
    const book = (await request(api.app).post('/api/v1/contactBooks').set(t.auth).send({ name }).expect(200)).body.id as string;
    const ids: string[] = [];
    for (let i = 0; i < contacts; i++)
      ids.push(
        (
          await request(api.app)
            .post(`/api/v1/contactBooks/${book}/contacts`)
            .set(t.auth)
            .send({ email: `${name.replace(/\W/g, '')}${i}@example.org`, properties: { grp: 'x' } })
            .expect(200)
        ).body.contactId,
      );
    const segmentId = await newSegment(
      { match: 'all', conditions: [{ field: 'properties.grp', operator: 'equals', value: 'x' }] },
      t.auth,
      book,
    );
    const { id } = (
      await request(api.app)
        .post('/api/v1/automations')
        .set(t.auth)
        .send({ name, trigger: { type: 'segmentEntered', segmentId }, steps: [{ id: 'x', type: 'exit' }] })
        .expect(200)
    ).body;
    await request(api.app).post(`/api/v1/automations/${id}/activate`).set(t.auth).expect(200);
    return { team: t, book, ids, automationId: id as string };
  }

  it("a team's big baseline fills its own share of a tick; another team's goes on in the same tick, and when the first has no segment budget free", async () => {
    const big = await teamWithSegmentAutomation('Fair big', 5);
    const small = await teamWithSegmentAutomation('Fair small', 1);
    await advanceContactTriggers(deps(), 2);
    expect(await members(big.automationId)).toBe(2);
    expect(await members(small.automationId)).toBe(1);
    expect(await baselineDone(small.automationId)).toBe(true);
    expect(await baselineDone(big.automationId)).toBe(false);

    // The big team's segment budget is all taken (its previews, say): it waits; the small team does not.
    const leases = [];
    for (;;) {
      try {
        leases.push(await api.deps.budgets.acquire('segment', big.team.teamId));
      } catch (err) {
        expect(err).toBeInstanceOf(BudgetFull);
        break;
      }
    }
    await advanceContactTriggers(deps(), 2);
    expect(await members(big.automationId)).toBe(2);
    expect(await baselineDone(small.automationId)).toBe(true);
    await Promise.all(leases.map((l) => l.release()));
    for (let i = 0; i < 3; i++) await advanceContactTriggers(deps(), 2);
    expect(await members(big.automationId)).toBe(5);
    expect(await baselineDone(big.automationId)).toBe(true);
    expect(await api.deps.db.automationRun.count({ where: { automationId: { in: [big.automationId, small.automationId] } } })).toBe(0);
  });

  it('what happened while paused is not an entry: resume takes the baseline again', async () => {
    const segmentId = await newSegment({ match: 'all', conditions: [{ field: 'properties.tier', operator: 'equals', value: 'gold' }] });
    const duringPause = await newContact({ tier: 'silver' });
    const afterResume = await newContact({ tier: 'silver' });
    const id = await createActive({ name: 'Gold', trigger: { type: 'segmentEntered', segmentId }, steps: [{ id: 'x', type: 'exit' }] });
    await tickUntil(() => baselineDone(id), 'the baseline');
    await request(api.app).post(`/api/v1/automations/${id}/pause`).set(team.auth).expect(200);
    await patchContact(duringPause.id, { properties: { tier: 'gold' } });
    await tick();
    await request(api.app).post(`/api/v1/automations/${id}/resume`).set(team.auth).expect(200);
    await tickUntil(async () => (await baselineDone(id)) && (await members(id)) === 1, 'the new baseline');
    await patchContact(afterResume.id, { properties: { tier: 'gold' } });
    await tickUntil(async () => (await runsOf(id, afterResume.id)).length === 1, 'the entry after resume');
    expect(await runsOf(id, duringPause.id)).toHaveLength(0);
  });
});
