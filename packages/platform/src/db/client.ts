import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type PoolConfig } from 'pg';
import { PrismaClient } from './generated/client';

export type Db = PrismaClient;

/**
 * Every connection's session runs in UTC. The columns are timestamptz, which needs no zone to be
 * right, but Prisma's adapter sends a Date as a UTC wall time without offset ("2026-11-23 22:00:00"),
 * which PostgreSQL reads in the session's TimeZone; so does to_char/::date. Pinning UTC keeps
 * both right whatever the server's default.
 */
export const UTC_SESSION_OPTIONS = '-c TimeZone=UTC';

/**
 * UTC sessions that plan every run of a named statement for its parameters. After five runs
 * PostgreSQL may switch a prepared statement to one generic plan, which holds every partition of
 * the email log and prunes only at run time, so each send would lock and open them all
 * (docs/email-log.md). With this, the worker's named statements save only the parsing.
 */
export const PLAN_EACH_RUN_SESSION_OPTIONS = `${UTC_SESSION_OPTIONS} -c plan_cache_mode=force_custom_plan`;

/**
 * True when the URL carries `pgbouncer=true` (Prisma's own convention): DATABASE_URL points at
 * PgBouncer in transaction mode (docs/pgbouncer.md).
 */
export function behindPgBouncer(databaseUrl: string): boolean {
  return new URL(databaseUrl).searchParams.get('pgbouncer') === 'true';
}

/**
 * A node-postgres pool whose every session runs in UTC (UTC_SESSION_OPTIONS). PgBouncer refuses
 * the `options` startup parameter, so behind it each new client connection runs
 * `SET TimeZone = 'UTC'` instead: TimeZone is one of the parameters PgBouncer tracks per client
 * and sets again on whichever server connection it lends that client, in transaction mode too.
 * Node-postgres queues the SET before any query of whoever asked for the connection. `options`:
 * the startup options of a direct connection (behind PgBouncer statements are never named, so
 * PLAN_EACH_RUN_SESSION_OPTIONS has nothing to do there). `more`: other pool settings (a bounded
 * wait for a connection).
 */
export function createUtcPool(
  databaseUrl: string,
  max: number,
  options = UTC_SESSION_OPTIONS,
  more: Omit<PoolConfig, 'options'> = {},
): Pool {
  if (!behindPgBouncer(databaseUrl)) return heardPool(new Pool({ ...more, connectionString: databaseUrl, max, options }));
  const url = new URL(databaseUrl);
  url.searchParams.delete('pgbouncer');
  const pool = heardPool(new Pool({ ...more, connectionString: url.toString(), max }));
  // A failed SET fails the connection's next query too (same socket): the error surfaces there.
  pool.on('connect', (client) => void client.query(`SET TimeZone = 'UTC'`).catch(() => undefined));
  return pool;
}

/**
 * Every client of the pool keeps an 'error' listener for its whole life. A new connection is handed
 * to a pool.connect() caller (a transaction) from inside the socket read that completed its
 * startup, and the caller listens only once it resumes; when the server ends the connection in that
 * same read (pg_terminate_backend, a failover: fault scenario 4), the client emitted 'error' with
 * nobody listening, which killed the process. Heard here, the client is no longer queryable: the
 * caller's next statement fails and the client is destroyed on release, as for any broken one.
 */
function heardPool(pool: Pool): Pool {
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

// Rust-free Prisma client over node-postgres: no native engine is needed at run time.
// The client is built by the first use of one of its models or methods, not here: building it
// decodes Prisma's parameterisation graph (about 8 MB of heap) and its first query loads the
// WebAssembly query compiler (about 10 MB more), which a process whose work goes through the SQL
// executor may never need (docs/worker.md, "Memory").
export function createDb(databaseUrl: string, poolSize = 10): Db {
  let client: PrismaClient | undefined;
  const built = () => {
    client ??= new PrismaClient({
      // Our pool, not one the adapter makes from a config: its clients are heard (heardPool).
      adapter: new PrismaPg(createUtcPool(databaseUrl, poolSize), { disposeExternalPool: true }),
    });
    return client;
  };
  return new Proxy({} as PrismaClient, {
    get(_target, prop) {
      // Nothing to close on a client that was never built.
      if (prop === '$disconnect' && !client) return () => Promise.resolve();
      const value: unknown = Reflect.get(built(), prop);
      return typeof value === 'function' ? value.bind(client) : value;
    },
  });
}

export * from './generated/client';
