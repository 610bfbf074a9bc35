import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client';

export type Db = PrismaClient;

/**
 * Every connection's session runs in UTC. The columns are timestamptz, which needs no zone to be
 * right, but Prisma's adapter sends a Date as a UTC wall time without offset ("2026-11-23 22:00:00"),
 * which PostgreSQL reads in the session's TimeZone; so does to_char/::date. Pinning UTC keeps
 * both right whatever the server's default.
 */
export const UTC_SESSION_OPTIONS = '-c TimeZone=UTC';

// Rust-free Prisma client over node-postgres: no native engine is needed at run time.
export function createDb(databaseUrl: string, poolSize = 10): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize, options: UTC_SESSION_OPTIONS });
  return new PrismaClient({ adapter });
}

export * from './generated/client';
