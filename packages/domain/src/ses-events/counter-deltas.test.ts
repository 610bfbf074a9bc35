import { Client } from 'pg';
import { createDb, UTC_SESSION_OPTIONS, type Db } from '@mailrail/platform/db/client';
import { newId } from '@mailrail/platform/ids';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { countEmailStatus } from './count-email-status';
import { foldCounterDeltas, foldCounterDeltasOnce } from './counter-deltas';
import { processSesEventJob } from './process-ses-event';

// The counters are written in batches: an event appends a delta in its own transaction, a fold
// adds deltas up. These tests pin down that nothing is lost or counted twice on the way.

let url: string;
let db: Db;
beforeAll(async () => {
  url = await createTestDatabase();
  db = createDb(url, 30);
});
afterAll(async () => {
  await db.$disconnect();
  await dropDatabase(url);
});

const sql = () => prismaExecutor(db);

async function emails(teamId: number, n: number, campaignId: string | null = null): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId());
  await db.email.createMany({
    data: ids.map((id) => ({
      id,
      teamId,
      from: 'a@example.com',
      to: ['b@example.org'],
      subject: 's',
      latestStatus: 'SENT' as const,
      sesEmailId: `ses-${id}`,
      campaignId,
    })),
  });
  return ids;
}

function sesEvent(eventType: string, sesMessageId: string) {
  return {
    snsMessageId: newId(),
    topicArn: 'arn',
    message: JSON.stringify({ eventType, mail: { messageId: sesMessageId, timestamp: '2026-11-24T06:00:00.000Z', headers: [] } }),
  };
}

async function usageOf(teamId: number) {
  const [row] = await sql().query<{ delivered: number; opened: number; rows: number }>(
    `SELECT COALESCE(sum(delivered), 0)::int AS delivered, COALESCE(sum(opened), 0)::int AS opened, count(*)::int AS rows
       FROM "DailyEmailUsage" WHERE "teamId" = $1`,
    [teamId],
  );
  return row;
}

const pendingDeltas = async (teamId: number) =>
  (await sql().query<{ n: number }>(`SELECT count(*)::int AS n FROM "EmailCounterDelta" WHERE "teamId" = $1`, [teamId]))[0].n;

/** Runs `work` over `items` with `width` in flight. */
async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

it('many events of one team, processed 25 at a time while folds run, count each email once per status', async () => {
  const team = await db.team.create({ data: { name: 'busy' } });
  const campaign = await db.campaign.create({ data: { id: newId(), teamId: team.id, name: 'c', from: 'a@example.com', subject: 's' } });
  const ids = await emails(team.id, 300, campaign.id);
  // Every email: a Delivery, an Open, and SNS delivering the Open again under a new message id
  // (a second Open): 900 events, shuffled so one team's events overlap everywhere.
  const events = ids.flatMap((id) => [sesEvent('Delivery', `ses-${id}`), sesEvent('Open', `ses-${id}`), sesEvent('Open', `ses-${id}`)]);
  events.sort(() => Math.random() - 0.5);

  let folding = true;
  const folds = (async () => {
    let folded = 0;
    while (folding)
      folded += (await Promise.all([foldCounterDeltas(sql(), 50), foldCounterDeltas(sql(), 50)])).reduce((n, f) => n + f.folded, 0);
    return folded;
  })();
  try {
    await inParallel(events, 25, async (e) => expect(await processSesEventJob({ db }, e)).toBe('processed'));
  } finally {
    folding = false;
  }
  const foldedMeanwhile = await folds;
  await foldCounterDeltas(sql(), 1000);

  expect(await usageOf(team.id)).toEqual({ delivered: 300, opened: 300, rows: 1 });
  expect(await pendingDeltas(team.id)).toBe(0);
  const c = await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } });
  expect({ delivered: c.delivered, opened: c.opened }).toEqual({ delivered: 300, opened: 300 });
  const cumulated = await db.cumulatedMetrics.findUniqueOrThrow({ where: { teamId_domainId: { teamId: team.id, domainId: 0 } } });
  expect(cumulated.delivered).toBe(300);
  // The folds ran while events arrived (the counters were not all added at the end).
  expect(foldedMeanwhile).toBeGreaterThan(0);
}, 120_000);

