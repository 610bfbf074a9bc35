import request from 'supertest';
import type { Queue } from 'bullmq';
import { newEmailId, newId } from '@mailrail/platform/ids';
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
    // Spread creation times over five days so the date filters have something to cut. An email's
    // id is minted from its creation time (the email log is partitioned by it): both move.
    for (const [i, id] of ids.entries()) {
      const createdAt = new Date(Date.UTC(2026, 0, 1 + i, 12));
      ids[i] = (await api.deps.db.email.update({ where: { id }, data: { id: newEmailId(createdAt), createdAt } })).id;
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
    // The largest page the query accepts: its offset (about 2e11) is past PostgreSQL's int4.
    const far = await list('?page=2147483647&limit=100');
    expect(far.status).toBe(200);
    expect(far.body).toEqual({ data: [], count: 5 });
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

  it('counts up to EMAIL_LIST_COUNT_CAP: past it, count is the cap and countCapped is true; the filters apply to the count', async () => {
    const cap = api.deps.config.EMAIL_LIST_COUNT_CAP;
    try {
      api.deps.config.EMAIL_LIST_COUNT_CAP = 3;
      const res = await list('?limit=2');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ count: 3, countCapped: true });
      expect(res.body.data).toHaveLength(2);
      // Later pages are still served: the cap bounds the count, not the list.
      expect((await list('?page=3&limit=2')).body.data.map((e: { subject: string }) => e.subject)).toEqual(['n0']);
      // Exactly the cap, or fewer: the exact count, and useSend's shape ({data, count} only).
      const d1Only = await list(`?domainId=${d1}`);
      expect(d1Only.body.count).toBe(3);
      expect(Object.keys(d1Only.body).sort()).toEqual(['count', 'data']);
      expect((await list('?startDate=2026-01-02T00:00:00Z&endDate=2026-01-04T00:00:00Z')).body).toEqual(
        expect.not.objectContaining({ countCapped: expect.anything() }),
      );
      api.deps.config.EMAIL_LIST_COUNT_CAP = 4;
      expect((await list(`?domainId=${d1}&domainId=${d2}`)).body).toMatchObject({ count: 4, countCapped: true });
      // A key bound to a domain: the count is of its domain only.
      const key = await api.newKey(team.teamId, { domainId: d2 });
      expect(Object.keys((await list('', { Authorization: `Bearer ${key}` })).body).sort()).toEqual(['count', 'data']);
    } finally {
      api.deps.config.EMAIL_LIST_COUNT_CAP = cap;
    }
  });

  it('forces the key domain and never shows another team', async () => {
    const key = await api.newKey(team.teamId, { domainId: d2 });
    const res = await list(`?domainId=${d1}`, { Authorization: `Bearer ${key}` });
    expect(res.body.count).toBe(2);
    const foreign = await list('', other.auth);
    expect(foreign.body.data.every((e: { id: string }) => !ids.includes(e.id))).toBe(true);
  });

  it('filters by source and by campaign (mailrail additions), with the count agreeing', async () => {
    const mine = await api.deps.db.campaign.create({
      data: { id: newId(), teamId: team.teamId, name: 'C', from: 'me@l1.org', subject: 'S' },
    });
    const theirs = await api.deps.db.campaign.create({
      data: { id: newId(), teamId: other.teamId, name: 'T', from: 'me@other.org', subject: 'S' },
    });
    // Two of the five become campaign emails (as the campaign window writes them), one SMTP.
    await api.deps.db.email.updateMany({ where: { id: { in: [ids[1], ids[3]] } }, data: { source: 'CAMPAIGN', campaignId: mine.id } });
    await api.deps.db.email.update({ where: { id: ids[2] }, data: { source: 'SMTP' } });
    const idsOf = (res: request.Response) => res.body.data.map((e: { id: string }) => e.id);
    const campaign = await list('?source=CAMPAIGN');
    expect([idsOf(campaign), campaign.body.count]).toEqual([[ids[3], ids[1]], 2]);
    const either = await list('?source=SMTP&source=API');
    expect([idsOf(either), either.body.count]).toEqual([[ids[4], ids[2], ids[0]], 3]);
    const byCampaign = await list(`?campaignId=${mine.id}&limit=1`);
    expect([idsOf(byCampaign), byCampaign.body.count]).toEqual([[ids[3]], 2]);
    expect((await list(`?campaignId=${mine.id}&domainId=${d1}`)).body.count).toBe(0);
    // Another team's campaign matches nothing, for either team.
    expect((await list(`?campaignId=${theirs.id}`)).body).toEqual({ data: [], count: 0 });
    expect((await list(`?campaignId=${mine.id}`, other.auth)).body).toEqual({ data: [], count: 0 });
    for (const qs of ['?source=FAX', '?source=api', `?campaignId=${encodeURIComponent('a b')}`, `?campaignId=${'c'.repeat(129)}`]) {
      const bad = await list(qs);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'BAD_REQUEST', message: expect.any(String) });
    }
  });
});

