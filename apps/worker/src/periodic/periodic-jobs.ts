import { Worker, type Queue } from 'bullmq';
import { CronExpressionParser } from 'cron-parser';
import { queueNames, type Config } from '@mailrail/core';
import type { WorkerDeps } from '../deps';
import { sweepUnsentEmails } from '../send/sweep-unsent-emails';
import { pruneSesNotifications } from '../ses-events/prune-notifications';
import { keepDeclared, REDECLARE_EVERY_MS } from './keep-declared';

// The registry of periodic jobs. A capability that needs one (domain checks, webhook retries,
// cleanups) adds one entry here; start-up validates every cron expression and registers it as a
// BullMQ job scheduler on the maintenance queue, so each run happens once across all replicas.

export interface PeriodicJob {
  name: string;
  /** Cron expression, 5 fields or 6 with seconds, in UTC. */
  cron: string;
  run(deps: WorkerDeps): Promise<unknown>;
}

export function periodicJobs(config: Config): PeriodicJob[] {
  return [
    // Also recovers emails whose worker died mid-send (expired lease).
    { name: 'sweep-unsent-emails', cron: config.SEND_SWEEP_CRON, run: (deps) => sweepUnsentEmails(deps) },
    { name: 'prune-ses-notifications', cron: '23 * * * *', run: (deps) => pruneSesNotifications(deps) },
  ];
}

export class PeriodicJobError extends Error {}

/** Throws one error naming every job with an invalid cron expression or a duplicate name. */
export function validatePeriodicJobs(jobs: PeriodicJob[]): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const job of jobs) {
    if (seen.has(job.name)) problems.push(`${job.name}: declared twice`);
    seen.add(job.name);
    // cron-parser fills in missing fields ("" and "* * * *" parse as every minute): refuse those.
    const fields = job.cron.trim().split(/\s+/).filter(Boolean).length;
    if (!job.cron.trim().startsWith('@') && (fields < 5 || fields > 6)) {
      problems.push(`${job.name}: invalid cron "${job.cron}": expected 5 fields, or 6 with seconds`);
      continue;
    }
    try {
      CronExpressionParser.parse(job.cron, { tz: 'UTC' });
    } catch (err) {
      problems.push(`${job.name}: invalid cron "${job.cron}": ${(err as Error).message}`);
    }
  }
  if (problems.length) throw new PeriodicJobError(`Invalid periodic jobs:\n  ${problems.join('\n  ')}`);
}

export interface PeriodicJobsRunner {
  queue: Queue;
  worker: Worker;
  close(): Promise<void>;
}

export async function startPeriodicJobs(
  deps: WorkerDeps,
  jobs: PeriodicJob[],
  opts: { redeclareEveryMs?: number } = {},
): Promise<PeriodicJobsRunner> {
  validatePeriodicJobs(jobs);
  const queue = deps.queues.get(queueNames.maintenance);
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const declare = async () => {
    for (const job of jobs) {
      await queue.upsertJobScheduler(
        job.name,
        { pattern: job.cron, tz: 'UTC' },
        { name: job.name, data: {}, opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
      );
    }
  };
  const stopDeclaring = await keepDeclared('periodic jobs', declare, opts.redeclareEveryMs ?? REDECLARE_EVERY_MS, deps.log);
  // Schedulers of jobs that left the registry would otherwise fire forever.
  for (const s of await queue.getJobSchedulers()) {
    if (s.key && !byName.has(s.key)) await queue.removeJobScheduler(s.key);
  }
  const worker = new Worker(
    queueNames.maintenance,
    async (job) => {
      const periodic = byName.get(job.name);
      if (!periodic) return { skipped: 'unknown periodic job' };
      return periodic.run(deps);
    },
    { connection: deps.redis, prefix: deps.config.REDIS_PREFIX, concurrency: 1 },
  );
  worker.on('error', (err) => deps.log.error({ err }, 'periodic worker error'));
  worker.on('failed', (job, err) => deps.log.error({ err, job: job?.name }, 'periodic job failed'));
  deps.log.info({ jobs: jobs.map((j) => ({ name: j.name, cron: j.cron })) }, 'periodic jobs registered');
  return {
    queue,
    worker,
    close: async () => {
      stopDeclaring();
      await worker.close();
    },
  };
}
