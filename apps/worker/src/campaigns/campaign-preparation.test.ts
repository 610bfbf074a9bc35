import { Client } from 'pg';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertScheduledCampaign, seedContactBook } from '@mailrail/testing/campaign-fixtures';
import { newId } from '@mailrail/platform/ids';
import { startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { prepareRecipients } from './prepare-recipients';

// Recipient preparation runs on its own queue, in keyset batches under a statement timeout, and
// never inside the periodic worker. Team A's preparation is held up by an uncommitted recipient row
// (what a pathological segment filter does to a statement, without depending on this machine's
// speed): team B's campaign and the periodic jobs go on meanwhile.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv({
    CAMPAIGN_SCAN_INTERVAL_MS: '300',
    CAMPAIGN_PREPARATION_TIMEOUT_MS: '1500',
    CAMPAIGN_PREPARATION_ATTEMPTS: '2',
  });
  await env.start();
});
afterAll(() => env.close());

const campaign = (id: string) => env.deps.db.campaign.findUniqueOrThrow({ where: { id } });
const recipients = (campaignId: string) =>
  env.deps.db.campaignEmail.findMany({ where: { campaignId }, orderBy: { contactId: 'asc' }, select: { contactId: true, status: true } });

async function otherTeam(): Promise<number> {
  return (await createTeam(env.deps.db, `Team ${newId()}`)).id;
}

/**
 * A campaign of `subscribed` contacts, created an hour ahead so that no scan starts it while the test
 * sets it up (a segment, a held row); `due()` then makes it due in one update, as scheduled or (with
 * `running`) as the scan leaves a started one.
 */
async function campaignFor(teamId: number, domain: string, subscribed: number, opts: { running?: boolean; scheduledAt?: Date } = {}) {
  const book = await seedContactBook(env.deps.db, teamId, { subscribed }, { domain });
  const id = await insertScheduledCampaign(env.deps.db, {
    teamId,
    domainId: env.domain.id,
    contactBookId: book.id,
    from: `news@${env.domain.name}`,
    scheduledAt: new Date(Date.now() + 3_600_000),
  });
  const due = async (data: { segmentId?: string } = {}) => {
    await env.deps.db.campaign.update({
      where: { id },
      data: { ...data, scheduledAt: opts.scheduledAt ?? new Date(Date.now() - 1000), ...(opts.running ? { status: 'RUNNING' } : {}) },
    });
  };
  return { id, book: book.id, due };
}

/**
 * A transaction that has written (not committed) a recipient row of campaign `id`, until release():
 * its preparation waits on that row (and on the key share it holds on the campaign), as a statement
 * of a pathological filter runs on; the campaign row itself stays free for other updates.
 */
