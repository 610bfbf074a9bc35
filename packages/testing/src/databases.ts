import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { databaseExists, dropDatabase, ensureDatabase } from '@mailrail/platform/db/admin';
import { migrateDeploy, repoRoot } from '@mailrail/tools/prisma/prisma-cli';
import { createDb, type Db } from '@mailrail/platform/db/client';

// Each test file gets its own database, cloned from a template that was migrated once with the
// real migrations. The template's name carries a hash of the migrations, so a new migration
// makes a new template and a stale one is never used.

export const testServerUrl = process.env.TEST_DATABASE_SERVER ?? 'postgresql://postgres@127.0.0.1:5432';

function migrationsHash(): string {
  const dir = path.join(repoRoot, 'prisma/migrations');
  const h = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    if (name.endsWith('.toml')) continue;
    h.update(name).update(readFileSync(path.join(dir, name, 'migration.sql')));
  }
  return h.digest('hex').slice(0, 12);
}

export function templateDatabaseName(): string {
  return `mailrail_test_tpl_${migrationsHash()}`;
}

/** Run once before the test files (jest globalSetup). */
export async function prepareTemplateDatabase(): Promise<void> {
  const name = templateDatabaseName();
  const url = `${testServerUrl}/${name}`;
  if (await databaseExists(url)) return;
  // Migrate under a temporary name, then rename: a half-migrated template is never visible.
  const building = `${name}_building_${randomBytes(3).toString('hex')}`;
  const buildingUrl = `${testServerUrl}/${building}`;
  await ensureDatabase(buildingUrl);
  try {
    migrateDeploy(buildingUrl, true);
    const admin = new Client({ connectionString: `${testServerUrl}/postgres` });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    } catch (err) {
      if ((err as { code?: string }).code !== '42P04') throw err;
    } finally {
      await admin.end();
    }
  } finally {
    await dropDatabase(buildingUrl).catch(() => undefined);
  }
}

/** A fresh, migrated database for one test file. */
export async function createTestDatabase(): Promise<string> {
  const url = `${testServerUrl}/mr_t_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(url, templateDatabaseName());
  return url;
}

export { dropDatabase };

/**
 * A fresh database with a Prisma client for the current test file (or describe block): opened
 * in beforeAll, disconnected and dropped in afterAll. Read `.url` and `.db` inside the tests.
 * `poolSize`: the client's connections, for tests that run statements side by side.
 */
export function useTestDatabase(opts: { poolSize?: number } = {}): { url: string; db: Db } {
  const handle = {} as { url: string; db: Db };
  beforeAll(async () => {
    handle.url = await createTestDatabase();
    handle.db = createDb(handle.url, opts.poolSize ?? 2);
  });
  afterAll(async () => {
    await handle.db?.$disconnect();
    if (handle.url) await dropDatabase(handle.url);
  });
  return handle;
}
