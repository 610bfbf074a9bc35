import { DelayedError, Worker, type Job } from 'bullmq';
import { queueNames, queuePrefix, type SendEmailJob, type SendLane } from '@mailrail/platform/queue/queues';
import type { WorkerDeps } from '../deps';
import { splitRate } from './rate-limits';
import { sendOneEmail, type SendOutcome } from './send-email';

// BullMQ glue around sendOneEmail: one worker per SES region and lane, rate-limited by a Redis
// limiter that all replicas share. The job only carries the email id; the database decides.

export const SEND_LANES: SendLane[] = ['transactional', 'marketing'];

export interface SendWorkers {
  workers: Worker<SendEmailJob, SendOutcome>[];
  /** Stops taking jobs, waits for the sends in flight. */
  close(): Promise<void>;
}

export function startSendWorkers(deps: WorkerDeps, ratesByRegion: Map<string, number>): SendWorkers {
  const workers: Worker<SendEmailJob, SendOutcome>[] = [];
  const stalledAfterMs = Math.min(30_000, Math.max(5_000, (deps.config.SEND_LEASE_SECONDS * 1000) / 2));
  for (const region of deps.config.sesRegions) {
    const limits = splitRate(ratesByRegion.get(region) ?? 1, deps.config.SES_MARKETING_SHARE);
    const regionWorkers: Worker[] = [];
    // SES throttles per region, whatever the lane: slow both lanes of the region down.
    const throttleRegion = (ms: number) => Promise.all(regionWorkers.map((w) => w.rateLimit(ms)));
    for (const lane of SEND_LANES) {
      const worker = new Worker<SendEmailJob, SendOutcome>(
        queueNames.send(region, lane),
        (job, token) => processSendJob(deps, job, token, throttleRegion),
        {
          connection: deps.redis,
          prefix: queuePrefix(deps.config, queueNames.send(region, lane)),
          concurrency: deps.config.SEND_CONCURRENCY,
          limiter: limits[lane],
          // A job whose worker died (SIGKILL) goes back to the queue once its lock expires and
          // the stalled check runs; keep both short so recovery takes about a lease, not minutes.
          lockDuration: stalledAfterMs,
          stalledInterval: stalledAfterMs,
        },
      );
      worker.on('error', (err) => deps.log.error({ err, region, lane }, 'send worker error'));
      worker.on('failed', (job, err) => deps.log.error({ err, emailId: job?.data.emailId, region, lane }, 'send job failed'));
      regionWorkers.push(worker);
      workers.push(worker);
    }
    deps.log.info({ region, limits }, 'send workers started');
  }
  return {
    workers,
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

async function processSendJob(
  deps: WorkerDeps,
  job: Job<SendEmailJob, SendOutcome>,
  token: string | undefined,
  throttleRegion: (ms: number) => Promise<unknown>,
): Promise<SendOutcome> {
  const emailId = job.data.emailId;
  const timer = deps.metrics.jobDuration.startTimer({ queue: job.queueName });
  const outcome = await sendOneEmail(deps, emailId);
  timer({ outcome: outcome.result });
  if ('failure' in outcome) deps.metrics.sesErrors.inc({ name: outcome.failure.name });
  const log = deps.log;
  switch (outcome.result) {
    case 'sent':
      deps.metrics.emailsByStatus.inc({ status: 'SENT' });
      return outcome;
    case 'failed':
      deps.metrics.emailsByStatus.inc({ status: 'FAILED' });
      log.warn({ emailId, error: outcome.failure }, 'email failed');
      return outcome;
    case 'skipped':
      log.debug({ emailId, status: outcome.status }, 'nothing to send');
      return outcome;
    case 'throttled':
      log.warn({ emailId, error: outcome.failure.name }, 'SES throttled; pausing the region');
      deps.metrics.rateLimitWaits.inc({ queue: job.queueName, reason: 'ses-throttling' });
      await throttleRegion(deps.config.SES_THROTTLE_PAUSE_MS);
      // Back to the wait list without counting an attempt.
      throw Worker.RateLimitError();
    case 'retry':
    case 'later':
      if (outcome.result === 'retry') log.warn({ emailId, error: outcome.failure, delayMs: outcome.delayMs }, 'SES call failed; retrying');
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
  }
}