async function holdPreparation(id: string, bookId: string) {
  const client = new Client({ connectionString: env.config.DATABASE_URL });
  await client.connect();
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO "CampaignEmail" ("campaignId", "contactId", email, status, "createdAt", "updatedAt")
     SELECT $1, id, email, 'PENDING', now(), now() FROM "Contact" WHERE "contactBookId" = $2 ORDER BY id LIMIT 1`,
    [id, bookId],
  );
  return {
    release: async () => {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

describe("one team's slow preparation", () => {
  it("delays neither another team's campaign nor the periodic jobs, and once it fails for good it is paused with its reason and not run again", async () => {
    const a = await campaignFor(env.teamId, 'held.test', 30, { running: true, scheduledAt: new Date(Date.now() - 60_000) });
    const lock = await holdPreparation(a.id, a.book);
    await a.due();
    try {
      const teamB = await otherTeam();
      const b = await campaignFor(teamB, 'free.test', 20);
      await b.due();
      const lockedAt = Date.now();
      // B is started, prepared, sent and finished: every step of it ran while A's preparation could not.
      await env.waitFor(async () => (await campaign(b.id)).status === 'SENT', 30_000);
      expect(await campaign(b.id)).toMatchObject({ total: 20, sent: 20 });
      expect(await recipients(a.id)).toEqual([]);
      // Another periodic job (the unsent-email sweeper, every second here) ran meanwhile too.
      await env.sweptSince(lockedAt);
      expect(await recipients(a.id)).toEqual([]);

      // A's batch times out on every try: the campaign is paused with the reason, not left RUNNING.
      await env.waitFor(async () => (await campaign(a.id)).status === 'PAUSED', 30_000);
    } finally {
      await lock.release();
    }
    const paused = await campaign(a.id);
    expect(paused.pausedReason).toMatch(/recipients could not be prepared after 2 attempts/);
    expect(paused.recipientsReadyAt).toBeNull();
    // The scans after it (the lock is gone now) leave it alone.
    const after = Date.now();
    await env.sweptSince(after);
    await env.sweptSince(Date.now());
    expect(await campaign(a.id)).toMatchObject({ status: 'PAUSED', recipientsReadyAt: null });
    expect(await recipients(a.id)).toEqual([]);
  });
});

describe('a segment filter over the cost budget (saved before the budget existed)', () => {
  it('is never evaluated: the campaign is paused at once with the reason, and no recipient is written', async () => {
    const { id, book, due } = await campaignFor(env.teamId, 'costly.test', 10);
    // 20 groups of 20 long `contains` values, written past the API's validation as an old row is.
    const conditions = Array.from({ length: 20 }, (_, g) => ({
      match: 'any',
      conditions: Array.from({ length: 20 }, (_, c) => ({
        field: 'firstName',
        operator: 'contains',
        value: `${g}-${c}-`.padEnd(1000, 'x'),
      })),
    }));
    const segmentId = newId();
    await env.deps.db.segment.create({
      data: { id: segmentId, teamId: env.teamId, contactBookId: book, name: 'Costly', filter: { match: 'all', conditions } },
    });
    // Due only now: a scan that started it before the segment was attached would send to the whole book.
    await due({ segmentId });
    await env.waitFor(async () => (await campaign(id)).status === 'PAUSED', 30_000);
    const paused = await campaign(id);
    expect(paused.pausedReason).toMatch(/too costly to evaluate/);
    expect(paused.recipientsReadyAt).toBeNull();
    expect(await recipients(id)).toEqual([]);
  });
});

describe('prepareRecipients in keyset batches', () => {
  it('writes exactly the segment’s subscribed contacts of a book larger than a batch, and resumes after a crash without a duplicate', async () => {
    const book = await seedContactBook(env.deps.db, env.teamId, { subscribed: 57, unsubscribed: 5, pending: 5 }, { domain: 'keyset.test' });
    // Contacts whose firstName contains "1": First1, First10..First19, First21, ..., First51.
    const segmentId = newId();
    await env.deps.db.segment.create({
      data: {
        id: segmentId,
        teamId: env.teamId,
        contactBookId: book.id,
        name: 'Ones',
        filter: { match: 'all', conditions: [{ field: 'firstName', operator: 'contains', value: '1' }] },
      },
    });
    await env.deps.db.suppression.create({ data: { id: newId(), teamId: env.teamId, email: 's11@keyset.test', reason: 'MANUAL' } });
    const { id } = await campaignFor(env.teamId, 'unused.test', 0);
    await env.deps.db.campaign.update({ where: { id }, data: { contactBookId: book.id, segmentId } });

    const settings = { batchSize: 4, statementTimeoutMs: 5000 };
    let batches = 0;
    const crash = new Error('worker killed');
    await expect(
      prepareRecipients({ sql: env.deps.sql }, id, new Date(), settings, {
        afterBatch: () => {
          if (++batches === 6) throw crash;
        },
      }),
    ).rejects.toBe(crash);
    const midway = await campaign(id);
    expect(midway.recipientsReadyAt).toBeNull();
    expect(midway.recipientsCursor).not.toBeNull();

    let resumedBatches = 0;
    expect(await prepareRecipients({ sql: env.deps.sql }, id, new Date(), settings, { afterBatch: () => void resumedBatches++ })).toBe(
      'ready',
    );
    // 67 contacts are 17 batches of 4: the resumed run did the rest, not all of them again.
    expect(resumedBatches).toBe(16 - 6);

    const expected = Array.from({ length: 57 }, (_, k) => k + 1)
      .filter((i) => String(i).includes('1'))
      .map((i) => ({ contactId: `${book.id}_s${String(i).padStart(7, '0')}`, status: i === 11 ? 'SUPPRESSED' : 'PENDING' }))
      .sort((x, y) => (x.contactId < y.contactId ? -1 : 1));
    expect(await recipients(id)).toEqual(expected);
    const done = await campaign(id);
    expect(done).toMatchObject({ total: expected.length, recipientsCursor: null });
    expect(done.recipientsReadyAt).not.toBeNull();
    // Once ready, a further run adds nothing.
    expect(await prepareRecipients({ sql: env.deps.sql }, id, new Date(), settings)).toBe('stopped');
    expect(await recipients(id)).toHaveLength(expected.length);
  });
});
