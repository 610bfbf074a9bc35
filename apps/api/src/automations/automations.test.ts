import request from 'supertest';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { addUser, signIn } from '../dashboard/testing';

// /api/v1/automations on the real database: definitions checked whole (graph, caps, the team's
// references), versions, status moves, and who may call what (another team, SENDING keys, keys
// bound to a domain, both dashboard roles). The runtime is test/e2e/automations.test.ts's.

let api: TestApi;
let other: TestTeam;
let bookId: string;
let contactId: string;
const DOMAIN = 'flows.example.com';
const send = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'sendEmail',
  from: `Team <hi@${DOMAIN}>`,
  subject: 'Hi',
  html: '<p>Hi</p>',
  ...extra,
});
const valid = () => ({
  name: 'Welcome',
  trigger: { type: 'event', event: 'user.signed_up' },
  steps: [send('a'), { id: 'w', type: 'wait', seconds: 60 }, send('b')],
});

beforeAll(async () => {
  api = await startTestApi();
  other = await api.newTeam('Other');
  await api.addDomain(api.team.teamId, DOMAIN);
  bookId = (await request(api.app).post('/api/v1/contactBooks').set(api.team.auth).send({ name: 'Users' }).expect(200)).body.id;
  contactId = (
    await request(api.app).post(`/api/v1/contactBooks/${bookId}/contacts`).set(api.team.auth).send({ email: 'ann@example.org' }).expect(200)
  ).body.contactId;
});
afterAll(() => api.close());

const create = (body: unknown, auth = api.team.auth) =>
  request(api.app)
    .post('/api/v1/automations')
    .set(auth)
    .send(body as object);

