import type { JobsOptions, Queue } from 'bullmq';

export type Enqueue = (name: string, data: unknown, opts: JobsOptions) => Promise<void>;

/**
 * Jobs added by requests arriving together go to Redis in one addBulk: under SNS bursts one round
 * trip (and its CPU) serves many events instead of one each. Each caller still waits for its own job to be stored
 * (the 200 to SNS means "queued"), and a failed batch fails every request in it.
 */
export function batchedEnqueue(queue: Queue, maxBatch = 200): Enqueue {
  let pending: { job: { name: string; data: unknown; opts: JobsOptions }; resolve: () => void; reject: (err: unknown) => void }[] = [];

  function flush() {
    const batch = pending.slice(0, maxBatch);
    pending = pending.slice(maxBatch);
    if (pending.length) setImmediate(flush);
    queue.addBulk(batch.map((p) => p.job)).then(
      () => batch.forEach((p) => p.resolve()),
      (err) => batch.forEach((p) => p.reject(err)),
    );
  }

  return (name, data, opts) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ job: { name, data, opts }, resolve, reject });
      if (pending.length === 1) setImmediate(flush);
    });
}