describe('GET /api/v1/emails: the count and the list agree', () => {
  it('for every combination of domainId, startDate, endDate and a domain-bound key, count is the number of emails the pages list, and they are the matching ones', async () => {
    const team = await api.newTeam('Agree');
    const d1 = (await api.addDomain(team.teamId, 'g1.org')).id;
    const d2 = (await api.addDomain(team.teamId, 'g2.org')).id;
    const day = (d: number, minutes = 0) => new Date(Date.UTC(2026, 2, 10 + d, 12, minutes));
    const rows: { id: string; domainId: number | null; createdAt: Date }[] = [];
    const insert = async (teamId: number, id: string, domainId: number | null, createdAt: Date) => {
      await api.deps.db.email.create({
        data: { id, teamId, domainId, from: 'me@g1.org', to: ['x@dest.org'], replyTo: [], cc: [], bcc: [], subject: 'S', createdAt },
      });
      if (teamId === team.teamId) rows.push({ id, domainId, createdAt });
    };
    for (let d = 0; d < 4; d++)
      for (const [m, domainId] of [d1, d2, null].entries()) await insert(team.teamId, newEmailId(day(d, m)), domainId, day(d, m));
    // An id from before time-ordered ids (the legacy partition), and another team's emails on the same days.
    await insert(team.teamId, newId(), d1, day(1, 30));
    for (let d = 0; d < 4; d++) await insert(other.teamId, newEmailId(day(d, 5)), null, day(d, 5));

    const bound = { Authorization: `Bearer ${await api.newKey(team.teamId, { domainId: d2 })}` };
    const start = day(1, 0).toISOString();
    const end = day(2, 1).toISOString(); // exactly the createdAt of an email: inclusive
    for (const [auth, boundTo] of [
      [team.auth, null],
      [bound, d2],
    ] as const)
      for (const domains of [[], [d1], [d2], [d1, d2]])
        for (const startDate of [undefined, start])
          for (const endDate of [undefined, end]) {
            const qs = [...domains.map((d) => `domainId=${d}`), startDate && `startDate=${startDate}`, endDate && `endDate=${endDate}`]
              .filter(Boolean)
              .join('&');
            const allowed = boundTo !== null ? [boundTo] : domains.length ? domains : null;
            const expected = rows
              .filter((r) => !allowed || (r.domainId !== null && allowed.includes(r.domainId)))
              .filter((r) => (!startDate || r.createdAt >= new Date(startDate)) && (!endDate || r.createdAt <= new Date(endDate)))
              .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
              .map((r) => r.id);
            const listed: string[] = [];
            for (let page = 1; page <= 10; page++) {
              const res = await request(api.app).get(`/api/v1/emails?${qs}&limit=2&page=${page}`).set(auth);
              expect(res.status).toBe(200);
              expect({ qs, boundTo, count: res.body.count }).toEqual({ qs, boundTo, count: expected.length });
              if (res.body.data.length === 0) break;
              listed.push(...res.body.data.map((e: { id: string }) => e.id));
            }
            expect({ qs, boundTo, listed }).toEqual({ qs, boundTo, listed: expected });
          }
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
    expect(res.body).toMatchObject({ source: 'API', attachmentList: [] });
    expect(res.body.emailEvents.map((e: { status: string }) => e.status)).toEqual(['SCHEDULED', 'CANCELLED']);
    expect(res.body.emailEvents[0]).toEqual({
      emailId: id,
      status: 'SCHEDULED',
      createdAt: expect.any(String),
      data: { scheduledAt: expect.any(String) },
    });
  });

  it('lists the attachments by name, type and size, never their content, also once the contents are cleared', async () => {
    const pdf = Buffer.from('%PDF-1.4 fake');
    const id = await send({
      attachments: [
        { filename: 'invoice.pdf', content: pdf.toString('base64') },
        { filename: 'notes.txt', content: Buffer.from('hi').toString('base64') },
      ],
    });
    const expected = [
      { filename: 'invoice.pdf', contentType: 'application/pdf', size: pdf.length },
      { filename: 'notes.txt', contentType: 'text/plain', size: 2 },
    ];
    const res = await get(id);
    expect(res.body.attachmentList).toEqual(expected);
    expect(JSON.stringify(res.body)).not.toContain(pdf.toString('base64'));
    // SES accepted it: the contents go (ses-acceptance.ts), the list stays.
    await api.deps.db.$executeRawUnsafe('UPDATE "Email" SET attachments = NULL WHERE id = $1', id);
    expect((await get(id)).body.attachmentList).toEqual(expected);
    // Another team sees nothing of it.
    expect((await get(id, other.auth)).status).toBe(404);
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
    const before = Date.now();
    const res = await patch(id, { scheduledAt: withOffset });
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ emailId: id });
    const row = await api.deps.db.email.findUniqueOrThrow({ where: { id } });
    expect(row.scheduledAt!.getTime()).toBe(target.getTime());
    expect(row.latestStatus).toBe('SCHEDULED');
    const job = await queue.getJob(id);
    expect(await job!.isDelayed()).toBe(true);
    // changeDelay counts from the moment of the change: the job is due at the new time, late by no
    // more than the time between the API reading its clock and BullMQ reading its own. The due
    // time is the delayed set's score (BullMQ keeps it in ms * 0x1000 plus a sequence).
    const score = Number(await api.deps.redis.zscore(queue.keys.delayed, id));
    const due = Math.floor(score / 0x1000);
    expect(due).toBeGreaterThanOrEqual(target.getTime());
    expect(due).toBeLessThanOrEqual(target.getTime() + (after - before));
  });

  it('adds a new delayed job when the old one is gone', async () => {
    const id = await send({ scheduledAt: later() });
    await queue.remove(id);
    const target = later(2 * hour);
    const before = Date.now();
    expect((await patch(id, { scheduledAt: target })).status).toBe(200);
    const after = Date.now();
    const job = await queue.getJob(id);
    expect(await job!.isDelayed()).toBe(true);
    // Delayed until the new time, counted from when the job was added.
    expect(job!.opts.delay).toBeGreaterThanOrEqual(Date.parse(target) - after);
    expect(job!.opts.delay).toBeLessThanOrEqual(Date.parse(target) - before);
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
    const scheduledAt = later();
    const id = await send({ scheduledAt });
    expect((await patch(id, { scheduledAt: later(2 * hour) }, other.auth)).status).toBe(404);
    const bad = await patch(id, { scheduledAt: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toEqual(['scheduledAt']);
    // Neither moved it.
    expect((await api.deps.db.email.findUniqueOrThrow({ where: { id } })).scheduledAt!.toISOString()).toBe(scheduledAt);
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