describe('definitions', () => {
  it('stores a valid definition as version 1, a draft, with the re-entry default', async () => {
    const { id } = (await create(valid()).expect(200)).body;
    const got = (await request(api.app).get(`/api/v1/automations/${id}`).set(api.team.auth).expect(200)).body;
    expect(got).toMatchObject({ id, name: 'Welcome', status: 'DRAFT', version: 1, reEntry: { mode: 'once' }, runs: { ACTIVE: 0 } });
    expect(got.steps.map((s: { id: string }) => s.id)).toEqual(['a', 'w', 'b']);
    const list = (await request(api.app).get('/api/v1/automations').set(api.team.auth).expect(200)).body;
    expect(list.data.map((a: { id: string }) => a.id)).toContain(id);
  });

  it('refuses bad graphs, caps and foreign references in the error shape, naming the field, never a 500', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid(), name: '' }, 'name'],
      [{ ...valid(), name: 'x'.repeat(256) }, 'name'],
      [{ ...valid(), trigger: { type: 'event', event: 'has space' } }, 'trigger'],
      [{ ...valid(), trigger: { type: 'webhook' } }, 'trigger'],
      [{ ...valid(), steps: [] }, 'steps'],
      [{ ...valid(), steps: Array.from({ length: 101 }, (_, i) => ({ id: `s${i}`, type: 'exit' })) }, 'steps'],
      [{ ...valid(), steps: [send('a'), send('a')] }, 'steps.1.id'],
      [{ ...valid(), steps: [send('a', { next: 'nowhere' })] }, 'steps.0.next'],
      [{ ...valid(), steps: [send('a', { next: 'b' }), send('b', { next: 'a' })] }, 'steps'],
      [{ ...valid(), steps: [{ id: 'w', type: 'wait' }] }, 'steps'],
      [{ ...valid(), steps: [{ id: 'w', type: 'wait', seconds: 60, untilTime: '09:00' }] }, 'steps'],
      [{ ...valid(), steps: [{ id: 'w', type: 'wait', untilTime: '25:00' }] }, 'steps'],
      [{ ...valid(), steps: [{ id: 'w', type: 'wait', seconds: 400 * 86_400 }] }, 'steps'],
      [{ ...valid(), steps: [send('a', { html: undefined })] }, 'steps'],
      [{ ...valid(), steps: [send('a', { subject: 'x'.repeat(999) })] }, 'steps'],
      [{ ...valid(), steps: [send('a', { html: 'x'.repeat(513 * 1024) })] }, 'steps'],
      [{ ...valid(), steps: [send('a', { from: 'Team <hi@not-ours.example>' })] }, 'steps.0.from'],
      [{ ...valid(), steps: [send('a', { html: undefined, subject: undefined, templateId: 'nope' })] }, 'steps.0.templateId'],
      [{ ...valid(), steps: [{ id: 'add', type: 'addToBook', contactBookId: 'nope' }] }, 'steps.0.contactBookId'],
      [{ ...valid(), trigger: { type: 'contactAdded', contactBookId: 'nope' } }, 'trigger.contactBookId'],
      [{ ...valid(), reEntry: { mode: 'oncePerPeriod', periodSeconds: 1 } }, 'reEntry'],
      [{ ...valid(), steps: [{ id: 'b', type: 'branch', condition: { conditions: [] } }] }, 'steps'],
      [{ ...valid(), steps: [{ id: 'u', type: 'updateContact', properties: {} }] }, 'steps'],
      [{ ...valid(), extra: true }, ''],
    ];
    const wrong: string[] = [];
    for (const [body, path] of cases) {
      const res = await create(body);
      const paths: string[] = (res.body.error?.issues ?? []).map((i: { path: unknown[] }) => i.path.join('.'));
      if (res.status !== 400 || res.body.error.code !== 'BAD_REQUEST' || !paths.some((p) => p.startsWith(path)))
        wrong.push(`${JSON.stringify(body).slice(0, 100)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('an edit of the definition is a new version; a name alone is not; a bad edit changes nothing', async () => {
    const { id } = (await create(valid()).expect(200)).body;
    const v2 = (
      await request(api.app)
        .patch(`/api/v1/automations/${id}`)
        .set(api.team.auth)
        .send({ steps: [send('only')] })
        .expect(200)
    ).body;
    expect(v2).toMatchObject({ version: 2, trigger: { event: 'user.signed_up' } });
    expect(
      (await request(api.app).patch(`/api/v1/automations/${id}`).set(api.team.auth).send({ name: 'New name' }).expect(200)).body,
    ).toMatchObject({
      version: 2,
      name: 'New name',
    });
    await request(api.app)
      .patch(`/api/v1/automations/${id}`)
      .set(api.team.auth)
      .send({ steps: [send('a', { next: 'a' })] })
      .expect(400);
    await request(api.app).patch(`/api/v1/automations/${id}`).set(api.team.auth).send({}).expect(400);
    expect(await api.deps.db.automationVersion.count({ where: { automationId: id } })).toBe(2);
  });

  it('moves draft → active → paused → active; any other move is a 400; delete removes it', async () => {
    const { id } = (await create(valid()).expect(200)).body;
    const move = (m: string) => request(api.app).post(`/api/v1/automations/${id}/${m}`).set(api.team.auth);
    await move('pause').expect(400);
    await move('resume').expect(400);
    expect((await move('activate').expect(200)).body.status).toBe('ACTIVE');
    await move('activate').expect(400);
    expect((await move('pause').expect(200)).body.status).toBe('PAUSED');
    expect((await move('resume').expect(200)).body.status).toBe('ACTIVE');
    expect((await request(api.app).delete(`/api/v1/automations/${id}`).set(api.team.auth).expect(200)).body).toEqual({ id, deleted: true });
    await request(api.app).get(`/api/v1/automations/${id}`).set(api.team.auth).expect(404);
  });
});

describe('access', () => {
  let id: string;
  let runId: string;
  beforeAll(async () => {
    id = (await create(valid()).expect(200)).body.id;
    runId = 'run-of-team-1';
    const now = new Date();
    await api.deps.db.automationRun.create({
      data: {
        id: runId,
        teamId: api.team.teamId,
        automationId: id,
        version: 1,
        contactId,
        entryKey: 'once',
        sourceId: 'x',
        stepId: 'a',
        dueAt: now,
        enteredAt: now,
        updatedAt: now,
      },
    });
  });

  const routes = () =>
    [
      ['get', `/api/v1/automations/${id}`],
      ['patch', `/api/v1/automations/${id}`, { name: 'Taken' }],
      ['delete', `/api/v1/automations/${id}`],
      ['post', `/api/v1/automations/${id}/activate`],
      ['post', `/api/v1/automations/${id}/pause`],
      ['post', `/api/v1/automations/${id}/resume`],
      ['get', `/api/v1/automations/${id}/runs`],
      ['get', `/api/v1/automations/${id}/steps`],
      ['get', `/api/v1/automations/${id}/runs/${runId}`],
      ['post', `/api/v1/automations/${id}/dry-run`, { contactId }],
    ] as const;
  const call = (method: string, path: string, auth: { Authorization: string }, body?: object) => {
    const req = (request(api.app) as unknown as Record<string, (p: string) => request.Test>)[method](path).set(auth);
    return body ? req.send(body) : req;
  };

  it("gives another team 404 on every route of this team's automation, and an empty list", async () => {
    for (const [method, path, body] of routes()) expect([path, (await call(method, path, other.auth, body)).status]).toEqual([path, 404]);
    expect((await request(api.app).get('/api/v1/automations').set(other.auth).expect(200)).body.data).toEqual([]);
    // Nor may it name this team's books or domains in its own.
    await create({ ...valid(), trigger: { type: 'contactAdded', contactBookId: bookId } }, other.auth).expect(400);
    await create(valid(), other.auth).expect(400);
    expect(await api.deps.db.automation.count({ where: { id, name: 'Welcome', status: 'DRAFT' } })).toBe(1);
  });

  it('refuses SENDING keys and keys bound to a domain on every route (403)', async () => {
    const sending = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { permission: 'SENDING' })}` };
    const domain = await api.deps.db.domain.findFirstOrThrow({ where: { teamId: api.team.teamId, name: DOMAIN } });
    const bound = { Authorization: `Bearer ${await api.newKey(api.team.teamId, { domainId: domain.id })}` };
    for (const auth of [sending, bound]) {
      for (const [method, path, body] of routes()) expect([path, (await call(method, path, auth, body)).status]).toEqual([path, 403]);
      expect((await request(api.app).get('/api/v1/automations').set(auth)).status).toBe(403);
      expect((await create(valid(), auth)).status).toBe(403);
    }
  });

  it('works for both dashboard roles through the team API', async () => {
    for (const role of ['MEMBER', 'ADMIN'] as const) {
      const { email } = await addUser(api, [{ teamId: api.team.teamId, role }]);
      const browser = await signIn(api, email);
      const base = `/api/dashboard/teams/${api.team.teamId}/v1/automations`;
      const made = (await browser.post(base, valid()).expect(200)).body.id;
      expect((await browser.get(`${base}/${made}`).expect(200)).body.status).toBe('DRAFT');
      await browser.post(`${base}/${made}/activate`, {}).expect(200);
      expect((await browser.get(`${base}/${id}/runs/${runId}`).expect(200)).body.run.id).toBe(runId);
      await browser.post(`${base}/${id}/dry-run`, { contactId }).expect(200);
      expect((await browser.get(`${base}/${id}/steps`).expect(200)).body.data).toEqual([
        { stepId: 'a', entered: 1, waiting: 1, done: 0, exited: 0 },
      ]);
    }
  });
});

