import { setTimeout as sleep } from 'node:timers/promises';
import type { SqlExecutor, SqlStatement } from '@mailrail/platform/db/sql/executor';
import { useTestWorkerEnv } from '../testing/worker-harness';
import { createClaimCommitter } from './claim-committer';
import { claimEmailForSending, sendOneEmail, type ClaimAnswer } from './send-email';

// The group claimer claims the emails of the jobs that start within a window with one statement,
// with the single-row claim's conditions per row: each job gets its own row or where its email
// stands, a row another transaction holds is left to the job to claim alone, and a failed
// statement fails only its own group.

const env = useTestWorkerEnv();

/** The pool, counting the statements that reach it; `failNext` fails that many statements first. */
function countingSql(sql: SqlExecutor, failNext = 0): SqlExecutor & { statements: number } {
  const counting = {
    statements: 0,
    query: <T>(text: SqlStatement, params?: readonly unknown[]) => {
      counting.statements++;
      if (failNext-- > 0) return Promise.reject(new Error('connection lost'));
      return sql.query<T>(text, params);
    },
    execute: (text: SqlStatement, params?: readonly unknown[]) => {
      counting.statements++;
      return sql.execute(text, params);
    },
  };
  return counting;
}

const committerOn = (sql: SqlExecutor, windowMs = 50, maxBatch = 100) => createClaimCommitter(sql, env.deps.send, { windowMs, maxBatch });
const emails = (count: number, prefix: string) =>
  env.createEmails(Array.from({ length: count }, (_, i) => ({ to: [`${prefix}-${i}@example.net`] })));
const claimedIds = (answers: (ClaimAnswer | undefined)[]) => answers.flatMap((a) => (a?.claimed ? [a.email.id] : []));

it("runs on sessions that plan each run of its named statement, so a claim plans only its day's partition", async () => {
  // test/e2e/email-log-pruning.test.ts shows what these sessions change; this holds the worker to them.
  const [{ plan_cache_mode }] = await env.deps.sql.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
  expect(plan_cache_mode).toBe('force_custom_plan');
});

it('claims the emails of one window with one statement: each job gets its own row, leased and marked', async () => {
  const ids = await emails(8, 'group');
  const sql = countingSql(env.deps.sql);
  const claims = committerOn(sql);
  const before = Date.now();
  const answers = await Promise.all(ids.map((id) => claims.claim(id)));
  const after = Date.now();
  expect(sql.statements).toBe(1);
  expect(claimedIds(answers)).toEqual(ids);
  for (const [i, answer] of answers.entries()) {
    expect(answer).toMatchObject({
      claimed: true,
      email: { id: ids[i], to: [`group-${i}@example.net`], sendAttempts: 1, region: env.domain.region, unfinishedCallStartedAt: null },
    });
    const row = await env.email(ids[i]);
    expect(row.sendAttempts).toBe(1);
    // Marked during the claim (PostgreSQL's now(), rounded to the column's milliseconds).
    expect(row.sesCallStartedAt!.getTime()).toBeGreaterThanOrEqual(before);
    expect(row.sesCallStartedAt!.getTime()).toBeLessThanOrEqual(after + 1);
    // The lease of a transactional email: SEND_LEASE_SECONDS from the claim, no in-doubt wait by default.
    expect(row.sendLeaseUntil!.getTime() - row.sesCallStartedAt!.getTime()).toBe(env.config.SEND_LEASE_SECONDS * 1000);
  }
});

