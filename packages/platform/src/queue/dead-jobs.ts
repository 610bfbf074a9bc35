import type { Queue } from 'bullmq';

// Jobs with a fixed id (send jobs use the email id, campaign windows `window-<id>`, webhook
// deliveries their row id) are how we make enqueueing idempotent: BullMQ ignores an add whose id
// exists. The flip side: a job that exists but will never run blocks its id for good. That is a
// finished job, or a hash in no list at all (state "unknown"), which BullMQ leaves behind when Redis
// keys are lost one by one (eviction, a scripted cleanup) while a worker takes the job.

const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/** A job in this state will run, or is running (an active job's lock is not looked at). */
export const isLiveJobState = (state: string) => LIVE_STATES.has(state);

export interface ClearDeadJobOptions {
  /**
   * Also free an active job whose lock is gone: its worker died (SIGKILL) and BullMQ's stalled
   * check has not moved it back yet. That check runs at most once per stalled interval per queue,
   * and the interval is whichever worker of the queue ran it last, so it can lag 30 s or more.
   * Only for a caller that knows from PostgreSQL that the job's work is abandoned (the email's
   * lease has expired); a job whose worker still holds the lock is left alone.
   */
  unlockedActive?: boolean;
}

/**
 * Makes `jobId` free to be added again unless its job is live. Returns true when an add will take,
 * false when the job is live or locked (leave it; the next pass looks again).
 */
export async function clearDeadJob(queue: Queue, jobId: string, knownState?: string, opts: ClearDeadJobOptions = {}): Promise<boolean> {
  const state = knownState ?? (await queue.getJobState(jobId));
  if (state === 'active' ? !opts.unlockedActive : LIVE_STATES.has(state)) return false;
  // BullMQ's removeJob refuses a locked job in the same script that removes it: no race with a
  // worker that still holds it.
  return (await queue.remove(jobId).catch(() => 0)) === 1;
}
