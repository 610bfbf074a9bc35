import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { dropDatabase, ensureDatabase } from '../admin';
import { createDb } from '../client';
import { repoRoot } from '@mailrail/tools/prisma/prisma-cli';
import { createTestDatabase, testServerUrl } from '@mailrail/testing/databases';
import { createSqlPool, prismaExecutor, withTransaction } from './executor';
import { isoUtcSql } from './time';

// Timestamps are timestamptz and every session runs in UTC, so a JS Date means the same instant
// through Prisma, through the pg pool and in SQL text output, whatever the server's TimeZone.

const FAR_FROM_UTC = 'Asia/Kathmandu'; // +05:45: no hour-sized coincidence can hide an error

describe('timestamptz migration', () => {
  const url = `${testServerUrl}/mr_tz_mig_${randomBytes(4).toString('hex')}`;
  afterAll(() => dropDatabase(url));

  it('keeps every stored UTC wall time as the same instant, whatever the session time zone', async () => {
    const dir = path.join(repoRoot, 'prisma/migrations');
    const names = readdirSync(dir)
      .filter((n) => !n.endsWith('.toml'))
      .sort();
    const target = names.find((n) => n.endsWith('_timestamptz'));
    expect(target).toBeDefined();
    await ensureDatabase(url);
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      for (const n of names.filter((m) => m < target!)) await c.query(readFileSync(path.join(dir, n, 'migration.sql'), 'utf8'));
      // What Prisma wrote into the old timestamp(3) columns: the UTC wall time.
      await c.query(
        `INSERT INTO "Team" (name, "createdAt", "updatedAt") VALUES ('t', '2026-01-02 03:04:05.678', '2026-01-02 03:04:05.678')`,
      );
      await c.query(`SET TimeZone = '${FAR_FROM_UTC}'`);
      await c.query(readFileSync(path.join(dir, target!, 'migration.sql'), 'utf8'));
      const { rows } = await c.query<{ createdAt: Date; type: string }>(
        `SELECT "createdAt", pg_typeof("createdAt")::text AS type FROM "Team"`,
      );
      expect(rows[0].type).toBe('timestamp with time zone');
      expect(rows[0].createdAt.toISOString()).toBe('2026-01-02T03:04:05.678Z');
    } finally {
      await c.end();
    }
  });
});

describe('a server whose default time zone is not UTC', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET TimeZone = '${FAR_FROM_UTC}'`);
    await admin.end();
  });
  afterAll(() => dropDatabase(url));

  it('stores and reads plain Dates as the same instant through Prisma, its raw executor and the pg pool', async () => {
    const db = createDb(url, 1);
    const pool = createSqlPool(url, 1, () => undefined);
    try {
      const at = new Date('2026-05-06T07:08:09.123Z');
      const team = await db.team.create({ data: { name: 'tz', createdAt: at } });
      const [viaPool] = await pool.query<{ createdAt: Date; iso: string }>(
        `SELECT "createdAt", ${isoUtcSql('"createdAt"')} AS iso FROM "Team" WHERE id = $1`,
        [team.id],
      );
      expect(viaPool.createdAt.toISOString()).toBe(at.toISOString());
      expect(viaPool.iso).toBe('2026-05-06T07:08:09.123Z');

      const later = new Date('2026-05-06T23:59:59.999Z');
      await withTransaction(pool, (tx) => tx.execute(`UPDATE "Team" SET "createdAt" = $2 WHERE id = $1`, [team.id, later]));
      expect((await db.team.findUniqueOrThrow({ where: { id: team.id } })).createdAt.toISOString()).toBe(later.toISOString());

      await prismaExecutor(db).execute(`UPDATE "Team" SET "createdAt" = $2 WHERE id = $1`, [team.id, at]);
      const [matched] = await prismaExecutor(db).query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "Team" WHERE id = $1 AND "createdAt" = $2`,
        [team.id, at],
      );
      expect(matched.n).toBe(1);
    } finally {
      await db.$disconnect();
      await pool.end();
    }
  });
});
