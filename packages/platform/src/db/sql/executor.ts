import type { Pool, PoolClient } from 'pg';
import { createUtcPool, type Db } from '../client';

// The one way raw SQL reaches PostgreSQL. Statements are text with $1…$n placeholders and a
// parameter list: values are never spliced into the text. Every DateTime column is timestamptz,
// so a JS Date is a valid parameter as it is (no ISO strings, no AT TIME ZONE).

/** Runs one parameterized statement and answers its rows. */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement for its effect and answers the number of rows it changed. */
  execute(text: string, params?: readonly unknown[]): Promise<number>;
}

/** An executor that can also run a unit of work as one transaction (on one connection). */
export interface TransactionalSqlExecutor extends SqlExecutor {
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** The node-postgres pool of the worker's hot paths, behind the executor interface. */
export interface SqlPool extends TransactionalSqlExecutor {
  end(): Promise<void>;
}

const onClient = (client: Pick<PoolClient, 'query'>): SqlExecutor => ({
  query: async <T>(text: string, params: readonly unknown[] = []) => (await client.query(text, params as unknown[])).rows as T[],
  execute: async (text: string, params: readonly unknown[] = []) => (await client.query(text, params as unknown[])).rowCount ?? 0,
});

export function poolExecutor(pool: Pool): SqlPool {
  return {
    ...onClient(pool),
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      // A connection that dies while checked out and between two statements (the work awaits
      // something else) emits 'error' on the client, not on the pool: unheard, that kills the
      // process. Heard, the next statement fails and the broken client is destroyed on release.
      let broken: Error | undefined;
      const onError = (err: Error) => (broken = err);
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await work(onClient(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackErr: Error) => (broken ??= rollbackErr));
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    end: () => pool.end(),
  };
}

/**
 * A pg pool that survives the server closing idle connections (restart, failover): the error is
 * reported and the pool opens a new connection on the next query.
 */
export function createSqlPool(databaseUrl: string, max: number, onIdleError: (err: Error) => void): SqlPool {
  const pool = createUtcPool(databaseUrl, max);
  pool.on('error', onIdleError);
  return poolExecutor(pool);
}

type PrismaRaw = Pick<Db, '$queryRawUnsafe' | '$executeRawUnsafe'>;

/**
 * Prisma's connection (or one of its interactive transactions) behind the executor interface, for
 * code that runs inside a Prisma transaction or in the API, which has no pg pool. This is the only
 * place that calls Prisma's *Unsafe methods, and only ever with a parameter list.
 * Note: Prisma answers bigint columns as BigInt where node-postgres answers strings; cast in SQL
 * (::int, ::text) where a statement may run on both.
 */
export function prismaExecutor(db: PrismaRaw): SqlExecutor {
  return {
    query: <T>(text: string, params: readonly unknown[] = []) => db.$queryRawUnsafe<T[]>(text, ...params),
    execute: (text: string, params: readonly unknown[] = []) => db.$executeRawUnsafe(text, ...params),
  };
}

/**
 * Every later statement of the transaction `tx` is stopped after `ms` (SQLSTATE 57014,
 * isQueryCanceled): SET LOCAL statement_timeout, with the value as a parameter. Ends with the
 * transaction, so a pooled connection never keeps it.
 */
export async function setLocalStatementTimeout(tx: SqlExecutor, ms: number): Promise<void> {
  await tx.query(`SELECT set_config('statement_timeout', $1, true)`, [`${Math.round(ms)}ms`]);
}

/** Runs `work` as one transaction of `executor`: all its statements commit or none do. */
export function withTransaction<T>(executor: TransactionalSqlExecutor, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  return executor.transaction(work);
}
