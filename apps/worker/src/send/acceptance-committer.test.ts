import { setTimeout as sleep } from 'node:timers/promises';
import { processSesEventJob } from '@mailrail/domain/ses-events/process-ses-event';
import { createDb } from '@mailrail/platform/db/client';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { sesSendEvent, startTestWorkerEnv, type TestWorkerEnv } from '../testing/worker-harness';
import { createAcceptanceCommitter } from './acceptance-committer';
import { claimEmailForSending } from './send-email';

// The group committer writes the acceptances that arrive within a window with one statement, with
// the single-row statement's guard: one SENT event per email whoever records it first.

let env: TestWorkerEnv;
beforeAll(async () => {
  env = await startTestWorkerEnv();
});
afterAll(async () => {
  await env?.close();
});

/** The pool, counting the statements that reach it. */
function countingSql(sql: SqlExecutor): SqlExecutor & { statements: number } {
  const counting = {
    statements: 0,
    query: <T>(text: string, params?: readonly unknown[]) => {
      counting.statements++;
      return sql.query<T>(text, params);
    },
    execute: (text: string, params?: readonly unknown[]) => {
      counting.statements++;
      return sql.execute(text, params);
    },
  };
  return counting;
}

const claimed = async (count: number, prefix: string) => {
  const ids = await env.createEmails(Array.from({ length: count }, (_, i) => ({ to: [`${prefix}-${i}@example.net`] })));
  for (const id of ids) expect(await claimEmailForSending(env.deps.sql, id, env.deps.send)).not.toBeNull();
  return ids;
};
const sentEvents = async (id: string) => (await env.events(id)).filter((e) => e.status === 'SENT');

it('records the acceptances of one window with one statement: SENT, message id, claim ended, one SENT event each', async () => {
  const ids = await claimed(12, 'group');
  const sql = countingSql(env.deps.sql);
  const committer = createAcceptanceCommitter(sql, { windowMs: 50, maxBatch: 100 });
  const results = await Promise.all(ids.map((id, i) => committer.record(id, `ses-group-${i}`)));
  expect(results).toEqual(ids.map(() => true));
  expect(sql.statements).toBe(1);
  for (const [i, id] of ids.entries()) {
    const row = await env.email(id);
    expect(row).toMatchObject({
      latestStatus: 'SENT',
      sesEmailId: `ses-group-${i}`,
      sendLeaseUntil: null,
      sesCallStartedAt: null,
      attachments: null,
      headers: null,
    });
    expect(row.sentAt).toBeInstanceOf(Date);
    expect(await sentEvents(id)).toEqual([{ status: 'SENT', data: { messageId: `ses-group-${i}` } }]);
  }
});

it('writes a full group at once and the rest after the window', async () => {
  const ids = await claimed(5, 'full');
  const sql = countingSql(env.deps.sql);
  const committer = createAcceptanceCommitter(sql, { windowMs: 10_000, maxBatch: 4 });
  const first4 = Promise.all(ids.slice(0, 4).map((id, i) => committer.record(id, `ses-full-${i}`)));
  expect(await first4).toEqual([true, true, true, true]);
  expect(sql.statements).toBe(1);
  const last = committer.record(ids[4], 'ses-full-4');
  await committer.flush();
  expect(await last).toBe(true);
  expect(sql.statements).toBe(2);
});

it('changes nothing for an email whose acceptance was recorded first (by its Send event), and records the others of the group', async () => {
  const [early, other] = await claimed(2, 'guard');
  expect(await processSesEventJob({ db: env.deps.db }, sesSendEvent(early, 'ses-from-event'))).toBe('processed');
  const committer = createAcceptanceCommitter(env.deps.sql, { windowMs: 20, maxBatch: 100 });
  expect(await Promise.all([committer.record(early, 'ses-from-worker'), committer.record(other, 'ses-other')])).toEqual([false, true]);
  expect(await env.email(early)).toMatchObject({ latestStatus: 'SENT', sesEmailId: 'ses-from-event' });
  expect(await sentEvents(early)).toHaveLength(1);
  expect(await env.email(other)).toMatchObject({ latestStatus: 'SENT', sesEmailId: 'ses-other' });
});

it('gets one SENT event per email when groups and Send events record the same emails at the same moment', async () => {
  const ids = await claimed(40, 'race');
  const committer = createAcceptanceCommitter(env.deps.sql, { windowMs: 3, maxBatch: 8 });
  await Promise.all(
    ids.map(async (id, i) => {
      await Promise.all([
        processSesEventJob({ db: env.deps.db }, sesSendEvent(id, `ses-race-${i}`)),
        sleep(i % 11).then(() => committer.record(id, `ses-race-${i}`)),
      ]);
    }),
  );
  for (const [i, id] of ids.entries()) {
    expect(await env.email(id)).toMatchObject({ latestStatus: 'SENT', sesEmailId: `ses-race-${i}` });
    expect(await sentEvents(id)).toHaveLength(1);
  }
});

it('fails every acceptance of a group whose statement failed, so each caller retries its own', async () => {
  const broken: SqlExecutor = {
    query: () => Promise.reject(new Error('connection lost')),
    execute: () => Promise.reject(new Error('connection lost')),
  };
  const committer = createAcceptanceCommitter(broken, { windowMs: 5, maxBatch: 100 });
  const results = await Promise.allSettled([committer.record('a', 'm-a'), committer.record('b', 'm-b')]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
});

it("an SES event waits for a pooled connection longer than Prisma's default 2 s (the queue runs more jobs than the pool has connections)", async () => {
  const [id] = await claimed(1, 'pool-wait');
  const db = createDb(env.config.DATABASE_URL, 1);
  try {
    // The pool's one connection, held for 2.5 s.
    const holding = db.$transaction(async (tx) => tx.$executeRawUnsafe('SELECT pg_sleep(2.5)'), { timeout: 10_000 });
    await sleep(200);
    expect(await processSesEventJob({ db }, sesSendEvent(id, 'ses-pool-wait'))).toBe('processed');
    await holding;
    expect(await env.email(id)).toMatchObject({ latestStatus: 'SENT', sesEmailId: 'ses-pool-wait' });
  } finally {
    await db.$disconnect();
  }
});
