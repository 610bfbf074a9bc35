import { Client } from 'pg';
import { UTC_SESSION_OPTIONS } from '@mailrail/platform/db/client';
import { newId } from '@mailrail/platform/ids';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { useTestDatabase } from '@mailrail/testing/databases';
import { waitFor } from '@mailrail/testing/wait-for';
import { processSesEventJob } from './process-ses-event';

// Two events of one email meet on a row other emails share (EmailActivity, per address). The
// email's own row must be locked first by both, or one holds the shared row while waiting for the
// email's row that the other holds while waiting for the shared row: a deadlock, which failed a
// clean-clone CI run (counter-deltas.test.ts). Here the order is forced: the shared row is held
// from outside until both events wait, the one that does not change the email's status first.

// Connections for two events waiting side by side, and the test's own statements.
const database = useTestDatabase({ poolSize: 10 });

const sesEvent = (eventType: string, sesMessageId: string) => ({
  snsMessageId: newId(),
  topicArn: 'arn',
  message: JSON.stringify({ eventType, mail: { messageId: sesMessageId, timestamp: '2026-11-24T06:00:00.000Z', headers: [] } }),
});

const waitingOnLocks = async () =>
  (
    await prismaExecutor(database.db).query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    )
  )[0].n;

it("two events of one email wait for each other's email row, never in a cycle through a row other emails share", async () => {
  const { db, url } = database;
  const team = await db.team.create({ data: { name: 'lock order' } });
  const id = newId();
  await db.email.create({
    data: {
      id,
      teamId: team.id,
      from: 'a@example.com',
      to: ['b@example.org'],
      subject: 's',
      latestStatus: 'SENT',
      sesEmailId: `ses-${id}`,
    },
  });
  expect(await processSesEventJob({ db }, sesEvent('Delivery', `ses-${id}`))).toBe('processed');

  const holder = new Client({ connectionString: url, options: UTC_SESSION_OPTIONS });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    const held = await holder.query(`SELECT 1 FROM "EmailActivity" WHERE "teamId" = $1 AND address = 'b@example.org' FOR UPDATE`, [
      team.id,
    ]);
    expect(held.rowCount).toBe(1);
    // A repeated Delivery leaves the status as it is; then an Open, which advances it.
    const repeated = processSesEventJob({ db }, sesEvent('Delivery', `ses-${id}`));
    await waitFor(async () => (await waitingOnLocks()) === 1, { timeoutMs: 10_000, intervalMs: 20, what: 'the repeated delivery waiting' });
    const open = processSesEventJob({ db }, sesEvent('Open', `ses-${id}`));
    await waitFor(async () => (await waitingOnLocks()) === 2, { timeoutMs: 10_000, intervalMs: 20, what: 'the open waiting too' });
    await holder.query('COMMIT');
    expect(await Promise.all([repeated, open])).toEqual(['processed', 'processed']);
  } finally {
    await holder.end();
  }
  const email = await db.email.findUniqueOrThrow({ where: { id } });
  expect(email.latestStatus).toBe('OPENED');
});
