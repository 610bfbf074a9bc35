import { PrismaPg } from '@prisma/adapter-pg';
import type { ServerResponse } from 'node:http';
import { Pool } from 'pg';
import { EMAIL_ID_HEADER } from '@mailrail/domain/emails/headers';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { recordSesAcceptances } from '@mailrail/domain/sql/ses-acceptance';
import { PLAN_EACH_RUN_SESSION_OPTIONS, PrismaClient } from '@mailrail/platform/db/client';
import { createSqlPool, poolExecutor, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { insertEmailsAt } from '@mailrail/testing/emails-at';
import { explainingPool, type ExplainingPool } from '@mailrail/testing/partition-scans';
import type { ApiDeps } from '../../apps/api/src/deps';
import { emailLogPage } from '../../apps/api/src/dashboard/email-log/email-log';
import { getEmail } from '../../apps/api/src/emails/get-email';
import { listEmailsQuery, streamEmailList } from '../../apps/api/src/emails/list-emails';
import { partitionDay } from '@mailrail/domain/day-partitions/day-partitions';
import { maintainEmailPartitions } from '@mailrail/domain/email-log/email-partitions';
import { countEmailsSince } from '../../apps/worker/src/campaigns/run-campaign-window';
import { claimEmailForSending, claimEmailsForSending, inReplyToSesId } from '../../apps/worker/src/send/send-email';

// The proof that the email log's hot queries read only their partitions (docs/email-log.md): the
// production functions run against a partitioned database through connections that explain every
// statement they run (packages/testing/src/partition-scans.ts), and the partitions read are compared.

const DAY = 86_400_000;
const TODAY = Date.UTC(2026, 10, 24);
const day = (n: number) => partitionDay(new Date(TODAY + n * DAY));
const at = (n: number, hours = 10) => new Date(TODAY + n * DAY + hours * 3_600_000);

let url: string;
let seed: SqlPool;
let pool: Pool;
let db: PrismaClient;
let teamId: number;
const ids = new Map<number, string[]>(); // day offset -> ids minted that day
let explaining: ExplainingPool;
const partitionsRead = (work: () => Promise<unknown>) => explaining.partitionsRead(work);
const partitionsPlanned = (work: () => Promise<unknown>) => explaining.partitionsPlanned(work);

const auth = () => ({ teamId, apiKeyId: null, permission: 'FULL' as const, domainId: null, rateLimit: 0 });
const deps = () => ({ db, config: { EMAIL_LIST_COUNT_CAP: 10_000 } }) as unknown as ApiDeps;

/** A response that swallows what is written (streamEmailList writes its JSON as it reads). */
function sinkResponse(): ServerResponse {
  const res = { destroyed: false, statusCode: 0, write: () => true, end: () => undefined, once: () => res, setHeader: () => undefined };
  return res as unknown as ServerResponse;
}

beforeAll(async () => {
  url = await createTestDatabase();
  seed = createSqlPool(url, 2, () => undefined);
  // Days -5 .. +3 exist; emails on days -5 .. 0.
  await maintainEmailPartitions(seed, { daysAhead: 8, bodyRetentionDays: 0, retentionDays: 0 }, new Date(TODAY - 5 * DAY));
  const team = await seed.query<{ id: number }>(`INSERT INTO "Team" (name, "updatedAt") VALUES ('t', now()) RETURNING id`);
  teamId = team[0].id;
  for (let n = -5; n <= 0; n++) {
    ids.set(n, await insertEmailsAt(seed, at(n), teamId, 3));
  }
  await seed.execute('ANALYZE "Email", "EmailEvent"');

  explaining = explainingPool(url);
  pool = explaining.pool;
  db = new PrismaClient({ adapter: new PrismaPg(pool) });
});

afterAll(async () => {
  await db?.$disconnect();
  await pool?.end().catch(() => undefined);
  await seed?.end();
  if (url) await dropDatabase(url);
});

const email = (n: number) => ids.get(n)![0];

describe('the hot queries of the email log read only their partitions', () => {
  it('GET /emails/:id reads the email and its events from the partitions of its day', async () => {
    expect(await partitionsRead(() => getEmail(deps(), auth(), email(-2)))).toEqual([`EmailEvent_p${day(-2)}`, `Email_p${day(-2)}`]);
  });

  it('GET /emails with a date range reads those days (and the legacy and default partitions)', async () => {
    const q = listEmailsQuery.parse({ startDate: at(-3, 0).toISOString(), endDate: at(-2, 23).toISOString() });
    expect(await partitionsRead(() => streamEmailList(deps(), auth(), q, sinkResponse()))).toEqual([
      'Email_default',
      'Email_legacy',
      `Email_p${day(-3)}`,
      `Email_p${day(-2)}`,
    ]);
  });

  it('the dashboard log with a date range, and its next page after a cursor, read only the days they can hold', async () => {
    const range = { limit: 2, startDate: at(-4, 0), endDate: at(-3, 0) };
    const first = await emailLogPage(deps(), auth(), range);
    expect(await partitionsRead(() => emailLogPage(deps(), auth(), range))).toEqual(['Email_default', 'Email_legacy', `Email_p${day(-4)}`]);
    // No range, but a cursor on day -4: the newer days cannot hold the next page.
    expect(first.nextCursor).not.toBeNull();
    const read = await partitionsRead(() => emailLogPage(deps(), auth(), { limit: 2, cursor: first.nextCursor! }));
    expect(read).toEqual(['Email_default', 'Email_legacy', `Email_p${day(-5)}`, `Email_p${day(-4)}`]);
  });

  it('the worker claim, the acceptance, and the SES event reading our header id read one day', async () => {
    const id = email(-1);
    const p = `Email_p${day(-1)}`;
    const e = `EmailEvent_p${day(-1)}`;
    const sql = poolExecutor(pool);
    expect(
      await partitionsRead(() =>
        claimEmailForSending(sql, id, { leaseSeconds: 60, inDoubtWaitSeconds: { marketing: 0, transactional: 0 } }),
      ),
    ).toEqual([p]);
    // An INSERT routes each row to its partition as it goes: plans name only the parent for it.
    expect(await partitionsRead(() => recordSesAcceptances(sql, [{ emailId: id, messageId: 'ses-1' }]))).toEqual([p]);
    const mail = { messageId: 'ses-1', timestamp: at(-1).toISOString(), headers: [{ name: EMAIL_ID_HEADER, value: id }] };
    const delivery = JSON.stringify({
      eventType: 'Delivery',
      mail,
      delivery: { timestamp: at(-1, 11).toISOString(), recipients: ['b@example.org'] },
    });
    let outcome: unknown;
    const read = await partitionsRead(
      async () => (outcome = await processSesEventJob({ db }, { snsMessageId: 'sns-1', topicArn: 't', message: delivery })),
    );
    expect(outcome).toBe('processed');
    expect(read).toEqual([p]);
    // SES's own Send event adds its details to the SENT event the acceptance wrote: one events partition.
    const send = JSON.stringify({ eventType: 'Send', mail, send: {} });
    expect(await partitionsRead(() => processSesEventJob({ db }, { snsMessageId: 'sns-2', topicArn: 't', message: send }))).toEqual([e, p]);
  });

  it('the worker claim and the acceptance plan only the day they write: a partition skipped at run time still costs each send', async () => {
    const id = email(-1);
    const sql = poolExecutor(pool);
    const claim = () => claimEmailForSending(sql, id, { leaseSeconds: 60, inDoubtWaitSeconds: { marketing: 0, transactional: 0 } });
    expect(await partitionsPlanned(claim)).toEqual([`Email_p${day(-1)}`]);
    expect(await partitionsPlanned(() => recordSesAcceptances(sql, [{ emailId: id, messageId: 'ses-planned' }]))).toEqual([
      `Email_p${day(-1)}`,
    ]);
  });

  it("named, the worker's group claim and acceptance still plan only their day after many runs on one connection", async () => {
    // Prepared statements: after five runs PostgreSQL may switch to one generic plan, which holds
    // every partition and prunes only at run time. The worker's sessions make it plan each run.
    const worker = explainingPool(url, 1, PLAN_EACH_RUN_SESSION_OPTIONS);
    try {
      const sql = poolExecutor(worker.pool);
      const send = { leaseSeconds: 0, inDoubtWaitSeconds: { marketing: 0, transactional: 0 } };
      const groupClaim = () => claimEmailsForSending(sql, ids.get(-2)!.slice(0, 2), send, { skipLocked: true });
      for (let run = 0; run < 12; run++) await groupClaim();
      expect(await worker.partitionsPlanned(groupClaim)).toEqual([`Email_p${day(-2)}`]);
      const accept = (n: number) => recordSesAcceptances(sql, [{ emailId: ids.get(-3)![n % 3], messageId: `ses-run-${n}` }]);
      for (let run = 0; run < 12; run++) await accept(run);
      expect(await worker.partitionsPlanned(() => accept(12))).toEqual([`Email_p${day(-3)}`]);
    } finally {
      await worker.pool.end();
    }
  });

  it('a reply is claimed from its own day, and the email it answers is read from its day alone', async () => {
    const reply = ids.get(-1)![1];
    const original = email(-3);
    await seed.query(`UPDATE "Email" SET "inReplyToId" = $1 WHERE id = $2`, [original, reply]);
    const sql = poolExecutor(pool);
    let claimed: Awaited<ReturnType<typeof claimEmailForSending>> = null;
    const claim = async () => {
      claimed = await claimEmailForSending(sql, reply, { leaseSeconds: 60, inDoubtWaitSeconds: { marketing: 0, transactional: 0 } });
    };
    expect(await partitionsPlanned(claim)).toEqual([`Email_p${day(-1)}`]);
    expect(claimed!.inReplyToId).toBe(original);
    expect(await partitionsPlanned(() => inReplyToSesId(sql, original))).toEqual([`Email_p${day(-3)}`]);
  });

  it('a campaign window counting its emails since the window opened reads the days since', async () => {
    expect(await partitionsRead(() => countEmailsSince(poolExecutor(pool), 'c1', at(-1, 0)))).toEqual([
      'Email_default',
      'Email_legacy',
      `Email_p${day(-1)}`,
      `Email_p${day(0)}`,
      `Email_p${day(1)}`,
      `Email_p${day(2)}`,
      `Email_p${day(3)}`,
    ]);
  });

  it('(the check can fail) a page without range or cursor reads every partition', async () => {
    const read = await partitionsRead(() => emailLogPage(deps(), auth(), { limit: 2 }));
    expect(read).toEqual(expect.arrayContaining([`Email_p${day(-5)}`, `Email_p${day(0)}`, `Email_p${day(3)}`]));
  });
});
