import { DelayedError, type Job } from 'bullmq';
import { BudgetFull, type BudgetGate } from './budget-gate';
import type { HeavyOperation } from './heavy-work';

// A heavy worker job (campaign preparation, a CSV import) runs in a place of its team's budget.
// Without a free place it steps back to delayed and asks again later: moved, not failed, so it uses
// no attempt, and the worker's slot goes at once to the next job, most likely another team's.

/** How long a job whose team (or the server) has no place waits before it asks again. */
const BUDGET_RECHECK_MS = 1000;

/** Moves the running job back to delayed for `delayMs` (0: to the end of the line) without counting an attempt. */
export async function stepBack(job: Job, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

/** Runs `work` in a place of `operation` for the team, released after; with no place the job steps back. */
export async function runJobInBudget<T>(
  gate: BudgetGate,
  operation: HeavyOperation,
  teamId: number,
  job: Job,
  token: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  let lease;
  try {
    lease = await gate.acquire(operation, teamId);
  } catch (err) {
    if (err instanceof BudgetFull) return stepBack(job, token, BUDGET_RECHECK_MS);
    throw err;
  }
  try {
    return await work();
  } finally {
    await lease.release();
  }
}
