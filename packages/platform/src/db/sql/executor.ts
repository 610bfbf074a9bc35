import type { Pool, PoolClient } from 'pg';
import { behindPgBouncer, createUtcPool, PLAN_EACH_RUN_SESSION_OPTIONS, UTC_SESSION_OPTIONS, type Db } from '../client';

// The one way raw SQL reaches PostgreSQL. Statements are text with $1…$n placeholders and a
// parameter list: values are never spliced into the text. Every DateTime column is timestamptz,
// so a JS Date is a valid parameter as it is (no ISO strings, no AT TIME ZONE).

/**
 * A hot statement with a name: node-postgres prepares it once per connection and then only binds
 * and executes it, so PostgreSQL stops parsing and planning it at every call (for the long hot
 * statements, such as the email insert, a real share of their cost); on a pool with `planEachRun` it still plans each
 * call and saves the parsing only (createSqlPool). Names are unique per text. Behind PgBouncer in
 * transaction mode, and through Prisma, it runs as plain text.
 */
export interface NamedStatement {
  name: string;
  text: string;
}
export type SqlStatement = string | NamedStatement;

/** Runs one parameterized statement and answers its rows. */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(statement: SqlStatement, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement for its effect and answers the number of rows it changed. */
  execute(statement: SqlStatement, params?: readonly unknown[]): Promise<number>;
}

/** The SQL text of a statement, named or not. */
export const statementText = (statement: SqlStatement): string => (typeof statement === 'string' ? statement : statement.text);

/** An executor that can also run a unit of work as one transaction (on one connection). */
export interface TransactionalSqlExecutor extends SqlExecutor {
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** The node-postgres pool of the worker's hot paths, behind the executor interface. */
export interface SqlPool extends TransactionalSqlExecutor {
  end(): Promise<void>;
}

const onClient = (client: Pick<PoolClient, 'query'>, prepare: boolean): SqlExecutor => {
  const run = (statement: SqlStatement, params: readonly unknown[]) =>
    typeof statement !== 'string' && prepare
      ? client.query({ name: statement.name, text: statement.text, values: params as unknown[] })
      : client.query(statementText(statement), params as unknown[]);
  return {
    query: async <T>(statement: SqlStatement, params: readonly unknown[] = []) => (await run(statement, params)).rows as T[],
    execute: async (statement: SqlStatement, params: readonly unknown[] = []) => (await run(statement, params)).rowCount ?? 0,
  };
};

/** `prepare`: named statements are prepared per connection (not behind PgBouncer's transaction mode). */
export function poolExecutor(pool: Pool, prepare = true): SqlPool {
  return {
    ...onClient(pool, prepare),
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
        const result = await work(onClient(client, prepare));
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
 * reported and the pool opens a new connection on the next query. `planEachRun`: its named
 * statements are planned at every run (PLAN_EACH_RUN_SESSION_OPTIONS), for statements on the
 * partitioned email log. `connectWaitMs`: how long a statement waits for a free connection before
 * it fails (unset: as long as it takes).
 */
export function createSqlPool(
  databaseUrl: string,
  max: number,
  onIdleError: (err: Error) => void,
  opts: { planEachRun?: boolean; connectWaitMs?: number } = {},
): SqlPool {
  const pool = createUtcPool(databaseUrl, max, opts.planEachRun ? PLAN_EACH_RUN_SESSION_OPTIONS : UTC_SESSION_OPTIONS, {
    connectionTimeoutMillis: opts.connectWaitMs,
  });
  pool.on('error', onIdleError);
  return poolExecutor(pool, !behindPgBouncer(databaseUrl));
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
    query: <T>(statement: SqlStatement, params: readonly unknown[] = []) => db.$queryRawUnsafe<T[]>(statementText(statement), ...params),
    execute: (statement: SqlStatement, params: readonly unknown[] = []) => db.$executeRawUnsafe(statementText(statement), ...params),
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
