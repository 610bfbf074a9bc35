import type { Queue } from 'bullmq';

// Jobs with a fixed id (send jobs use the email id, campaign windows `window-<id>`, webhook
// deliveries their row id) are how we make enqueueing idempotent: BullMQ ignores an add whose id
// exists. The flip side: a job that exists but will never run blocks its id for good. That is a
// finished job, or a hash in no list at all (state "unknown"), which BullMQ leaves behind when Redis
// keys are lost one by one (eviction, a scripted cleanup) while a worker takes the job.

const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/**
 * Makes `jobId` free to be added again unless its job is live. Returns true when an add will take,
 * false when the job is live or locked (leave it; the next pass looks again).
 */
export async function clearDeadJob(queue: Queue, jobId: string, knownState?: string): Promise<boolean> {
  const state = knownState ?? (await queue.getJobState(jobId));
  if (LIVE_STATES.has(state)) return false;
  return (await queue.remove(jobId).catch(() => 0)) === 1;
}
