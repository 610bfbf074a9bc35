import { createDnsLookup } from '@mailrail/domain/domains/dns-lookup';
import { createIdentityPort } from '@mailrail/domain/ses-identity/choose-adapter';
import type { Worker } from 'bullmq';
import { queueNames, queuePrefix } from '@mailrail/platform/queue/queues';
import { startCampaignEngine } from './campaigns/campaign-engine';
import { startCampaignPreparation } from './campaigns/campaign-preparation';
import { registerContactImports } from './contact-imports/register';
import type { WorkerDeps } from './deps';
import { registerDomainVerification } from './domains/domain-verification';
import { registerSesEventProcessing } from './ses-events/register';
import { emailEventWebhooks } from './webhooks/email-event-webhooks';
import { registerWebhookWorkers, type WebhookWorkers } from './webhooks/register';
import { periodicJobs, startPeriodicJobs, validatePeriodicJobs, type PeriodicJob, type PeriodicJobsRunner } from './periodic/periodic-jobs';
import { resolveRegionRates } from './send/rate-limits';
import { startSendWorkers, type SendWorkers } from './send/send-worker';

export interface RunningWorker {
  send: SendWorkers;
  periodic: PeriodicJobsRunner;
  sesEvents: Worker;
  webhooks: WebhookWorkers;
  ratesByRegion: Map<string, number>;
  /** Graceful stop: no new jobs, in-flight sends finish, then the periodic worker stops. */
  close(): Promise<void>;
}

/**
 * Starts every worker of the process: the send lanes of each SES region, the periodic jobs, SES
 * event processing, webhook delivery, domain verification and contact imports.
 */
export async function startWorker(
  deps: WorkerDeps,
  opts: { periodic?: PeriodicJob[]; redeclareEveryMs?: number } = {},
): Promise<RunningWorker> {
  const jobs = opts.periodic ?? periodicJobs(deps.config);
  // Fails before anything starts when a schedule is wrong.
  validatePeriodicJobs(jobs);
  const ratesByRegion = await resolveRegionRates(deps.config, deps.ses, deps.log);
  // Every job scheduler is the registry's, declared again now and then (keep-declared.ts); tests
  // shorten the period.
  const periodic = await startPeriodicJobs(deps, jobs, { redeclareEveryMs: opts.redeclareEveryMs });
  const send = startSendWorkers(deps, ratesByRegion);
  const connection = deps.redis;
  const sesEvents = registerSesEventProcessing({
    connection,
    prefix: queuePrefix(deps.config, queueNames.sesEvents),
    db: deps.db,
    log: deps.log,
    clock: deps.clock,
    onEmailEvent: emailEventWebhooks(deps.db, deps.clock),
  });
  const webhooks = registerWebhookWorkers(deps);
  const dns = createDnsLookup(deps.config.DNS_RESOLVER, deps.config.DNS_TIMEOUT_MS);
  const domains = await registerDomainVerification(
    {
      db: deps.db,
      sql: deps.sql,
      queues: deps.queues,
      identities: createIdentityPort(deps.config, { db: deps.db, dns }),
      dns,
      config: deps.config,
      log: deps.log,
      now: () => deps.clock.now(),
    },
    { connection, prefix: queuePrefix(deps.config, queueNames.domains) },
  );
  const campaigns = startCampaignEngine(deps);
  const campaignPreparation = startCampaignPreparation(deps);
  const contactImports = registerContactImports(deps);
  return {
    send,
    periodic,
    sesEvents,
    webhooks,
    ratesByRegion,
    close: async () => {
      // Every worker stops taking new work at once (BullMQ marks a worker closing synchronously)
      // and lets what is in flight finish. Closing the campaign windows first left the send
      // workers taking new jobs for as long as that took (seconds on a cluster); send jobs a
      // closing campaign window still enqueues wait in Redis for the next worker.
      await Promise.all([
        campaigns.close(),
        campaignPreparation.close(),
        send.close(),
        sesEvents.close(),
        webhooks.close(),
        domains.close(),
        contactImports.close(),
      ]);
      await periodic.close();
    },
  };
}