it('answers each email of a mixed group on its own: only the claimable ones are claimed', async () => {
  const [free, sent, cancelled, leased, notDue, campaign] = await env.createEmails([
    { to: ['free@example.net'] },
    { to: ['sent@example.net'] },
    { to: ['cancelled@example.net'] },
    { to: ['leased@example.net'] },
    { to: ['not-due@example.net'], scheduledAt: new Date(Date.now() + 60_000) },
    { to: ['campaign@example.net'] },
  ]);
  await env.deps.db.email.update({ where: { id: sent }, data: { latestStatus: 'SENT', sesEmailId: 'ses-earlier' } });
  await env.deps.db.email.update({ where: { id: cancelled }, data: { latestStatus: 'CANCELLED' } });
  await env.deps.db.email.update({ where: { id: campaign }, data: { isMarketing: true } });
  expect(await claimEmailForSending(env.deps.sql, leased, env.deps.send)).not.toBeNull();
  const leasedRow = await env.email(leased);

  const claims = committerOn(env.deps.sql);
  const ids = [free, sent, cancelled, leased, notDue, campaign, 'no-such-email'];
  const before = Date.now();
  const answers = await Promise.all(ids.map((id) => claims.claim(id)));
  const after = Date.now();
  expect(claimedIds(answers)).toEqual([free, campaign]);
  expect(answers[1]).toEqual({ claimed: false, state: expect.objectContaining({ latestStatus: 'SENT', sesEmailId: 'ses-earlier' }) });
  expect(answers[2]).toEqual({ claimed: false, state: expect.objectContaining({ latestStatus: 'CANCELLED' }) });
  expect(answers[3]).toMatchObject({ claimed: false, state: { latestStatus: 'QUEUED' } });
  // What is left of the lease and how long until it is due, counted at the claim (± 1: whole
  // milliseconds here, microseconds in PostgreSQL).
  const { leaseMs } = (answers[3] as { state: { leaseMs: number } }).state;
  expect(leaseMs).toBeGreaterThanOrEqual(leasedRow.sendLeaseUntil!.getTime() - after - 1);
  expect(leaseMs).toBeLessThanOrEqual(leasedRow.sendLeaseUntil!.getTime() - before + 1);
  const notDueAt = (await env.email(notDue)).scheduledAt!.getTime();
  const { dueInMs } = (answers[4] as { state: { dueInMs: number } }).state;
  expect(dueInMs).toBeGreaterThanOrEqual(notDueAt - after - 1);
  expect(dueInMs).toBeLessThanOrEqual(notDueAt - before + 1);
  expect(answers[6]).toBeUndefined();

  // The unclaimed rows are as they were; campaign mail holds its lease for the in-doubt wait too.
  expect(await env.email(leased)).toMatchObject({ sendLeaseUntil: leasedRow.sendLeaseUntil, sendAttempts: 1 });
  for (const id of [sent, cancelled, notDue]) expect(await env.email(id)).toMatchObject({ sendLeaseUntil: null, sendAttempts: 0 });
  const c = await env.email(campaign);
  expect(c.sendLeaseUntil!.getTime() - c.sesCallStartedAt!.getTime()).toBe(
    (env.config.SEND_LEASE_SECONDS + env.config.SES_IN_DOUBT_WAIT_SECONDS) * 1000,
  );
});

it('tells the job which earlier SES call never recorded its outcome (in doubt)', async () => {
  const [id] = await emails(1, 'doubt');
  const claims = committerOn(env.deps.sql, 5);
  const first = await claims.claim(id);
  expect(first).toMatchObject({ claimed: true });
  const { sesCallStartedAt } = await env.email(id);
  // Its worker died mid-call: the lease ends without a recorded outcome.
  await env.deps.db.email.update({ where: { id }, data: { sendLeaseUntil: new Date(Date.now() - 1000) } });
  const again = await claims.claim(id);
  expect(again).toMatchObject({ claimed: true, email: { unfinishedCallStartedAt: sesCallStartedAt, sendAttempts: 2 } });
});

