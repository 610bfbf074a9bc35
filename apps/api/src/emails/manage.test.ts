import request from 'supertest';
import type { Queue } from 'bullmq';
import { startTestApi, type TestApi, type TestTeam } from '../testing/api-harness';
import { sendQueueOf } from './testing';

let api: TestApi;
let queue: Queue;
let other: TestTeam;
let domainA: number;
let domainB: number;
const hour = 3600_000;

beforeAll(async () => {
  api = await startTestApi();
  queue = sendQueueOf(api);
  domainA = (await api.addDomain(api.team.teamId, 'a.org')).id;
  domainB = (await api.addDomain(api.team.teamId, 'b.org')).id;
  other = await api.newTeam('Other');
  await api.addDomain(other.teamId, 'other.org');
});

afterAll(async () => {
  await queue.close();
  await api.close();
});

const send = async (extra: Record<string, unknown> = {}, team: TestTeam = api.team) => {
  const res = await request(api.app)
    .post('/api/v1/emails')
    .set(team.auth)
    .send({ to: 'x@dest.org', from: 'me@a.org', subject: 'S', text: 'T', ...extra });
  expect(res.status).toBe(200);
  return res.body.emailId as string;
};
const later = (ms = hour) => new Date(Date.now() + ms).toISOString();
const get = (id: string, auth = api.team.auth) => request(api.app).get(`/api/v1/emails/${id}`).set(auth);
const patch = (id: string, body: unknown, auth = api.team.auth) =>
  request(api.app)
    .patch(`/api/v1/emails/${id}`)
    .set(auth)
    .send(body as object);
const cancel = (id: string, auth = api.team.auth) => request(api.app).post(`/api/v1/emails/${id}/cancel`).set(auth);

describe('GET /api/v1/emails', () => {
  let team: TestTeam;
  let d1: number;
  let d2: number;
  const ids: string[] = [];
  beforeAll(async () => {
    team = await api.newTeam('Lister');
    d1 = (await api.addDomain(team.teamId, 'l1.org')).id;
    d2 = (await api.addDomain(team.teamId, 'l2.org')).id;
    for (let i = 0; i < 5; i++) ids.push(await send({ from: `me@${i % 2 ? 'l2' : 'l1'}.org`, subject: `n${i}` }, team));
    // Spread creation times over five days so the date filters have something to cut.
    for (const [i, id] of ids.entries()) {
      await api.deps.db.email.update({ where: { id }, data: { createdAt: new Date(Date.UTC(2026, 0, 1 + i, 12)) } });
    }
  });
  const list = (qs: string, auth = team.auth) => request(api.app).get(`/api/v1/emails${qs}`).set(auth);

  it('lists newest first with the total count and every list field', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(5);
    expect(res.body.data.map((e: { subject: string }) => e.subject)).toEqual(['n4', 'n3', 'n2', 'n1', 'n0']);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(
      [
        'bcc',
        'cc',
        'createdAt',
        'domainId',
        'from',
        'html',
        'id',
        'latestStatus',
        'replyTo',
        'scheduledAt',
        'subject',
        'text',
        'to',
        'updatedAt',
      ].sort(),
    );
  });

  it('pages with page and limit', async () => {
    const res = await list('?page=2&limit=2');
    expect(res.body.data.map((e: { subject: string }) => e.subject)).toEqual(['n2', 'n1']);
    expect(res.body.count).toBe(5);
    expect((await list('?limit=101')).status).toBe(400);
    expect((await list('?page=0')).status).toBe(400);
  });

  it('applies startDate and endDate together', async () => {
    const res = await list('?startDate=2026-01-02T00:00:00Z&endDate=2026-01-04T00:00:00Z');
    expect(res.body.data.map((e: { subject: string }) => e.subject)).toEqual(['n2', 'n1']);
    expect(res.body.count).toBe(2);
    expect((await list('?startDate=yesterday')).body.error.issues[0].path).toEqual(['startDate']);
  });

  it('filters by one domainId or several', async () => {
    expect((await list(`?domainId=${d1}`)).body.count).toBe(3);
    expect((await list(`?domainId=${d2}`)).body.count).toBe(2);
    expect((await list(`?domainId=${d1}&domainId=${d2}`)).body.count).toBe(5);
  });

  it('forces the key domain and never shows another team', async () => {
    const key = await api.newKey(team.teamId, { domainId: d2 });
    const res = await list(`?domainId=${d1}`, { Authorization: `Bearer ${key}` });
    expect(res.body.count).toBe(2);
    const foreign = await list('', other.auth);
    expect(foreign.body.data.every((e: { id: string }) => !ids.includes(e.id))).toBe(true);
  });
});

describe('GET /api/v1/emails/{id}', () => {
  it('returns every field with the events oldest first', async () => {
    const id = await send({ cc: 'c@dest.org', bcc: 'b@dest.org', replyTo: 'r@a.org', scheduledAt: later() });
    expect((await cancel(id)).status).toBe(200);
    const res = await get(id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      teamId: api.team.teamId,
      to: ['x@dest.org'],
      from: 'me@a.org',
      subject: 'S',
      text: 'T',
      html: null,
      cc: ['c@dest.org'],
      bcc: ['b@dest.org'],
      replyTo: ['r@a.org'],
      latestStatus: 'CANCELLED',
      domainId: domainA,
    });
    expect(res.body.emailEvents.map((e: { status: string }) => e.status)).toEqual(['SCHEDULED', 'CANCELLED']);
    expect(res.body.emailEvents[0]).toEqual({
      emailId: id,
      status: 'SCHEDULED',
      createdAt: expect.any(String),
      data: { scheduledAt: expect.any(String) },
    });
  });

  it('answers 404 Email not found for another team, a key bound elsewhere, or nothing', async () => {
    const id = await send();
    for (const res of [await get(id, other.auth), await get('nothing-here')]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Email not found' });
    }
    const boundToB = await api.newKey(api.team.teamId, { domainId: domainB });
    expect((await get(id, { Authorization: `Bearer ${boundToB}` })).status).toBe(404);
  });

  it('answers 400 for an id shorter than 3 characters', async () => {
    const res = await get('ab');
    expect(res.status).toBe(400);
    expect(res.body.error.issues[0].path).toEqual(['emailId']);
  });
});

