import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { exitSignal, freezeSesAndKill, spawnWorkerProcess, startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';

// The worker as a real process (`node --import tsx apps/worker/src/main.ts`), killed with SIGKILL
// three times during a 2,000-contact campaign, then left to finish. Four windows of 500 in chunks
// of 200: the first kill lands in the first window's writing (400 written), the others a third and
// two thirds of the way through the sending; 5,000 contacts proved no more and took 50 s.
//
// What "exactly once" can mean at SES: a worker killed after SES accepted a message but before it
// recorded the answer cannot know the message left (SES has no idempotency key), so that email is
// sent again after its lease. That boundary belongs to the send pipeline and is tested there. Here
// every kill lands while the fake SES accepts nothing (its calls hang without accepting, and the
// test waits until every accepted message is recorded), so the campaign engine is what is on
// trial: the first kill hits in the middle of writing the windows, the others mid-sending.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv();
});
afterAll(() => env.close());

const DOMAIN = 'crash.test';
const CONTACTS = 2000;

const startWorkerProcess = () =>
  spawnWorkerProcess(env, {
    extraEnv: { SEND_CONCURRENCY: '10', CAMPAIGN_SCAN_INTERVAL_MS: '500', CAMPAIGN_CHUNK_SIZE: '200' },
    stdio: ['ignore', 'ignore', 'ignore'],
  });

const atSes = () => env.ses.messages.filter((m) => m.destination.to[0].endsWith(`@${DOMAIN}`)).length;

it('a campaign whose worker is SIGKILLed three times still reaches every subscribed contact exactly once and ends SENT', async () => {
  const book = await seedContactBook(
    env.deps.db,
    env.teamId,
    { subscribed: CONTACTS, unsubscribed: 100, pending: 100 },
    { domain: DOMAIN },
  );
  const id = await insertScheduledCampaign(env.deps.db, {
    teamId: env.teamId,
    domainId: env.domain.id,
    contactBookId: book.id,
    from: `news@${env.domain.name}`,
    scheduledAt: new Date(Date.now() - 1000),
    batchSize: 500,
  });
  const emailsCreated = () => env.deps.db.email.count({ where: { campaignId: id } });

  // Kill 1: while the windows are being written (SES accepts nothing yet).
  env.ses.setRule(() => ({ kind: 'timeout', delayMs: 60_000 }));
  let child = startWorkerProcess();
  await env.waitFor(async () => (await emailsCreated()) >= 400, 60_000);
  expect(await freezeSesAndKill(env, child, id, DOMAIN)).toBe('SIGKILL');
  const afterFirstKill = await emailsCreated();
  expect(afterFirstKill).toBeLessThan(CONTACTS);

  // Kills 2 and 3: in the middle of sending.
  for (const threshold of [700, 1400]) {
    child = startWorkerProcess();
    await env.waitFor(async () => atSes() >= threshold, 90_000);
    expect(await freezeSesAndKill(env, child, id, DOMAIN)).toBe('SIGKILL');
  }
  expect(atSes()).toBeLessThan(CONTACTS);

  child = startWorkerProcess();
  const last = exitSignal(child);
  await env.waitFor(async () => (await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).status === 'SENT', 120_000);
  child.kill('SIGTERM');
  await last;

  const perRecipient = new Map<string, number>();
  for (const m of env.ses.messages) {
    const to = m.destination.to[0];
    if (to.endsWith(`@${DOMAIN}`)) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
  }
  expect(perRecipient.size).toBe(CONTACTS);
  expect([...perRecipient.entries()].filter(([, n]) => n !== 1)).toEqual([]);
  expect([...perRecipient.keys()].filter((a) => !/^s\d+@/.test(a))).toEqual([]);
  expect(await emailsCreated()).toBe(CONTACTS);
  expect(await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).toMatchObject({
    status: 'SENT',
    total: CONTACTS,
    sent: CONTACTS,
  });
  expect(await env.deps.db.campaignEmail.count({ where: { campaignId: id, status: 'SENT' } })).toBe(CONTACTS);
}, 360_000);
