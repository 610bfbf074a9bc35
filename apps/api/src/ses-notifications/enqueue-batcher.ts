import { createBatcher } from '@mailrail/platform/batching/batcher';
import type { JobsOptions, Queue } from 'bullmq';

export type Enqueue = (name: string, data: unknown, opts: JobsOptions) => Promise<void>;

/**
 * Jobs added by requests arriving together (one turn of the event loop) go to Redis in one
 * addBulk: under SNS bursts one round trip (and its CPU) serves many events instead of one each.
 * Each caller still waits for its own job to be stored (the 200 to SNS means "queued"), and a
 * failed batch fails every request in it.
 */
export function batchedEnqueue(queue: Queue, maxBatch = 200): Enqueue {
  const jobs = createBatcher<{ name: string; data: unknown; opts: JobsOptions }, void>(
    (batch) => queue.addBulk(batch).then(() => batch.map(() => undefined)),
    { schedule: 'turn', maxBatch },
  );
  return (name, data, opts) => jobs.submit({ name, data, opts });
}
