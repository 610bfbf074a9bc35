import { Worker } from 'bullmq';
import { queueNames, queuePrefix } from '@mailrail/platform/queue/queues';
import type { WorkerDeps } from '../deps';
import { runCampaignWindow } from './run-campaign-window';

// The campaign queue carries `window` jobs (one per campaign at a time, job id
// window-<campaignId>); the scan that queues them is the periodic job `campaign-scan`
// (periodic/periodic-jobs.ts), one run per CAMPAIGN_SCAN_INTERVAL_MS across all replicas.
// The work of a campaign is a handful of jobs, never one per email: emails get their own send
// jobs on the marketing lane.

export interface CampaignEngine {
  worker: Worker;
  close(): Promise<void>;
}

export function startCampaignEngine(deps: WorkerDeps): CampaignEngine {
  const worker = new Worker(
    queueNames.campaigns,
    async (job) => {
      if (job.name === 'window') return runCampaignWindow(deps, (job.data as { campaignId: string }).campaignId);
      return { skipped: `unknown job ${job.name}` };
    },
    {
      connection: deps.redis,
      prefix: queuePrefix(deps.config, queueNames.campaigns),
      concurrency: 4,
      // A window whose worker was killed is taken over after about 5 s, not the default 30 s.
      lockDuration: 5_000,
      stalledInterval: 5_000,
    },
  );
  worker.on('error', (err) => deps.log.error({ err }, 'campaign worker error'));
  worker.on('failed', (job, err) => deps.log.error({ err, job: job?.name, data: job?.data }, 'campaign job failed'));
  return { worker, close: () => worker.close() };
}
