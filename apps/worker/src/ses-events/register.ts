import { Worker, type ConnectionOptions } from 'bullmq';
import {
  processSesEventJob,
  type ProcessSesEventDeps,
  type SesEventJob,
  type SesEventOutcome,
} from '@mailrail/domain/ses-events/process-ses-event';
import { queueNames } from '@mailrail/platform/queue/queues';

export interface SesEventProcessingOptions extends ProcessSesEventDeps {
  /** A connection made with maxRetriesPerRequest: null (createRedis(url, { forWorker: true })). */
  connection: ConnectionOptions;
  prefix: string;
  /** Jobs in flight; each is one short transaction. */
  concurrency?: number;
}

/**
 * Consumes `queueNames.sesEvents`: one job per SNS notification, applied by processSesEventJob.
 * An event for an email not known yet throws and is retried with backoff (sesEventJobOptions);
 * on the last attempt it is recorded as unmatched instead.
 */
export function registerSesEventProcessing(opts: SesEventProcessingOptions): Worker<SesEventJob, SesEventOutcome> {
  const { connection, prefix, concurrency = 20, ...deps } = opts;
  const worker = new Worker<SesEventJob, SesEventOutcome>(
    queueNames.sesEvents,
    (job) => processSesEventJob(deps, job.data, { lastAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) }),
    { connection, prefix, concurrency },
  );
  worker.on('failed', (job, err) => {
    deps.log?.warn({ err, jobId: job?.id, attemptsMade: job?.attemptsMade }, 'SES event job failed');
  });
  worker.on('error', (err) => deps.log?.error({ err }, 'SES event worker error'));
  return worker;
}