describe('per-step counts', () => {
  it('counts each step: entered, waiting (a wait holds its runs), done and exited', async () => {
    const { id } = (await create(valid()).expect(200)).body;
    const at = new Date('2026-12-01T10:00:00Z');
    const contacts: string[] = [];
    for (let i = 0; i < 5; i++)
      contacts.push(
        (
          await request(api.app)
            .post(`/api/v1/contactBooks/${bookId}/contacts`)
            .set(api.team.auth)
            .send({ email: `counted${i}@example.org` })
            .expect(200)
        ).body.contactId,
      );
    // [status, stepId, stepCount, log as [stepId, outcome, next][]]
    const runs: [string, string | null, [string, string, string | null][]][] = [
      ['ACTIVE', 'a', []], // due to run the first step
      [
        'ACTIVE',
        'b',
        [
          ['a', 'sent', 'w'],
          ['w', 'waited', 'b'],
        ],
      ], // in the wait
      [
        'COMPLETED',
        null,
        [
          ['a', 'sent', 'w'],
          ['w', 'waited', 'b'],
          ['b', 'sent', null],
        ],
      ],
      [
        'EXITED',
        null,
        [
          ['a', 'sent', 'w'],
          ['w', 'waited', 'b'],
          ['b', 'unsubscribed', null],
        ],
      ],
      ['FAILED', null, [['a', 'failed', null]]],
    ];
    for (const [i, [status, stepId, log]] of runs.entries()) {
      const runId = `counted-${id}-${i}`;
      await api.deps.db.automationRun.create({
        data: {
          id: runId,
          teamId: api.team.teamId,
          automationId: id,
          version: 1,
          contactId: contacts[i],
          entryKey: 'once',
          sourceId: 'x',
          status: status as 'ACTIVE',
          stepId,
          stepCount: log.length,
          dueAt: stepId ? at : null,
          enteredAt: at,
          updatedAt: at,
        },
      });
      await api.deps.db.automationRunLog.createMany({
        data: log.map(([step, outcome, next], n) => ({
          runId,
          seq: n + 1,
          stepId: step,
          stepType: step === 'w' ? 'wait' : 'sendEmail',
          outcome,
          detail: '',
          nextStepId: next,
          at,
        })),
      });
    }
    const counts = (await request(api.app).get(`/api/v1/automations/${id}/steps`).set(api.team.auth).expect(200)).body.data;
    expect(counts).toEqual([
      { stepId: 'a', entered: 5, waiting: 1, done: 3, exited: 1 },
      { stepId: 'b', entered: 2, waiting: 0, done: 1, exited: 1 },
      { stepId: 'w', entered: 3, waiting: 1, done: 2, exited: 0 },
    ]);
  });
});

