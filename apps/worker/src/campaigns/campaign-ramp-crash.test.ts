import { setTimeout as sleep } from 'node:timers/promises';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { exitSignal, freezeSesAndKill, spawnWorkerProcess, startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';

// A ramped campaign (2 ×2, batchSize 10, 1-minute windows, 30 contacts: windows of 2, 4, 8, 10, 6)
// run by the worker as a real process, SIGKILLed between windows and inside one. A worker process
// keeps real time, so "a minute passes" is done by moving the open window's start back a minute
// while no worker runs (what the engine reads to decide that the window ended).
// As in campaign-crash.test.ts, every kill lands while the fake SES accepts nothing and every
// accepted message is recorded, so the send pipeline's one known resend cannot blur the result.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv();
});
afterAll(() => env.close());

const DOMAIN = 'ramp-kill.test';

const startWorkerProcess = () =>
  spawnWorkerProcess(env, { extraEnv: { SEND_CONCURRENCY: '4', CAMPAIGN_SCAN_INTERVAL_MS: '300' }, stdio: ['ignore', 'ignore', 'ignore'] });

it('a ramped campaign whose worker is SIGKILLed between and inside windows sends 2, 4, 8, 10, 6, each contact once', async () => {
  const book = await seedContactBook(env.deps.db, env.teamId, { subscribed: 30 }, { domain: DOMAIN });
  const id = await insertScheduledCampaign(env.deps.db, {
    teamId: env.teamId,
    domainId: env.domain.id,
    contactBookId: book.id,
    from: `news@${env.domain.name}`,
    scheduledAt: new Date(Date.now() - 1000),
    batchSize: 10,
    batchWindowMinutes: 1,
    ramp: { start: 2, factor: 2 },
  });
  const emails = () => env.deps.db.email.count({ where: { campaignId: id } });
  const window = async () => (await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).windowNumber;
  const minutePasses = () =>
    env.deps.db.$executeRaw`UPDATE "Campaign" SET "lastSentAt" = "lastSentAt" - interval '61 seconds' WHERE id = ${id}`;
  /** Waits for `n` emails in all, then watches several scans to see that no more come in this window. */
  const reaches = async (n: number) => {
    await env.waitFor(async () => (await emails()) >= n, 60_000);
    await sleep(1500);
    expect(await emails()).toBe(n);
  };
  const perWindow: number[] = [];
  let total = 0;
  const windowDone = async (n: number) => {
    await reaches(total + n);
    perWindow.push((await emails()) - total);
    total = await emails();
  };

  // Window 0, then killed between windows.
  let child = startWorkerProcess();
  await windowDone(2);
  expect(await freezeSesAndKill(env, child, id, DOMAIN)).toBe('SIGKILL');

  // Window 1 with a fresh process; killed inside it (its 4 are written), and the next process,
  // still inside window 1, adds nothing: the stored window is read back, not opened again.
  await minutePasses();
  child = startWorkerProcess();
  await windowDone(4);
  expect(await freezeSesAndKill(env, child, id, DOMAIN)).toBe('SIGKILL');
  child = startWorkerProcess();
  await sleep(4000);
  expect(await emails()).toBe(total);
  expect(await window()).toBe(1);
  expect(await freezeSesAndKill(env, child, id, DOMAIN)).toBe('SIGKILL');

  // Down "for three minutes": the next window is window 2 (8), never window 4.
  await minutePasses();
  await minutePasses();
  await minutePasses();
  child = startWorkerProcess();
  await windowDone(8);
  expect(await freezeSesAndKill(env, child, id, DOMAIN)).toBe('SIGKILL');
  await minutePasses();
  child = startWorkerProcess();
  await windowDone(10);
  expect(await freezeSesAndKill(env, child, id, DOMAIN)).toBe('SIGKILL');
  await minutePasses();
  child = startWorkerProcess();
  await windowDone(6);
  expect(perWindow).toEqual([2, 4, 8, 10, 6]);
  expect(await window()).toBe(4);

  const last = exitSignal(child);
  await env.waitFor(async () => (await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).status === 'SENT', 120_000);
  child.kill('SIGTERM');
  await last;
  const perRecipient = new Map<string, number>();
  for (const m of env.ses.messages) {
    const to = m.destination.to[0];
    if (to.endsWith(`@${DOMAIN}`)) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
  }
  expect(perRecipient.size).toBe(30);
  expect([...perRecipient.values()].filter((n) => n !== 1)).toEqual([]);
  expect(await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'SENT', total: 30, sent: 30 });
}, 300_000);
