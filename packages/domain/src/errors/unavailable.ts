import { errorCodes } from '@mailrail/platform/db/sql/postgres-error';

const UNAVAILABLE_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  '57P01',
  '57P02',
  '57P03',
  '08006',
  '08001',
  '08003',
  'P1001',
  'P1017',
];

// Redis gone or changing hands (docs/redis.md): ioredis giving up on a command, a cluster without a
// master for a slot or moving one, a server loading its data set, a demoted Sentinel master.
const REDIS_UNAVAILABLE =
  /max retries per request|None of startup nodes is available|Failed to refresh slots cache|All sentinels are unreachable|^(CLUSTERDOWN|TRYAGAIN|LOADING|READONLY|MASTERDOWN) /;

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
    REDIS_UNAVAILABLE.test(msg)
  );
}