describe('runs and dry run for the dashboard', () => {
  it("lists runs with the contact's address and book, and takes a dry run's contact by email", async () => {
    const { id } = (await create(valid()).expect(200)).body;
    const now = new Date();
    await api.deps.db.automationRun.create({
      data: {
        id: `addr-${id}`,
        teamId: api.team.teamId,
        automationId: id,
        version: 1,
        contactId,
        entryKey: 'once',
        sourceId: 'x',
        stepId: 'a',
        dueAt: now,
        enteredAt: now,
        updatedAt: now,
      },
    });
    const runs = (await request(api.app).get(`/api/v1/automations/${id}/runs`).set(api.team.auth).expect(200)).body.data;
    expect(runs[0]).toMatchObject({ contactId, contactEmail: 'ann@example.org', contactBookId: bookId });
    const dry = (path: string, body: object) => request(api.app).post(`/api/v1/automations/${path}/dry-run`).set(api.team.auth).send(body);
    const byEmail = (await dry(id, { email: 'ANN@example.org' }).expect(200)).body;
    expect(byEmail).toMatchObject({ enters: true, path: [{ stepId: 'a' }, { stepId: 'w' }, { stepId: 'b' }] });
    const unknown = (await dry(id, { email: 'nobody@example.org' }).expect(400)).body;
    expect(unknown.error.issues).toEqual([{ path: ['email'], message: 'Contact not found' }]);
    await dry(id, { email: 'ann@example.org', contactId }).expect(400);
    await dry(id, {}).expect(400);
    // Another team cannot reach this team's contact by its address.
    await api.addDomain(other.teamId, 'other-team.example');
    const theirs = (await create({ ...valid(), steps: [send('a', { from: 'O <o@other-team.example>' })] }, other.auth).expect(200)).body.id;
    const refused = await request(api.app).post(`/api/v1/automations/${theirs}/dry-run`).set(other.auth).send({ email: 'ann@example.org' });
    expect([refused.status, refused.body.error.issues]).toEqual([400, [{ path: ['email'], message: 'Contact not found' }]]);
  });
});