it('passes over a row another transaction holds without waiting; that job claims alone once the lock is gone', async () => {
  const [held, free] = await emails(2, 'locked');
  const claims = committerOn(env.deps.sql, 5);
  let outcome: Promise<Awaited<ReturnType<typeof sendOneEmail>>> | undefined;
  await env.deps.sql.transaction(async (tx) => {
    await tx.query(`SELECT id FROM "Email" WHERE id = $1 FOR UPDATE`, [held]);
    // The group does not wait for the lock: the free email is claimed, the held one is not answered.
    const answers = await Promise.all([claims.claim(held), claims.claim(free)]);
    expect(answers[0]).toBeUndefined();
    expect(answers[1]).toMatchObject({ claimed: true });
    // A job for the held email waits for the lock on its own and sees what the holder committed.
    outcome = sendOneEmail({ ...env.deps, claims }, held);
    await sleep(300);
    expect(env.ses.sendCalls).toBe(0);
    await tx.execute(`UPDATE "Email" SET "latestStatus" = 'CANCELLED' WHERE id = $1`, [held]);
  });
  expect(await outcome).toEqual({ result: 'skipped', status: 'CANCELLED' });
  expect(env.ses.sendCalls).toBe(0);
});

it("fails only the failed statement's group; its jobs claim alone and send", async () => {
  const ids = await emails(4, 'broken');
  const sql = countingSql(env.deps.sql, 1);
  const claims = committerOn(sql, 20);
  const failed = await Promise.allSettled([claims.claim(ids[0]), claims.claim(ids[1])]);
  expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  // The next group is not affected.
  const next = await Promise.all([claims.claim(ids[2]), claims.claim(ids[3])]);
  expect(claimedIds(next)).toEqual([ids[2], ids[3]]);
  // Nothing of the failed group was claimed; a job whose group failed claims alone.
  expect(await env.email(ids[0])).toMatchObject({ sendLeaseUntil: null, sendAttempts: 0 });
  const failing = countingSql(env.deps.sql, 1);
  const outcome = await sendOneEmail({ ...env.deps, sql: failing, claims: committerOn(failing, 5) }, ids[0]);
  expect(outcome.result).toBe('sent');
  // The failed group, the claim alone, the acceptance (its own statement: no acceptance committer here).
  expect(failing.statements).toBe(3);
  expect(env.ses.messagesTo('broken-0@example.net')).toHaveLength(1);
});

it('never gives one email to two jobs: the same email twice in a window, and two replicas claiming the same emails at once', async () => {
  const [twice] = await emails(1, 'twice');
  const claims = committerOn(env.deps.sql);
  const answers = await Promise.all([claims.claim(twice), claims.claim(twice)]);
  expect(claimedIds(answers)).toEqual([twice]);
  // The second one went into the next group: the lease is taken (or the first group's lock still held).
  expect(answers[1]?.claimed ?? false).toBe(false);

  const ids = await emails(30, 'replicas');
  const replica = env.replica();
  const mine = committerOn(env.deps.sql, 2, 7);
  const theirs = committerOn(replica.sql, 2, 7);
  const raced = await Promise.all(ids.flatMap((id, i) => [mine.claim(id), sleep(i % 3).then(() => theirs.claim(id))]));
  const won = claimedIds(raced);
  expect(won.sort()).toEqual([...ids].sort());
  for (const id of ids) expect((await env.email(id)).sendAttempts).toBe(1);
});

it('sends through the group claimer: the jobs of one window share one claim statement', async () => {
  const ids = await emails(6, 'send');
  const sql = countingSql(env.deps.sql);
  const claims = committerOn(sql);
  const outcomes = await Promise.all(ids.map((id) => sendOneEmail({ ...env.deps, sql, claims }, id)));
  expect(outcomes.map((o) => o.result)).toEqual(ids.map(() => 'sent'));
  // One group claim, then one acceptance each (no acceptance committer here).
  expect(sql.statements).toBe(1 + ids.length);
  for (const [i, id] of ids.entries()) {
    expect(env.ses.messagesTo(`send-${i}@example.net`)).toHaveLength(1);
    expect((await env.events(id)).filter((e) => e.status === 'SENT')).toHaveLength(1);
  }
});