describe('PATCH /api/v1/emails/{id}', () => {
  it('moves a scheduled email and its job (offset accepted)', async () => {
    const id = await send({ scheduledAt: later() });
    const target = new Date(Date.now() + 5 * hour);
    const withOffset = new Date(target.getTime() - 3 * hour).toISOString().replace('Z', '-03:00');
    const res = await patch(id, { scheduledAt: withOffset });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ emailId: id });
    const row = await api.deps.db.email.findUniqueOrThrow({ where: { id } });
    expect(row.scheduledAt!.getTime()).toBe(target.getTime());
    expect(row.latestStatus).toBe('SCHEDULED');
    const job = await queue.getJob(id);
    expect(await job!.isDelayed()).toBe(true);
    // changeDelay counts from the moment of the change.
    expect(job!.timestamp + job!.delay).toBeGreaterThan(target.getTime() - 5_000);
    expect(job!.timestamp + job!.delay).toBeLessThan(target.getTime() + 5_000);
  });

  it('adds a new delayed job when the old one is gone', async () => {
    const id = await send({ scheduledAt: later() });
    await queue.remove(id);
    expect((await patch(id, { scheduledAt: later(2 * hour) })).status).toBe(200);
    const job = await queue.getJob(id);
    expect(await job!.isDelayed()).toBe(true);
    expect(job!.opts.delay).toBeGreaterThan(2 * hour - 10_000);
  });

  it('answers 400 Email already processed unless SCHEDULED', async () => {
    const id = await send();
    const res = await patch(id, { scheduledAt: later() });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Email already processed');
  });

  it('answers 400 while a worker holds the send lease', async () => {
    const id = await send({ scheduledAt: later() });
    await api.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: new Date(Date.now() + 60_000) } });
    expect((await patch(id, { scheduledAt: later(2 * hour) })).status).toBe(400);
    expect((await cancel(id)).status).toBe(400);
    // An expired lease is no longer a claim.
    await api.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: new Date(Date.now() - 1000) } });
    expect((await cancel(id)).status).toBe(200);
  });

  it('answers 404 for another team and 400 for a bad body', async () => {
    const id = await send({ scheduledAt: later() });
    expect((await patch(id, { scheduledAt: later(2 * hour) }, other.auth)).status).toBe(404);
    const bad = await patch(id, { scheduledAt: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toEqual(['scheduledAt']);
    expect((await api.deps.db.email.findUniqueOrThrow({ where: { id } })).scheduledAt!.getTime()).toBeLessThan(Date.now() + hour + 1000);
  });
});

describe('POST /api/v1/emails/{id}/cancel', () => {
  it('cancels a scheduled email: status, event, job removed', async () => {
    const id = await send({ scheduledAt: later() });
    expect(await queue.getJob(id)).toBeDefined();
    const res = await cancel(id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ emailId: id });
    const row = await api.deps.db.email.findUniqueOrThrow({ where: { id }, include: { emailEvents: { orderBy: { id: 'asc' } } } });
    expect(row.latestStatus).toBe('CANCELLED');
    expect(row.emailEvents.map((e) => e.status)).toEqual(['SCHEDULED', 'CANCELLED']);
    expect(await queue.getJob(id)).toBeUndefined();
  });

  it('refuses a second cancel and a QUEUED email with 400', async () => {
    const id = await send({ scheduledAt: later() });
    await cancel(id);
    const again = await cancel(id);
    expect(again.status).toBe(400);
    expect(again.body.error.message).toBe('Email already processed');
    expect((await cancel(await send())).status).toBe(400);
  });

  it('answers 404 for another team or a key bound to another domain, and changes nothing', async () => {
    const id = await send({ scheduledAt: later() });
    expect((await cancel(id, other.auth)).status).toBe(404);
    const boundToB = await api.newKey(api.team.teamId, { domainId: domainB });
    expect((await cancel(id, { Authorization: `Bearer ${boundToB}` })).status).toBe(404);
    expect((await api.deps.db.email.findUniqueOrThrow({ where: { id } })).latestStatus).toBe('SCHEDULED');
  });

  it('succeeds even when the job is already gone', async () => {
    const id = await send({ scheduledAt: later() });
    await queue.remove(id);
    expect((await cancel(id)).status).toBe(200);
  });

  it('is atomic against a worker claim: exactly one of them wins', async () => {
    for (let round = 0; round < 10; round++) {
      const id = await send({ scheduledAt: later() });
      // The worker's claim, as in the worker contract.
      const claim = api.deps.db.$executeRawUnsafe(
        `UPDATE "Email" SET "sendLeaseUntil" = now() + interval '1 minute'
         WHERE id = $1 AND "latestStatus" IN ('QUEUED','SCHEDULED') AND "sesEmailId" IS NULL
           AND ("sendLeaseUntil" IS NULL OR "sendLeaseUntil" < now())`,
        id,
      );
      const [claimed, res] = await Promise.all([claim, cancel(id)]);
      const cancelled = res.status === 200;
      expect(claimed === 1).toBe(!cancelled);
      expect((await api.deps.db.email.findUniqueOrThrow({ where: { id } })).latestStatus).toBe(cancelled ? 'CANCELLED' : 'SCHEDULED');
    }
  });
});
