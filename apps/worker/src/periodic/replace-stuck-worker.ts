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
  /** The clock the waits are measured on (tests advance their own). */
  now?: () => number;
}

export interface WatchedWorker {
  /** How many times the worker was replaced since the watch started. */
  replacements(): number;
  /** Stops the watch and closes the current worker (as Worker.close). */
  close(force?: boolean): Promise<void>;
}

/** What a worker was last seen doing, from its own events. */
interface Activity {
  /** When it last started or finished a job (or was created): a worker that just finished one is about to fetch the next. */
  lastProgressAt: number;
  /** Ids of the jobs it started and has not finished. */
  inFlight: Set<string>;
}

function track<T>(worker: Worker<T>, now: () => number): Activity {
  const activity: Activity = { lastProgressAt: now(), inFlight: new Set() };
  worker.on('active', (job) => {
    activity.lastProgressAt = now();
    if (job.id) activity.inFlight.add(job.id);
  });
  const done = (job: Job | undefined) => {
    activity.lastProgressAt = now();
    if (job?.id) activity.inFlight.delete(job.id);
  };
  worker.on('completed', done);
  worker.on('failed', done);
  return activity;
}

/** What one look at the queue and the worker found. */
export interface StuckCheck {
  now: number;
  /** When the worker last started or finished a job. */
  lastProgressAt: number;
  /** When the oldest waiting (or delayed) job became due; undefined when none is. */
  oldestDueAt: number | undefined;
  concurrency: number;
  /** Ids of the jobs the worker runs, each with whether Redis still has it active. */
  running: { id: string; active: boolean }[];
}

/**
 * Stuck: a job has been due for `stuckAfterMs`, the worker made no progress (started or finished
 * no job) in that time, and it has a free slot or one of its running jobs is no longer active in
 * Redis (its handler waits on a command that a failover lost). A worker busy with jobs it still
 * holds is slow, not stuck; one that finished a job a moment ago is fetching the next.
 */
export function stuckVerdict(check: StuckCheck, stuckAfterMs: number): Record<string, unknown> | null {
  const idleForMs = check.now - check.lastProgressAt;
  if (idleForMs < stuckAfterMs || check.oldestDueAt === undefined) return null;
  const waitingForMs = check.now - check.oldestDueAt;
  if (waitingForMs < stuckAfterMs) return null;
  const lostJobs = check.running.filter((job) => !job.active).map((job) => job.id);
  const freeSlots = check.concurrency - check.running.length;
  if (freeSlots <= 0 && lostJobs.length === 0) return null;
  return { waitingForMs, idleForMs, freeSlots, lostJobs };
}

/** Looks at the queue and the worker; null unless `stuckVerdict` finds it stuck. A paused or closing worker is left alone. */
async function stuckReason<T>(
  worker: Worker<T>,
  activity: Activity,
  queue: Queue,
  stuckAfterMs: number,
  now: () => number,
): Promise<Record<string, unknown> | null> {
  if (worker.isPaused() || worker.closing || now() - activity.lastProgressAt < stuckAfterMs) return null;
  const progressBefore = activity.lastProgressAt;
  // A delayed job counts once due: workers promote due jobs as they fetch, so while every worker
  // of the queue is stuck, a due job stays delayed.
  const [[waiting], [delayed]] = await Promise.all([queue.getJobs(['wait'], 0, 0, true), queue.getJobs(['delayed'], 0, 0, true)]);
  const dueTimes = [waiting, delayed].filter((job): job is Job => job !== undefined).map((job) => job.timestamp + (job.delay ?? 0));
  const ids = [...activity.inFlight];
  const states = await Promise.all(ids.map((id) => queue.getJobState(id)));
  // The worker moved on while Redis was read (finished one job, took the next): what was read is stale.
  if (activity.lastProgressAt !== progressBefore) return null;
  return stuckVerdict(
    {
      now: now(),
      lastProgressAt: activity.lastProgressAt,
      oldestDueAt: dueTimes.length ? Math.min(...dueTimes) : undefined,
      concurrency: worker.concurrency,
      running: ids.map((id, i) => ({ id, active: states[i] === 'active' })),
    },
    stuckAfterMs,
  );
}

/**
 * Runs `make()`'s worker and replaces it with a new one whenever `stuckReason` finds it stuck. The
 * old worker is force-closed in the background, at most a few seconds waited for: its hung command
 * may never settle. A handler it left running may still finish later, so the jobs of a watched
 * queue must tolerate an overlapping run (every periodic job does).
 */
export function replaceStuckWorker<T>(make: () => Worker<T>, queue: Queue, opts: StuckWorkerWatchOptions): WatchedWorker {
  const now = opts.now ?? Date.now;
  let worker = make();
  let activity = track(worker, now);
  let replacements = 0;
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    stuckReason(worker, activity, queue, opts.stuckAfterMs, now)
      .then((reason) => {
        if (!reason || worker.closing) return;
        opts.log.warn({ queue: queue.name, ...reason }, 'worker took no job while one waited: replaced by a new worker');
        const stuck = worker;
        worker = make();
        activity = track(worker, now);
        replacements += 1;
        void Promise.race([stuck.close(true), new Promise((resolve) => setTimeout(resolve, 5000).unref())]).catch(() => undefined);
      })
      .catch((err: unknown) => opts.log.warn({ err, queue: queue.name }, 'could not check whether the worker is stuck'))
      .finally(() => {
        checking = false;
      });
  }, opts.checkEveryMs);
  timer.unref();
  return {
    replacements: () => replacements,
    close: async (force?: boolean) => {
      clearInterval(timer);
      await worker.close(force);
    },
  };
}
