import { Client, Pool } from 'pg';
import { createTestDatabase, dropDatabase } from '@mailrail/testing/databases';
import { createUtcPool } from '../client';
import { createSqlPool, poolExecutor, withTransaction, type SqlExecutor } from './executor';

// The worker's pool outlives PostgreSQL cutting its connections (restart, failover, an operator's
// pg_terminate_backend), also while a transaction holds one between two statements.

let url: string;
beforeAll(async () => {
  url = await createTestDatabase();
});
afterAll(() => dropDatabase(url));

it('a connection killed between two statements of a transaction fails that transaction, not the process, and the pool goes on', async () => {
  const pool = createSqlPool(url, 1, () => undefined);
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const uncaught: Error[] = [];
  const onUncaught = (err: Error) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    const attempt = withTransaction(pool, async (tx) => {
      const [{ pid }] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Killed while the work waits on something else: no statement of ours is running.
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((r) => setTimeout(r, 300));
      return tx.query('SELECT 1');
    });
    await expect(attempt).rejects.toThrow();
    expect(uncaught).toEqual([]);
    // The broken connection was destroyed, not handed to the next caller.
    expect(await withTransaction(pool, (tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
  } finally {
    process.off('uncaughtException', onUncaught);
    await admin.end();
    await pool.end();
  }
});

it('a new connection that errors before its taker listens does not kill the process', async () => {
  // The server ending a connection in the same read that completed its startup: the pool hands the
  // client to pool.connect()'s caller from inside that read, and the error comes before the caller
  // resumes. Reproduced by emitting the error in a microtask queued when the client is acquired,
  // which runs after the pool took its own listener off and before the caller's code.
  const pool = createUtcPool(url, 1);
  const uncaught: Error[] = [];
  const onUncaught = (err: Error) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  pool.once('acquire', (client) =>
    queueMicrotask(() => client.emit('error', new Error('terminating connection due to administrator command'))),
  );
  try {
    const client = await pool.connect();
    client.release(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(uncaught).toEqual([]);
  } finally {
    process.off('uncaughtException', onUncaught);
    await pool.end();
  }
});

it('prepares a named statement once per connection, and runs it as plain text when told not to prepare (PgBouncer)', async () => {
  const prepared = createSqlPool(url, 1, () => undefined);
  const plain = poolExecutor(new Pool({ connectionString: url, max: 1 }), false);
  const statement = { name: 'executor_test_one', text: 'SELECT $1::int + 1 AS two' };
  const names = (sql: SqlExecutor) =>
    sql.query<{ name: string }>('SELECT name FROM pg_prepared_statements').then((r) => r.map((x) => x.name));
  try {
    for (const sql of [prepared, plain]) {
      expect(await sql.query(statement, [1])).toEqual([{ two: 2 }]);
      expect(await sql.query(statement, [2])).toEqual([{ two: 3 }]);
    }
    expect(await names(prepared)).toEqual(['executor_test_one']);
    expect(await names(plain)).toEqual([]);
  } finally {
    await prepared.end();
    await plain.end();
  }
});
