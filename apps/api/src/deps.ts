import { closeBaseDeps, createBaseDeps, type BaseDeps } from '@mailrail/platform/process/base-deps';
import { type Config } from '@mailrail/platform/config/schema';
import type { SqlPool } from '@mailrail/platform/db/sql/executor';
import { createIntakeSql } from '@mailrail/domain/emails/email-intake';
import { createBudgetGate, type BudgetGate } from '@mailrail/platform/budgets/budget-gate';
import { createHeavySql } from '@mailrail/platform/budgets/heavy-work';
import { createPreviewRenderer, type PreviewRenderer } from './campaigns/render-pool';

/** Everything a request handler may touch; built once per process (or per test file). */
export interface ApiDeps extends BaseDeps {
  /** The email committer's node-postgres pool (POST /api/v1/emails writes through it, not Prisma). */
  sql: SqlPool;
  /** The small pool of heavy operations (exports, segment evaluation), apart from the one requests use. */
  heavySql: SqlPool;
  /** Per-team and global concurrency of heavy operations (packages/platform/src/budgets). */
  budgets: BudgetGate;
  /** Campaign previews and test sends, rendered on threads of their own. */
  previews: PreviewRenderer;
}

export function createApiDeps(config: Config, overrides: Partial<ApiDeps> = {}): ApiDeps {
  const base = createBaseDeps(config, overrides, { service: 'mailrail-api' });
  return {
    ...base,
    sql: overrides.sql ?? createIntakeSql(config, base.log),
    heavySql: overrides.heavySql ?? createHeavySql(config, (err) => base.log.warn({ err }, 'heavy pool connection lost')),
    budgets: overrides.budgets ?? createBudgetGate(base.redis, { prefix: config.REDIS_PREFIX, config, log: base.log }),
    previews: overrides.previews ?? createPreviewRenderer(config.PREVIEW_RENDER_THREADS),
  };
}

export async function closeApiDeps(deps: ApiDeps): Promise<void> {
  await deps.sql.end();
  await deps.heavySql.end();
  await deps.previews.close();
  await closeBaseDeps(deps);
}
