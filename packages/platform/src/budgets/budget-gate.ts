import { Semaphore } from 'redis-semaphore';
import type { Logger } from '../log/logger';
import type { Redis } from '../redis/client';
import { heavyBudgets, type HeavyBudgetConfig, type HeavyOperation } from './heavy-work';

// Per-team and global concurrency of a heavy operation, counted in Redis so every replica of the
// API and the worker shares one count (redis-semaphore: a sorted set of holders per key, each
// holder's lease renewed while it runs, so a crashed process frees its place when the lease
// lapses). The team's place is taken first: a team at its own limit never takes a global place
// from the others.

/** How long a holder that stopped renewing (a killed process) keeps its place. */
const LEASE_MS = 30_000;

export interface BudgetLease {
  release(): Promise<void>;
}

/** Why a heavy operation could not start now. */
export class BudgetFull extends Error {
  constructor(
    readonly operation: HeavyOperation,
    /** `team`: this team runs as many as it may; `global`: all teams together do. */
    readonly scope: 'team' | 'global',
    readonly limit: number,
  ) {
    super(
      scope === 'team'
        ? `This team already runs ${limit} ${operation} operation(s) at once, its limit: retry when one finishes`
        : `The server already runs ${limit} ${operation} operation(s) at once for all teams: retry shortly`,
    );
  }
}

export interface BudgetGate {
  /** A place for one run of `operation` by the team, or BudgetFull. Release it when the run ends, however it ends. */
  acquire(operation: HeavyOperation, teamId: number): Promise<BudgetLease>;
  /** Runs `work` in a place of `operation`, released after; BudgetFull when there is none. */
  run<T>(operation: HeavyOperation, teamId: number, work: () => Promise<T>): Promise<T>;
}

export function createBudgetGate(redis: Redis, opts: { prefix: string; config: HeavyBudgetConfig; log: Logger }): BudgetGate {
  const budgets = heavyBudgets(opts.config);
  const semaphore = (key: string, limit: number) =>
    new Semaphore(redis, `${opts.prefix}:budget:${key}`, limit, {
      lockTimeout: LEASE_MS,
      refreshInterval: LEASE_MS / 3,
      acquireAttemptsLimit: 1,
      onLockLost: (err) => opts.log.warn({ err, key }, 'a heavy operation lost its budget lease (Redis lost it): it runs to its end'),
    });

  const acquire = async (operation: HeavyOperation, teamId: number): Promise<BudgetLease> => {
    const budget = budgets[operation];
    const team = semaphore(`${operation}:team:${teamId}`, budget.perTeam);
    if (!(await team.tryAcquire())) throw new BudgetFull(operation, 'team', budget.perTeam);
    const all = semaphore(`${operation}:all`, budget.global);
    let global = false;
    try {
      global = await all.tryAcquire();
    } finally {
      if (!global) await team.release().catch(() => undefined);
    }
    if (!global) throw new BudgetFull(operation, 'global', budget.global);
    let released = false;
    return {
      async release() {
        if (released) return;
        released = true;
        await Promise.all([team.release(), all.release()]).catch((err: unknown) =>
          opts.log.warn({ err, operation }, 'could not release a heavy operation budget lease: it lapses by itself'),
        );
      },
    };
  };

  return {
    acquire,
    async run(operation, teamId, work) {
      const lease = await acquire(operation, teamId);
      try {
        return await work();
      } finally {
        await lease.release();
      }
    },
  };
}
