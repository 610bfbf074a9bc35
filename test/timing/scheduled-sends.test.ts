import request from 'supertest';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

// A scheduled email reaches SES at its time (test/e2e/scheduling.test.ts has the rest of
// scheduling: cancelling, the lease guard, the sweeper). The tolerance is the rule's (README.md):
// never before its time (its job is delayed until then, and the sweeper adds a lost one again
// delayed until then); late by no more than one sweep (every second here, SEND_SWEEP_CRON: it adds
// the job again should Redis have lost it) and one lease (SEND_LEASE_SECONDS: a claim whose worker
// stalled or died is taken over when it ends). The real API reschedules, on the worker's database
// and Redis prefix.

const SWEEP_PERIOD_MS = 1000; // the worker harness's SEND_SWEEP_CRON, '* * * * * *'

let env: TestWorkerEnv;
let api: TestApi;
let auth: { Authorization: string };
let lateByAtMostMs: number;
beforeAll(async () => {
  env = await startTestWorkerEnv();
  api = await startTestApi({}, { databaseUrl: env.config.DATABASE_URL, redisPrefix: env.config.REDIS_PREFIX });
  auth = { Authorization: `Bearer ${await api.newKey(env.teamId)}` };
  lateByAtMostMs = SWEEP_PERIOD_MS + env.config.SEND_LEASE_SECONDS * 1000;
  await env.start();
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});
beforeEach(() => env.ses.reset());

async function reschedule(id: string, at: Date): Promise<void> {
  const res = await request(api.app).patch(`/api/v1/emails/${id}`).set(auth).send({ scheduledAt: at.toISOString() });
  expect(res.status).toBe(200);
}

/** When SES took the message to `address` (the fake SES's clock, this process's). */
const sentAt = (address: string) => env.waitFor(async () => env.ses.messagesTo(address)[0]?.at, 20_000);

function expectOnTime(sent: number, due: Date) {
  expect(sent).toBeGreaterThanOrEqual(due.getTime());
  expect(sent).toBeLessThanOrEqual(due.getTime() + lateByAtMostMs);
}

it('sends a scheduled email at its time', async () => {
  const at = new Date(Date.now() + 2500);
  const [id] = await env.createEmails([{ to: ['on-time@example.net'], scheduledAt: at }]);
  expect((await env.email(id)).latestStatus).toBe('SCHEDULED');
  expectOnTime(await sentAt('on-time@example.net'), at);
  await env.waitFor(async () => (await env.email(id)).latestStatus === 'SENT');
  expect((await env.events(id)).map((e) => e.status)).toEqual(['SCHEDULED', 'SENT']);
});

it('sends a rescheduled email at the new time, not the old one', async () => {
  const first = new Date(Date.now() + 2000);
  const [id] = await env.createEmails([{ to: ['moved@example.net'], scheduledAt: first }]);
  const moved = new Date(Date.now() + 4500);
  await reschedule(id, moved);
  expectOnTime(await sentAt('moved@example.net'), moved);
  expect(env.ses.messagesTo('moved@example.net')).toHaveLength(1);
});

it('sends an email moved earlier at its new time', async () => {
  const [id] = await env.createEmails([{ to: ['earlier@example.net'], scheduledAt: new Date(Date.now() + 60_000) }]);
  const moved = new Date(Date.now() + 1500);
  await reschedule(id, moved);
  expectOnTime(await sentAt('earlier@example.net'), moved);
});
