import request from 'supertest';
import type { Queue } from 'bullmq';
import { startTestApi, type TestApi } from '../testing/api-harness';
import { sendQueueOf } from './testing';
import { sendGroupJobId } from '@mailrail/platform/queue/queues';

let api: TestApi;
let queue: Queue;
const from = 'hello@batch.org';

beforeAll(async () => {
  api = await startTestApi();
  queue = sendQueueOf(api);
  await api.addDomain(api.team.teamId, 'batch.org');
});

afterAll(async () => {
  await queue.close();
  await api.close();
});

const batch = (body: unknown, auth = api.team.auth) =>
  request(api.app)
    .post('/api/v1/emails/batch')
    .set(auth)
    .send(body as object);
const item = (i: number, extra: Record<string, unknown> = {}) => ({ to: `r${i}@dest.org`, from, subject: `s${i}`, text: 'T', ...extra });
const counts = async () => ({
  emails: await api.deps.db.email.count(),
  events: await api.deps.db.emailEvent.count(),
  jobs: await queue.count(),
});

describe('POST /api/v1/emails/batch', () => {
  it('creates every email, answers the ids in input order and enqueues each', async () => {
    const scheduledAt = new Date(Date.now() + 600_000).toISOString();
    const before = Date.now();
    const res = await batch([item(0), item(1, { scheduledAt }), item(2)]);
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(3);
    const ids = res.body.data.map((d: { emailId: string }) => d.emailId);
    const rows = await api.deps.db.email.findMany({ where: { id: { in: ids } } });
    expect(ids.map((id: string) => rows.find((r) => r.id === id)!.subject)).toEqual(['s0', 's1', 's2']);
    expect(ids.map((id: string) => rows.find((r) => r.id === id)!.latestStatus)).toEqual(['QUEUED', 'SCHEDULED', 'QUEUED']);
    // The two due now share a group job; the scheduled one has a delayed job of its own.
    const group = await queue.getJob(sendGroupJobId(ids[0]));
    expect(group!.data).toEqual({ emailIds: [ids[0], ids[2]] });
    expect(rows.find((r) => r.id === ids[2])!.sendJobId).toBe(group!.id);
    const scheduled = await queue.getJob(ids[1]);
    expect(scheduled!.data).toEqual({ emailId: ids[1] });
    // Delayed until its time, counted from when the job was added.
    expect(scheduled!.opts.delay).toBeGreaterThanOrEqual(Date.parse(scheduledAt) - after);
    expect(scheduled!.opts.delay).toBeLessThanOrEqual(Date.parse(scheduledAt) - before);
    expect(rows.find((r) => r.id === ids[1])!.sendJobId).toBeNull();
  });

  it('takes 100 items and refuses 101 or none', async () => {
    const hundred = await batch(Array.from({ length: 100 }, (_, i) => item(i)));
    expect(hundred.status).toBe(200);
    expect(hundred.body.data).toHaveLength(100);

    const before = await counts();
    const tooMany = await batch(Array.from({ length: 101 }, (_, i) => item(i)));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/more than 100/);
    expect((await batch([])).status).toBe(400);
    expect((await batch({ to: 'a@dest.org' })).status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  it('writes nothing when one item is invalid, naming its index', async () => {
    const before = await counts();
    const res = await batch([item(0), item(1, { to: 'not-an-address' }), item(2)]);
    expect(res.status).toBe(400);
    expect(res.body.error.issues[0].path).toEqual([1, 'to']);
    expect(await counts()).toEqual(before);
  });

  it('writes nothing when one item has a domain that is not verified', async () => {
    await api.addDomain(api.team.teamId, 'unverified.org', { verified: false });
    const before = await counts();
    const res = await batch([item(0), item(1), item(2, { from: 'x@unverified.org' })]);
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path: [2, 'from'], message: 'Domain: unverified.org is not verified' }]);
    expect(await counts()).toEqual(before);
  });

  it('writes nothing when one item has an unknown template or a foreign inReplyToId', async () => {
    const before = await counts();
    const res = await batch([item(0, { templateId: 'nope' }), item(1, { inReplyToId: 'nope' })]);
    expect(res.status).toBe(400);
    expect(res.body.error.issues.map((i: { path: unknown[] }) => i.path)).toEqual([
      [0, 'templateId'],
      [1, 'inReplyToId'],
    ]);
    expect(await counts()).toEqual(before);
  });

  it('enforces the key domain on every item', async () => {
    const other = await api.addDomain(api.team.teamId, 'other-batch.org');
    const key = await api.newKey(api.team.teamId, { domainId: other.id });
    const before = await counts();
    const res = await batch([item(0, { from: 'x@other-batch.org' }), item(1)], { Authorization: `Bearer ${key}` });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('API key does not have access to domain: batch.org');
    expect(await counts()).toEqual(before);
  });

  it('includes items whose recipients are all suppressed, with their SUPPRESSED id', async () => {
    await api.deps.db.suppression.create({ data: { id: 'b-sup', teamId: api.team.teamId, email: 'r1@dest.org', reason: 'COMPLAINT' } });
    const res = await batch([item(0), item(1)]);
    expect(res.status).toBe(200);
    const [a, b] = res.body.data.map((d: { emailId: string }) => d.emailId);
    expect((await api.deps.db.email.findUniqueOrThrow({ where: { id: a } })).latestStatus).toBe('QUEUED');
    expect((await api.deps.db.email.findUniqueOrThrow({ where: { id: b } })).latestStatus).toBe('SUPPRESSED');
    expect(await queue.getJob(b)).toBeUndefined();
  });

  it('lets a SENDING key send a batch', async () => {
    const key = await api.newKey(api.team.teamId, { permission: 'SENDING' });
    expect((await batch([item(0)], { Authorization: `Bearer ${key}` })).status).toBe(200);
  });
});
