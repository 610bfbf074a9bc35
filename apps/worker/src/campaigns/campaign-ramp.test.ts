import { pauseCampaignAndHoldEmails, resumePausedCampaign } from '@mailrail/domain/campaigns/campaign-state';
import { statementText, type SqlExecutor, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { runCampaignWindow, type CampaignWindowDeps } from './run-campaign-window';
import { prepareRecipients } from './prepare-recipients';

// Gradual sending, driven window by window with a controllable clock and no running worker: the
// window job is called as the engine calls it, and "crashes" are injected into its transaction.
// A ramp of 2 ×2 with batchSize 10 over 30 contacts must send windows of 2, 4, 8, 10 and 6.

let env: TestWorkerEnv;
let t = Date.UTC(2026, 10, 24, 9, 0, 0);
beforeAll(async () => {
  env = await startTestWorkerEnv({ CAMPAIGN_CHUNK_SIZE: '3' }); // chunks smaller than windows: a window spans chunks
  env.deps.clock = { now: () => new Date(t) };
});
afterAll(() => env.close());

const MINUTE = 60_000;

async function runningRampCampaign(domain: string): Promise<string> {
  const book = await seedContactBook(env.deps.db, env.teamId, { subscribed: 30 }, { domain });
  const id = await insertScheduledCampaign(env.deps.db, {
    teamId: env.teamId,
    domainId: env.domain.id,
    contactBookId: book.id,
    from: `news@${env.domain.name}`,
    scheduledAt: new Date(t - 1000),
    batchSize: 10,
    batchWindowMinutes: 1,
    ramp: { start: 2, factor: 2 },
  });
  await env.deps.db.campaign.update({ where: { id }, data: { status: 'RUNNING' } });
  await prepareRecipients(env.deps, id, new Date(t));
  return id;
}

const emailsOf = (campaignId: string) => env.deps.db.email.count({ where: { campaignId } });
const windowRows = async (campaignId: string) =>
  (await env.deps.db.campaignWindow.findMany({ where: { campaignId }, orderBy: { number: 'asc' } })).map((w) => ({
    number: w.number,
    size: w.size,
    queued: w.queued,
    openedAt: w.openedAt.getTime(),
  }));

/** Every recipient has at most one email, and every QUEUED recipient's email exists. */
async function expectOneEmailPerRecipient(campaignId: string): Promise<void> {
  const dupes = await env.deps.db.email.groupBy({
    by: ['contactId'],
    where: { campaignId },
    _count: true,
    having: { contactId: { _count: { gt: 1 } } },
  });
  expect(dupes).toEqual([]);
  const queued = await env.deps.db.campaignEmail.count({ where: { campaignId, status: 'QUEUED' } });
  expect(queued).toBe(await emailsOf(campaignId));
}

/**
 * The deps with a SQL pool whose transactions die right after the statement matching `crashAt`,
 * before COMMIT: what a worker killed at that point leaves behind (PostgreSQL rolls it back).
 */
function crashingDeps(crashAt: RegExp): CampaignWindowDeps {
  const pool = env.deps.sql;
  const sql: SqlPool = {
    ...pool,
    transaction: (work) =>
      pool.transaction((tx) => {
        const dying: SqlExecutor = {
          query: tx.query.bind(tx),
          execute: async (text, params) => {
            const n = await tx.execute(text, params);
            if (crashAt.test(statementText(text))) throw new Error('worker killed before COMMIT');
            return n;
          },
        };
        return work(dying);
      }),
  };
  return { ...env.deps, sql };
}

it('sends windows of 2, 4, 8, 10 and 6 and records each window on the campaign', async () => {
  const id = await runningRampCampaign('ramp.test');
  const perWindow: number[] = [];
  const windows: unknown[] = [];
  for (let k = 0; k < 6; k++) {
    const before = await emailsOf(id);
    await runCampaignWindow(env.deps, id);
    // The engine queues a window job about every second: more runs inside the window add nothing.
    await runCampaignWindow(env.deps, id);
    perWindow.push((await emailsOf(id)) - before);
    const c = await env.deps.db.campaign.findUniqueOrThrow({ where: { id } });
    windows.push({ number: c.windowNumber, size: c.windowSize, startedAt: c.lastSentAt?.getTime() });
    t += MINUTE;
  }
  expect(perWindow).toEqual([2, 4, 8, 10, 6, 0]);
  const start = t - 6 * MINUTE;
  expect(windows).toEqual([
    { number: 0, size: 2, startedAt: start },
    { number: 1, size: 4, startedAt: start + MINUTE },
    { number: 2, size: 8, startedAt: start + 2 * MINUTE },
    { number: 3, size: 10, startedAt: start + 3 * MINUTE },
    { number: 4, size: 10, startedAt: start + 4 * MINUTE },
    // Nothing pending: no window opens.
    { number: 4, size: 10, startedAt: start + 4 * MINUTE },
  ]);
  // Planned against actual, one row per window, written with its emails.
  expect(await windowRows(id)).toEqual([
    { number: 0, size: 2, queued: 2, openedAt: start },
    { number: 1, size: 4, queued: 4, openedAt: start + MINUTE },
    { number: 2, size: 8, queued: 8, openedAt: start + 2 * MINUTE },
    { number: 3, size: 10, queued: 10, openedAt: start + 3 * MINUTE },
    { number: 4, size: 10, queued: 6, openedAt: start + 4 * MINUTE },
  ]);
  await expectOneEmailPerRecipient(id);
  expect(await env.deps.db.campaignEmail.count({ where: { campaignId: id, status: 'PENDING' } })).toBe(0);
});

it('a crash while a window opens, and replays after it, neither send a window twice nor grow it twice', async () => {
  const id = await runningRampCampaign('ramp-crash.test');
  const perWindow: number[] = [];

  // Window 0 dies in its first chunk after its emails and its opening were written: nothing stays.
  await expect(runCampaignWindow(crashingDeps(/"windowNumber" =/), id)).rejects.toThrow('worker killed');
  expect(await emailsOf(id)).toBe(0);
  expect(await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).toMatchObject({ windowNumber: null, lastSentAt: null });
  // The job is retried: window 0 opens once, with its size.
  await runCampaignWindow(env.deps, id);
  perWindow.push(await emailsOf(id));

  // Window 1: the run dies after writing its first chunk's emails, before marking the recipients
  // (and before COMMIT): the replay in the same window sends window 1 once, 4 emails.
  t += MINUTE;
  let before = await emailsOf(id);
  await expect(runCampaignWindow(crashingDeps(/SET status = 'QUEUED'/), id)).rejects.toThrow('worker killed');
  expect(await emailsOf(id)).toBe(before);
  await runCampaignWindow(env.deps, id);
  await runCampaignWindow(env.deps, id); // a duplicated job after a stall
  perWindow.push((await emailsOf(id)) - before);

  // The worker is down for three windows: the next one is window 2 (8), not window 4: the ramp
  // counts the windows that sent, read from the campaign row, never the time that passed.
  t += 4 * MINUTE;
  for (let k = 0; k < 3; k++) {
    before = await emailsOf(id);
    await runCampaignWindow(env.deps, id);
    await runCampaignWindow(env.deps, id);
    perWindow.push((await emailsOf(id)) - before);
    t += MINUTE;
  }
  expect(perWindow).toEqual([2, 4, 8, 10, 6]);
  // The rolled-back runs counted nothing: each window's row holds what it sent, once.
  expect((await windowRows(id)).map((w) => [w.size, w.queued])).toEqual([
    [2, 2],
    [4, 4],
    [8, 8],
    [10, 10],
    [10, 6],
  ]);
  await expectOneEmailPerRecipient(id);
  expect(await env.deps.db.campaignEmail.count({ where: { campaignId: id, status: 'PENDING' } })).toBe(0);
});

it('a replay whose earlier run committed part of a window only fills the rest of that window', async () => {
  const id = await runningRampCampaign('ramp-partial.test');
  await runCampaignWindow(env.deps, id); // window 0: 2
  t += MINUTE;
  // Window 1 = 4 in chunks of 3: the second chunk of the run (the 4th email) dies.
  let chunks = 0;
  const pool = env.deps.sql;
  const secondChunkDies: CampaignWindowDeps = {
    ...env.deps,
    sql: {
      ...pool,
      transaction: async (work) => {
        if (++chunks === 2) throw new Error('worker killed');
        return pool.transaction(work);
      },
    },
  };
  await expect(runCampaignWindow(secondChunkDies, id)).rejects.toThrow('worker killed');
  expect(await emailsOf(id)).toBe(2 + 3);
  await runCampaignWindow(env.deps, id);
  expect(await emailsOf(id)).toBe(2 + 4);
  expect(await env.deps.db.campaign.findUniqueOrThrow({ where: { id } })).toMatchObject({ windowNumber: 1, windowSize: 4 });
  await expectOneEmailPerRecipient(id);
});

it("a pause takes the emails it holds back out of their window's count; they count in the window that sends them", async () => {
  const id = await runningRampCampaign('ramp-pause.test');
  await runCampaignWindow(env.deps, id); // window 0: 2 emails, which no worker claims here
  expect((await windowRows(id)).map((w) => w.queued)).toEqual([2]);
  expect(await pauseCampaignAndHoldEmails(env.deps.db, { id, teamId: env.teamId }, new Date(t))).toBe(true);
  expect((await windowRows(id)).map((w) => w.queued)).toEqual([0]);
  expect(await resumePausedCampaign(env.deps.db, { id, teamId: env.teamId }, new Date(t))).toBe(true);
  t += MINUTE;
  await runCampaignWindow(env.deps, id);
  expect((await windowRows(id)).map((w) => [w.size, w.queued])).toEqual([
    [2, 0],
    [4, 4],
  ]);
});
