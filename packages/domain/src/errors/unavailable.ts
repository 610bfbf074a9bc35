import { errorCodes } from '@mailrail/platform/db/sql/postgres-error';

const UNAVAILABLE_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  '53300', // too_many_connections: max_connections, or a role's or database's CONNECTION LIMIT
  '57P01',
  '57P02',
  '57P03',
  '08006',
  '08001',
  '08003',
  'P1001',
  'P1017',
  'P2037', // Prisma's driver adapter: TooManyConnections (53300, whose SQLSTATE it drops)
];

// Redis gone or changing hands (docs/redis.md): ioredis giving up on a command, a cluster without a
// master for a slot or moving one, a server loading its data set, a demoted Sentinel master.
// ioredis's cluster client also gives up with "Too many Cluster redirections. Last error:
// ReplyError: CLUSTERDOWN …" while a killed master's replica is promoted.
const REDIS_UNAVAILABLE =
  /max retries per request|None of startup nodes is available|Failed to refresh slots cache|All sentinels are unreachable|Too many Cluster redirections|^(CLUSTERDOWN|TRYAGAIN|LOADING|READONLY|MASTERDOWN) /;

/**
 * PostgreSQL or Redis unreachable: the HTTP API answers 503 and the SMTP relay 451, both of which
 * the client retries, never after a half-done write. Prisma's driver adapter wraps the PostgreSQL
 * error (a backend terminated mid-query is 57P01) in a PrismaClientKnownRequestError whose own
 * code is generic (P2010...): look at the cause too.
 */
export function isUnavailable(err: unknown): boolean {
  const codes = errorCodes(err);
  const msg = err instanceof Error ? err.message : '';
  return (
    codes.some((c) => UNAVAILABLE_CODES.includes(c)) ||
    /Connection terminated|terminating connection|connect ECONNREFUSED|Connection is closed|ECONNRESET|Can't reach database/i.test(msg) ||
    // 53300 through Prisma's raw queries: code P2010 and the adapter's TooManyConnections, no SQLSTATE.
    /too many clients already|too many (database )?connections/i.test(msg) ||
    // node-postgres: no connection of a bounded pool came free in time (the heavy pool, HEAVY_DB_WAIT_MS).
    /timeout exceeded when trying to connect/.test(msg) ||
    REDIS_UNAVAILABLE.test(msg)
  );
}
