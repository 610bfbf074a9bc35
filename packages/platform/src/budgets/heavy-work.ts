import type { Config } from '../config/schema';
import { createSqlPool, type SqlPool } from '../db/sql/executor';

// The one place that says how much of the shared machine a heavy operation may take. A heavy
// operation reads or writes many rows for one team (an export, a segment count or preview, a
// campaign's recipients, a CSV import, a large render): each runs under a per-team and a global
// concurrency limit counted in Redis (budget-gate.ts, shared by every replica), and its statements
// run on a small pool of their own (createHeavySql) under a statement timeout, so however many run
// they cannot take the connections that sends, sign-ins and the dashboard need. docs/security.md
// ("Resource budgets") lists them.

export const heavyOperations = ['export', 'segment', 'campaign-preparation', 'contact-import', 'preview'] as const;
export type HeavyOperation = (typeof heavyOperations)[number];

export interface HeavyBudget {
  /** Runs of this operation one team may have at once, across every replica. */
  perTeam: number;
  /** Runs of this operation all teams together may have at once. */
  global: number;
}

export type HeavyBudgetConfig = Pick<
  Config,
  | 'EXPORT_CONCURRENCY_PER_TEAM'
  | 'EXPORT_CONCURRENCY'
  | 'SEGMENT_CONCURRENCY_PER_TEAM'
  | 'SEGMENT_CONCURRENCY'
  | 'CAMPAIGN_PREPARATION_CONCURRENCY_PER_TEAM'
  | 'CAMPAIGN_PREPARATION_CONCURRENCY'
  | 'CONTACT_IMPORT_CONCURRENCY_PER_TEAM'
  | 'CONTACT_IMPORT_CONCURRENCY'
  | 'PREVIEW_CONCURRENCY_PER_TEAM'
  | 'PREVIEW_CONCURRENCY'
>;

export function heavyBudgets(config: HeavyBudgetConfig): Record<HeavyOperation, HeavyBudget> {
  return {
    export: { perTeam: config.EXPORT_CONCURRENCY_PER_TEAM, global: config.EXPORT_CONCURRENCY },
    segment: { perTeam: config.SEGMENT_CONCURRENCY_PER_TEAM, global: config.SEGMENT_CONCURRENCY },
    'campaign-preparation': { perTeam: config.CAMPAIGN_PREPARATION_CONCURRENCY_PER_TEAM, global: config.CAMPAIGN_PREPARATION_CONCURRENCY },
    'contact-import': { perTeam: config.CONTACT_IMPORT_CONCURRENCY_PER_TEAM, global: config.CONTACT_IMPORT_CONCURRENCY },
    preview: { perTeam: config.PREVIEW_CONCURRENCY_PER_TEAM, global: config.PREVIEW_CONCURRENCY },
  };
}

/**
 * The pool heavy statements run on: HEAVY_DB_POOL_SIZE connections per process, apart from the
 * pool of sends and requests. A statement waits at most HEAVY_DB_WAIT_MS for one of them (then the
 * caller answers 503) and each transaction sets its own statement timeout (setLocalStatementTimeout).
 */
export function createHeavySql(
  config: Pick<Config, 'DATABASE_URL' | 'HEAVY_DB_POOL_SIZE' | 'HEAVY_DB_WAIT_MS'>,
  onIdleError: (err: Error) => void,
): SqlPool {
  return createSqlPool(config.DATABASE_URL, config.HEAVY_DB_POOL_SIZE, onIdleError, { connectWaitMs: config.HEAVY_DB_WAIT_MS });
}
