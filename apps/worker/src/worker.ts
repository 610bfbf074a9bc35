import { startCampaignEngine } from './campaigns/campaign-engine';
import type { WorkerDeps } from './deps';
import { periodicJobs, startPeriodicJobs, validatePeriodicJobs, type PeriodicJob, type PeriodicJobsRunner } from './periodic/periodic-jobs';
import { resolveRegionRates } from './send/rate-limits';
import { startSendWorkers, type SendWorkers } from './send/send-worker';

export interface RunningWorker {
  send: SendWorkers;
  periodic: PeriodicJobsRunner;
  ratesByRegion: Map<string, number>;
  /** Graceful stop: no new jobs, in-flight sends finish, then the periodic worker stops. */
  close(): Promise<void>;
}

/** Starts every worker of the process: the send lanes of each SES region and the periodic jobs. */
export async function startWorker(deps: WorkerDeps, opts: { periodic?: PeriodicJob[]; redeclarePeriodicEveryMs?: number } = {}): Promise<RunningWorker> {
  const jobs = opts.periodic ?? periodicJobs(deps.config);
  // Fails before anything starts when a cron expression is wrong.
  validatePeriodicJobs(jobs);
  const ratesByRegion = await resolveRegionRates(deps.config, deps.ses, deps.log);
  const periodic = await startPeriodicJobs(deps, jobs, { redeclareEveryMs: opts.redeclarePeriodicEveryMs });
  const send = startSendWorkers(deps, ratesByRegion);
  const campaigns = await startCampaignEngine(deps);
  return {
    send,
    periodic,
    ratesByRegion,
    close: async () => {
      await campaigns.close();
      await send.close();
      await periodic.close();
    },
  };
}
