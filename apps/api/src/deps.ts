import { closeBaseDeps, createBaseDeps, type BaseDeps } from '@mailrail/platform/process/base-deps';
import { type Config } from '@mailrail/platform/config/schema';
import type { SqlPool } from '@mailrail/platform/db/sql/executor';
import { createIntakeSql } from '@mailrail/domain/emails/email-intake';

/** Everything a request handler may touch; built once per process (or per test file). */
export interface ApiDeps extends BaseDeps {
  /** The email committer's node-postgres pool (POST /api/v1/emails writes through it, not Prisma). */
  sql: SqlPool;
}

export function createApiDeps(config: Config, overrides: Partial<ApiDeps> = {}): ApiDeps {
  const base = createBaseDeps(config, overrides, { service: 'mailrail-api' });
  return { ...base, sql: overrides.sql ?? createIntakeSql(config, base.log) };
}

export async function closeApiDeps(deps: ApiDeps): Promise<void> {
  await deps.sql.end();
  await closeBaseDeps(deps);
}
