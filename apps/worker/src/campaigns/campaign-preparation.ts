import { Worker, type Job } from 'bullmq';
import { runJobInBudget } from '@mailrail/platform/budgets/budgeted-job';
import {
  campaignPreparationJobId,
  queueNames,
  queuePrefix,
  type CampaignPreparationJob,
  type QueueFactory,
} from '@mailrail/platform/queue/queues';
import { clearDeadJob } from '@mailrail/platform/queue/dead-jobs';
import type { WorkerDeps } from '../deps';
import {
  SegmentTooCostly,
  pauseUnpreparedCampaign,
  prepareRecipients,
  preparationSettings,
  type PreparationOutcome,
} from './prepare-recipients';

// The `campaign-preparation` queue: one job per campaign that has started without its recipients
// (job id prepare-<campaignId>, so the scan queues it once however often it looks). Preparing is
// the one step of a campaign whose cost follows the tenant's data (the book's size, the segment's
// filter), so it runs here, never in the periodic worker: its statements use the heavy pool, a
// team runs at most CAMPAIGN_PREPARATION_CONCURRENCY_PER_TEAM at once (across replicas), and a job
// whose team is at its limit steps back to delayed without using up an attempt.

export async function queueCampaignPreparation(queues: QueueFactory, job: CampaignPreparationJob, attempts: number): Promise<boolean> {
  const queue = queues.get(queueNames.campaignPreparation);
  const jobId = campaignPreparationJobId(job.campaignId);
  // A finished job left behind (Redis kept it) would block the id: free it unless it is live.
  if (!(await clearDeadJob(queue, jobId))) return false;
  await queue.add('prepare', job, {
    jobId,
    attempts,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: true,
  });
  return true;
}

export interface CampaignPreparationWorker {
  worker: Worker<CampaignPreparationJob>;
  close(): Promise<void>;
}

export function startCampaignPreparation(
  deps: Pick<WorkerDeps, 'redis' | 'config' | 'heavySql' | 'budgets' | 'clock' | 'log'>,
  hooks: { afterBatch?: (campaignId: string, cursor: string) => void | Promise<void> } = {},
): CampaignPreparationWorker {
  const settings = preparationSettings(deps.config);
  const prepare = async (job: Job<CampaignPreparationJob>, token?: string): Promise<PreparationOutcome | 'paused'> => {
    const { campaignId, teamId } = job.data;
    return runJobInBudget(deps.budgets, 'campaign-preparation', teamId, job, token, async () => {
      try {
        return await prepareRecipients({ sql: deps.heavySql }, campaignId, deps.clock.now(), settings, {
          afterBatch: (cursor) => hooks.afterBatch?.(campaignId, cursor),
        });
      } catch (err) {
        // The last try (or a filter no try can evaluate): the campaign is paused with the reason, so
        // no later scan runs it again.
        const tooCostly = err instanceof SegmentTooCostly;
        if (!tooCostly && job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw err;
        const reason = tooCostly
          ? `${err.message.slice(0, 300)}: edit the segment's filter, then resume the campaign`
          : `Its recipients could not be prepared after ${job.attemptsMade + 1} attempts (${(err as Error).message.slice(0, 300)}); simplify the segment's filter, then resume the campaign`;
        await pauseUnpreparedCampaign(deps.heavySql, campaignId, reason, deps.clock.now());
        deps.log.warn({ err, campaignId, teamId }, 'campaign preparation failed for good: campaign paused');
        return 'paused' as const;
      }
    });
  };
  const worker = new Worker<CampaignPreparationJob>(queueNames.campaignPreparation, prepare, {
    connection: deps.redis,
    prefix: queuePrefix(deps.config, queueNames.campaignPreparation),
    // Per process; the budget bounds all replicas together.
    concurrency: deps.config.CAMPAIGN_PREPARATION_CONCURRENCY,
  });
  worker.on('error', (err) => deps.log.error({ err }, 'campaign preparation worker error'));
  worker.on('failed', (job, err) => deps.log.warn({ err, campaignId: job?.data.campaignId }, 'campaign preparation attempt failed'));
  return { worker, close: () => worker.close() };
}
