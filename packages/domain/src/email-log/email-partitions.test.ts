import type { EmailDraft } from '@mailrail/domain/emails/create-emails';
import { createSqlPool, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { emailIdTime, newEmailId } from '@mailrail/platform/ids';
import { useTestDatabase } from '@mailrail/testing/databases';
import { insertEmailsAt } from '@mailrail/testing/emails-at';
import { partitionDay } from '../day-partitions/day-partitions';
import { maintainEmailPartitions, type EmailPartitionSettings } from './email-partitions';

// The email log's partitions on a real PostgreSQL: days created ahead, stray rows caught by the
// DEFAULT partition and moved into their day, bodies cleared and days dropped past retention, and a
// drop under concurrent inserts that neither fails an insert nor waits long for its locks.

const DAY = 86_400_000;
const NOW = new Date('2026-11-24T10:00:00Z');
const handle = useTestDatabase();
let sql: SqlPool;
let teamId: number;

const settings = (s: Partial<EmailPartitionSettings> = {}): EmailPartitionSettings => ({
  daysAhead: 3,
  bodyRetentionDays: 0,
  retentionDays: 0,
  ...s,
});

/** Stores emails minted at `at` through the production insert (ids and createdAt from that instant). */
const insertAt = (at: Date, n = 1, over: Partial<EmailDraft> = {}) => insertEmailsAt(sql, at, teamId, n, over);

async function partitionOf(table: 'Email' | 'EmailEvent', id: string): Promise<string> {
  const key = table === 'Email' ? 'id' : '"emailId"';
  const [row] = await sql.query<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM "${table}" WHERE ${key} = $1`, [id]);
  return row?.p?.replace(/"/g, '');
}

async function partitionNames(table: 'Email' | 'EmailEvent'): Promise<string[]> {
  const rows = await sql.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [`"${table}"`],
  );
  return rows.map((r) => r.name);
}

beforeAll(async () => {
  sql = createSqlPool(handle.url, 6, () => undefined);
  teamId = (await handle.db.team.create({ data: { name: 't' } })).id;
});
afterAll(async () => {
  await sql?.end();
});

describe('email ids', () => {
  it('are 24 lowercase alphanumerics, unique, and sort by the instant they were minted at', () => {
    const instants = [0, 1, 999, 86_400_000, 3_600_000 * 24 * 365].map((d) => new Date(NOW.getTime() + d));
    const ids = instants.flatMap((at) => Array.from({ length: 200 }, () => newEmailId(at)));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{24}$/);
    const byInstant = instants.map((at) => newEmailId(at));
    expect([...byInstant].sort()).toEqual(byInstant);
    expect(emailIdTime(byInstant[2])).toEqual(instants[2]);
    expect(emailIdTime('email000')).toBeNull();
  });
});

describe('maintainEmailPartitions', () => {
  it('creates the days ahead for both tables, once', async () => {
    const first = await maintainEmailPartitions(sql, settings(), NOW);
    expect(first.created).toHaveLength(8);
    const days = [0, 1, 2, 3].map((d) => partitionDay(new Date(NOW.getTime() + d * DAY)));
    for (const table of ['Email', 'EmailEvent'] as const) {
      expect(await partitionNames(table)).toEqual(
        expect.arrayContaining([...days.map((d) => `${table}_p${d}`), `${table}_default`, `${table}_legacy`]),
      );
    }
    const again = await maintainEmailPartitions(sql, settings(), NOW);
    expect(again.created).toEqual([]);
  });

  it('puts an email and its events in the partition of its day', async () => {
    const [id] = await insertAt(new Date(NOW.getTime() + DAY));
    const day = partitionDay(new Date(NOW.getTime() + DAY));
    expect(await partitionOf('Email', id)).toBe(`Email_p${day}`);
    expect(await partitionOf('EmailEvent', id)).toBe(`EmailEvent_p${day}`);
  });

  it('stores an email far in the future or past (no day partition yet) in the DEFAULT partition, and leaves that day there', async () => {
    const future = new Date(NOW.getTime() + 40 * DAY);
    const past = new Date('2019-06-01T00:00:00Z');
    const [later] = await insertAt(future);
    const [earlier] = await insertAt(past);
    const legacy = '0zz' + 'a'.repeat(21);
    await sql.execute(`INSERT INTO "Email" (id, "teamId", "from", subject, "updatedAt") VALUES ($1, $2, 'a', 's', now())`, [
      legacy,
      teamId,
    ]);
    expect(await partitionOf('Email', later)).toBe('Email_default');
    expect(await partitionOf('EmailEvent', later)).toBe('EmailEvent_default');
    expect(await partitionOf('Email', earlier)).toBe('Email_default');
    expect(await partitionOf('Email', legacy)).toBe('Email_legacy');

    // Rows are never moved between partitions under running queries: that day is not created,
    // the next one is, and every row is still found by its id.
    const report = await maintainEmailPartitions(sql, settings({ daysAhead: 1 }), future);
    expect(report.blocked).toEqual([`Email_p${partitionDay(future)}`, `EmailEvent_p${partitionDay(future)}`]);
    expect(report.created).toEqual([
      `Email_p${partitionDay(new Date(future.getTime() + DAY))}`,
      `EmailEvent_p${partitionDay(new Date(future.getTime() + DAY))}`,
    ]);
    expect(await partitionOf('Email', later)).toBe('Email_default');
    const [next] = await insertAt(new Date(future.getTime() + DAY));
    expect(await partitionOf('Email', next)).toBe(`Email_p${partitionDay(new Date(future.getTime() + DAY))}`);
  });

  it('clears bodies past EMAIL_BODY_RETENTION_DAYS a partition at a time, and keeps those of unsent emails', async () => {
    const old = new Date(NOW.getTime() - 10 * DAY);
    await maintainEmailPartitions(sql, settings({ daysAhead: 0 }), old);
    const sent = await insertAt(old, 3, { headers: { 'X-A': '1' }, attachments: [{ filename: 'a.txt', content: 'YQ==' }] });
    const [unsent] = await insertAt(old, 1, { scheduledAt: new Date(NOW.getTime() + DAY) });
    await sql.execute(`UPDATE "Email" SET "sesEmailId" = 'ses-' || id, "latestStatus" = 'DELIVERED' WHERE id = ANY($1::text[])`, [sent]);
    const [recent] = await insertAt(NOW, 1);
    await sql.execute(`UPDATE "Email" SET "sesEmailId" = 'ses-' || id, "latestStatus" = 'DELIVERED' WHERE id = $1`, [recent]);

    const report = await maintainEmailPartitions(sql, settings({ bodyRetentionDays: 7, batchSize: 2 }), NOW);
    expect(report.bodiesCleared).toBe(3);
    const rows = await sql.query<{
      id: string;
      html: string | null;
      text: string | null;
      headers: unknown;
      attachments: unknown;
      subject: string;
    }>(`SELECT id, html, text, headers, attachments, subject FROM "Email" WHERE id = ANY($1::text[])`, [[...sent, unsent, recent]]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of sent) expect(byId.get(id)).toMatchObject({ html: null, text: null, headers: null, attachments: null, subject: 's' });
    expect(byId.get(unsent)).toMatchObject({ html: '<p>hi</p>', text: 'hi' });
    expect(byId.get(recent)).toMatchObject({ html: '<p>hi</p>', text: 'hi' });
  });

  it('drops whole days past EMAIL_RETENTION_DAYS, events with their emails, but never a day that still holds an unsent email', async () => {
    const old = new Date(NOW.getTime() - 20 * DAY);
    await maintainEmailPartitions(sql, settings({ daysAhead: 1 }), old);
    const [gone] = await insertAt(old);
    await sql.execute(`UPDATE "Email" SET "sesEmailId" = 'x', "latestStatus" = 'SENT' WHERE id = $1`, [gone]);
    const [waiting] = await insertAt(new Date(old.getTime() + DAY), 1, { scheduledAt: NOW });
    const kept = await insertAt(NOW);

    const report = await maintainEmailPartitions(sql, settings({ retentionDays: 15 }), NOW);
    expect(report.dropped).toEqual(expect.arrayContaining([`Email_p${partitionDay(old)}`, `EmailEvent_p${partitionDay(old)}`]));
    expect(report.kept).toEqual(expect.arrayContaining([`Email_p${partitionDay(new Date(old.getTime() + DAY))}`]));
    expect(await sql.query(`SELECT id FROM "Email" WHERE id = $1`, [gone])).toEqual([]);
    expect(await sql.query(`SELECT 1 FROM "EmailEvent" WHERE "emailId" = $1`, [gone])).toEqual([]);
    expect(await sql.query(`SELECT id FROM "Email" WHERE id = $1`, [waiting])).toHaveLength(1);
    expect(await sql.query(`SELECT id FROM "Email" WHERE id = ANY($1::text[])`, [kept])).toHaveLength(1);
    // Legacy rows are not the job's to drop.
    expect(await partitionNames('Email')).toContain('Email_legacy');
  });

  it("leaves a deleted team's events (no foreign key onto the partitioned Email) until retention drops their day", async () => {
    const old = new Date(NOW.getTime() - 30 * DAY);
    await maintainEmailPartitions(sql, settings({ daysAhead: 0 }), old);
    const gone = await handle.db.team.create({ data: { name: 'deleted' } });
    const [id] = await insertAt(old, 1, { teamId: gone.id });
    await handle.db.team.delete({ where: { id: gone.id } });
    expect(await sql.query(`SELECT id FROM "Email" WHERE id = $1`, [id])).toEqual([]);
    expect(await sql.query(`SELECT status FROM "EmailEvent" WHERE "emailId" = $1`, [id])).toEqual([{ status: 'QUEUED' }]);

    const report = await maintainEmailPartitions(sql, settings({ retentionDays: 15 }), NOW);
    expect(report.dropped).toContain(`EmailEvent_p${partitionDay(old)}`);
    expect(await sql.query(`SELECT 1 FROM "EmailEvent" WHERE "emailId" = $1`, [id])).toEqual([]);
  });

  // How long the drop waits for its locks (each wait is capped by lock_timeout, then retried) is
  // bench/partitions/run.ts's figure, not this machine's speed here.
  it('drops the oldest day under concurrent inserts: no insert fails, and the drop gets its locks without timing out', async () => {
    const old = new Date(NOW.getTime() - 40 * DAY);
    await maintainEmailPartitions(sql, settings({ daysAhead: 0 }), old);
    const oldIds = await insertAt(old, 50);
    await sql.execute(`UPDATE "Email" SET "sesEmailId" = 'ses-' || id, "latestStatus" = 'DELIVERED' WHERE id = ANY($1::text[])`, [oldIds]);
    let stop = false;
    let inserted = 0;
    const errors: unknown[] = [];
    const writers = Array.from({ length: 3 }, async () => {
      while (!stop) {
        try {
          await insertAt(new Date(), 5);
          inserted += 5;
        } catch (err) {
          errors.push(err);
        }
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    const report = await maintainEmailPartitions(sql, settings({ retentionDays: 30, lockTimeoutMs: 50 }), NOW);
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    await Promise.all(writers);
    expect(errors).toEqual([]);
    expect(inserted).toBeGreaterThan(0);
    expect(report.dropped).toEqual(expect.arrayContaining([`Email_p${partitionDay(old)}`, `EmailEvent_p${partitionDay(old)}`]));
    expect(report.lockTimeouts).toBe(0);
  });
});