it('a transaction that dies after counting leaves neither the flag nor the delta: the retry counts once', async () => {
  const team = await db.team.create({ data: { name: 'crash' } });
  const [id] = await emails(team.id, 1);
  const email = { id, teamId: team.id, domainId: null, campaignId: null };
  await expect(
    db.$transaction(async (tx) => {
      expect(await countEmailStatus(prismaExecutor(tx), email, 'DELIVERED')).toEqual(['delivered']);
      throw new Error('the process died before commit');
    }),
  ).rejects.toThrow('died');
  expect(await pendingDeltas(team.id)).toBe(0);
  expect((await db.email.findUniqueOrThrow({ where: { id } })).countedFlags).toBe(0);

  // The event is retried: counted now, and never again.
  expect(await db.$transaction((tx) => countEmailStatus(prismaExecutor(tx), email, 'DELIVERED'))).toEqual(['delivered']);
  expect(await db.$transaction((tx) => countEmailStatus(prismaExecutor(tx), email, 'DELIVERED'))).toEqual([]);
  await foldCounterDeltas(sql(), 1000);
  expect(await usageOf(team.id)).toMatchObject({ delivered: 1 });
});

it('a fold whose connection is killed before commit changes no counter and keeps its deltas; the next fold adds them once', async () => {
  const team = await db.team.create({ data: { name: 'fold-crash' } });
  for (const id of await emails(team.id, 5)) await processSesEventJob({ db }, sesEvent('Delivery', `ses-${id}`));
  await foldCounterDeltas(sql(), 1000);
  const ids = await emails(team.id, 7);
  for (const id of ids) await processSesEventJob({ db }, sesEvent('Delivery', `ses-${id}`));
  expect(await pendingDeltas(team.id)).toBe(7);

  const victim = new Client({ connectionString: url, options: UTC_SESSION_OPTIONS });
  await victim.connect();
  victim.on('error', () => undefined);
  const [{ pid }] = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  await victim.query('BEGIN');
  expect(
    await foldCounterDeltasOnce({ query: async (t, p) => (await victim.query(t, p as unknown[])).rows, execute: async () => 0 }, 1000),
  ).toBe(7);
  // Meanwhile another fold finds the lock taken and folds nothing (no double count).
  expect(await foldCounterDeltasOnce(sql(), 1000)).toBe(0);
  // The process dies before COMMIT: PostgreSQL rolls the fold back.
  await sql().query('SELECT pg_terminate_backend($1::int)', [pid]);
  await victim.end().catch(() => undefined);

  expect(await usageOf(team.id)).toMatchObject({ delivered: 5 });
  expect(await pendingDeltas(team.id)).toBe(7);
  expect(await foldCounterDeltas(sql(), 1000)).toEqual({ folded: 7 });
  expect(await usageOf(team.id)).toMatchObject({ delivered: 12 });
  expect(await foldCounterDeltas(sql(), 1000)).toEqual({ folded: 0 });
});

it("a deleted team's deltas are dropped by the fold, which goes on with the others", async () => {
  const gone = await db.team.create({ data: { name: 'gone' } });
  const kept = await db.team.create({ data: { name: 'kept' } });
  for (const id of await emails(gone.id, 2)) await processSesEventJob({ db }, sesEvent('Delivery', `ses-${id}`));
  for (const id of await emails(kept.id, 3)) await processSesEventJob({ db }, sesEvent('Delivery', `ses-${id}`));
  await db.team.delete({ where: { id: gone.id } });
  await foldCounterDeltas(sql(), 1000);
  expect(await pendingDeltas(gone.id)).toBe(0);
  expect(await usageOf(kept.id)).toMatchObject({ delivered: 3 });
});

it('one periodic run folds at most maxBatches batches; the next run goes on where it stopped', async () => {
  await foldCounterDeltas(sql(), 1000);
  const team = await db.team.create({ data: { name: 'flood' } });
  for (const id of await emails(team.id, 7)) await processSesEventJob({ db }, sesEvent('Delivery', `ses-${id}`));
  expect(await foldCounterDeltas(sql(), 2, 2)).toEqual({ folded: 4 });
  expect(await pendingDeltas(team.id)).toBe(3);
  expect(await foldCounterDeltas(sql(), 2, 2)).toEqual({ folded: 3 });
  expect(await usageOf(team.id)).toMatchObject({ delivered: 7 });
});
