import { Client } from 'pg';

function splitUrl(databaseUrl: string): { adminUrl: string; name: string } {
  const u = new URL(databaseUrl);
  const name = decodeURIComponent(u.pathname.replace(/^\//, ''));
  u.pathname = '/postgres';
  return { adminUrl: u.toString(), name };
}

async function withAdmin<T>(databaseUrl: string, fn: (c: Client, name: string) => Promise<T>): Promise<T> {
  const { adminUrl, name } = splitUrl(databaseUrl);
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unsupported database name: ${name}`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client, name);
  } finally {
    await client.end();
  }
}

/** Creates the database of databaseUrl if it does not exist (a fresh machine has none). */
export async function ensureDatabase(databaseUrl: string, template?: string): Promise<void> {
  await withAdmin(databaseUrl, async (c, name) => {
    const found = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return;
    try {
      await c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
    } catch (err) {
      // Another process created it at the same moment.
      if ((err as { code?: string }).code !== '42P04') throw err;
    }
  });
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  await withAdmin(databaseUrl, async (c, name) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

export async function databaseExists(databaseUrl: string): Promise<boolean> {
  return withAdmin(databaseUrl, async (c, name) => {
    const found = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return (found.rowCount ?? 0) > 0;
  });
}
