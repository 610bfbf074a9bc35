import { Worker } from 'bullmq';
import { queueNames } from '@mailrail/core';
import type { WorkerDeps } from '../deps';
import { keepDeclared, REDECLARE_EVERY_MS } from '../periodic/keep-declared';
import { runCampaignWindow } from './run-campaign-window';
import { scanCampaigns } from './scan-campaigns';

// The campaign queue carries two kinds of jobs: `scan` (a job scheduler, one run per interval
// across all replicas) and `window` (one per campaign at a time, job id window-<campaignId>).
// The work of a campaign is a handful of jobs, never one per email: emails get their own send
// jobs on the marketing lane.

export interface CampaignEngine {
  worker: Worker;
  close(): Promise<void>;
}

const SCAN_SCHEDULER = 'campaign-scan';

export async function startCampaignEngine(deps: WorkerDeps, opts: { redeclareEveryMs?: number } = {}): Promise<CampaignEngine> {
  const queue = deps.queues.get(queueNames.campaigns);
  const declareScan = () =>
    queue.upsertJobScheduler(
      SCAN_SCHEDULER,
      { every: deps.config.CAMPAIGN_SCAN_INTERVAL_MS },
      { name: 'scan', data: {}, opts: { removeOnComplete: { count: 50 }, removeOnFail: { count: 50 } } },
    );
  const stopDeclaring = await keepDeclared('campaign scan', declareScan, opts.redeclareEveryMs ?? REDECLARE_EVERY_MS, deps.log);
  const worker = new Worker(
    queueNames.campaigns,
    async (job) => {
      if (job.name === 'scan') return scanCampaigns(deps);
      if (job.name === 'window') return runCampaignWindow(deps, (job.data as { campaignId: string }).campaignId);
      return { skipped: `unknown job ${job.name}` };
    },
    {
      connection: deps.redis,
      prefix: deps.config.REDIS_PREFIX,
      concurrency: 4,
      // A window whose worker was killed is taken over after about 5 s, not the default 30 s.
      lockDuration: 5_000,
      stalledInterval: 5_000,
    },
  );
  worker.on('error', (err) => deps.log.error({ err }, 'campaign worker error'));
  worker.on('failed', (job, err) => deps.log.error({ err, job: job?.name, data: job?.data }, 'campaign job failed'));
  return {
    worker,
    close: () => {
      stopDeclaring();
      return worker.close();
    },
  };
}
