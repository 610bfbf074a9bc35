import type { Job, Queue, Worker } from 'bullmq';
import type { Logger } from '@mailrail/platform/log/logger';

// A BullMQ worker can stop taking jobs after a Redis failover without any error: its fetch loop or
// a handler waits on a command that never settles. The cluster failover test caught it: all three
// workers' maintenance consumers went quiet after the send queue's master was killed, with four
// jobs waiting, so the sweeper stopped and six emails of failed group jobs were never sent. BullMQ's
// maintainers leave recovery to the application (taskforcesh/bullmq#3088, #3185): this watch
// replaces such a worker in the same process with a new one on fresh blocking connections.

export interface StuckWorkerWatchOptions {
  /** A job waiting this long while this worker started none and has a free slot (or only lost jobs) means it is stuck. */
  stuckAfterMs: number;
  /** How often the queue is looked at. */
  checkEveryMs: number;
  log: Logger;
}

export interface WatchedWorker<T> {
  /** The worker consuming now (a replacement after a stall). */
  current(): Worker<T>;
  /** Stops the watch and closes the current worker (as Worker.close). */
  close(force?: boolean): Promise<void>;
}

/** What a worker was last seen doing, from its own events. */
interface Activity {
  lastStartAt: number;
  /** Ids of the jobs it started and has not finished. */
  inFlight: Set<string>;
}

function track<T>(worker: Worker<T>): Activity {
  const activity: Activity = { lastStartAt: Date.now(), inFlight: new Set() };
  worker.on('active', (job) => {
    activity.lastStartAt = Date.now();
    if (job.id) activity.inFlight.add(job.id);
  });
  const done = (job: Job | undefined) => {
    if (job?.id) activity.inFlight.delete(job.id);
  };
  worker.on('completed', done);
  worker.on('failed', done);
  return activity;
}

/**
 * Why the worker should be replaced, or null. Stuck: the oldest waiting (or due delayed) job has
 * been due for `stuckAfterMs`, this worker started no job in that time, and it has a free slot or
 * one of its running jobs is no longer active in Redis (its handler waits on a command that a
 * failover lost). A worker busy with jobs it still holds is slow, not stuck; a paused or closing
 * one is left alone.
 */
async function stuckReason<T>(
  worker: Worker<T>,
  activity: Activity,
  queue: Queue,
  stuckAfterMs: number,
): Promise<Record<string, unknown> | null> {
  const now = Date.now();
  if (worker.isPaused() || worker.closing || now - activity.lastStartAt < stuckAfterMs) return null;
  // A delayed job counts once due: workers promote due jobs as they fetch, so while every worker
  // of the queue is stuck, a due job stays delayed.
  const [[waiting], [delayed]] = await Promise.all([queue.getJobs(['wait'], 0, 0, true), queue.getJobs(['delayed'], 0, 0, true)]);
  const oldest = [waiting, delayed]
    .filter((job): job is Job => job !== undefined)
    .map((job) => ({ id: job.id, dueAt: job.timestamp + (job.delay ?? 0) }))
    .sort((a, b) => a.dueAt - b.dueAt)[0];
  if (!oldest) return null;
  const waitingForMs = now - oldest.dueAt;
  if (waitingForMs < stuckAfterMs) return null;
  const running = [...activity.inFlight];
  const states = await Promise.all(running.map((id) => queue.getJobState(id)));
  const lost = running.filter((_, i) => states[i] !== 'active');
  const freeSlots = worker.concurrency - activity.inFlight.size;
  if (freeSlots <= 0 && lost.length === 0) return null;
  return { waitingJob: oldest.id, waitingForMs, sinceLastStartMs: now - activity.lastStartAt, freeSlots, lostJobs: lost };
}

/**
 * Runs `make()`'s worker and replaces it with a new one whenever `stuckReason` finds it stuck. The
 * old worker is force-closed in the background, at most a few seconds waited for: its hung command
 * may never settle. A handler it left running may still finish later, so the jobs of a watched
 * queue must tolerate an overlapping run (every periodic job does).
 */
export function replaceStuckWorker<T>(make: () => Worker<T>, queue: Queue, opts: StuckWorkerWatchOptions): WatchedWorker<T> {
  let worker = make();
  let activity = track(worker);
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    stuckReason(worker, activity, queue, opts.stuckAfterMs)
      .then((reason) => {
        if (!reason || worker.closing) return;
        opts.log.warn({ queue: queue.name, ...reason }, 'worker took no job while one waited: replaced by a new worker');
        const stuck = worker;
        worker = make();
        activity = track(worker);
        void Promise.race([stuck.close(true), new Promise((resolve) => setTimeout(resolve, 5000).unref())]).catch(() => undefined);
      })
      .catch((err: unknown) => opts.log.warn({ err, queue: queue.name }, 'could not check whether the worker is stuck'))
      .finally(() => {
        checking = false;
      });
  }, opts.checkEveryMs);
  timer.unref();
  return {
    current: () => worker,
    close: async (force?: boolean) => {
      clearInterval(timer);
      await worker.close(force);
    },
  };
}
