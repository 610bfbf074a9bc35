import type { Job, Queue } from 'bullmq';

// Conditions a test can await instead of sleeping and hoping: "nothing more happened" is only
// worth asserting once the work that could make it happen is known to be over.

/** No job waiting, prioritized, running or delayed: everything added so far has been processed. */
export async function queueIsIdle(queue: Queue): Promise<boolean> {
  const counts = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'waiting-children');
  return Object.values(counts).every((n) => n === 0);
}

/** The job is over (completed, failed for good) or gone: it will not run again by itself. */
export async function jobIsSettled(queue: Queue, jobId: string): Promise<boolean> {
  const state = await queue.getJobState(jobId);
  return state === 'completed' || state === 'failed' || state === 'unknown';
}

/** A job named `name` that started at or after `since` (epoch ms) has completed. */
export async function completedSince(queue: Queue, name: string, since: number): Promise<boolean> {
  const recent = await queue.getJobs(['completed'], 0, 50);
  return recent.some((j) => j.name === name && (j.processedOn ?? 0) >= since);
}

/** The send job that carries an email: its own (job id = email id), or its group's (Email.sendJobId). */
export async function sendJobOf(queue: Queue, email: { id: string; sendJobId: string | null }): Promise<Job | undefined> {
  return (await queue.getJob(email.id)) ?? (email.sendJobId ? await queue.getJob(email.sendJobId) : undefined);
}
