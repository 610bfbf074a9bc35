import { Worker, type Queue } from 'bullmq';
import { CronExpressionParser } from 'cron-parser';
import { queueNames, queuePrefix, type QueueFactory } from '@mailrail/platform/queue/queues';
import { type Config } from '@mailrail/platform/config/schema';
import { type Logger } from '@mailrail/platform/log/logger';
import { type Redis } from '@mailrail/platform/redis/client';
import { foldCounterDeltas } from '@mailrail/domain/ses-events/counter-deltas';
import { purgeExpiredIdempotencyRecords } from '@mailrail/domain/emails/idempotency';
import { scanCampaigns } from '../campaigns/scan-campaigns';
import { automationTick } from '../automations/automation-tick';
import { sweepContactImports } from '../contact-imports/sweep-imports';
import type { WorkerDeps } from '../deps';
import { enqueueDueDomainChecks } from '../domains/domain-verification';
import { emailPartitionSettings, maintainEmailPartitions } from '@mailrail/domain/email-log/email-partitions';
import { pruneEvents } from '@mailrail/domain/events/prune-events';
import { maintainRequestLogPartitions, requestLogPartitionSettings } from '@mailrail/domain/request-log/request-log-partitions';
import { sweepUnsentEmails } from '../send/sweep-unsent-emails';
import { pruneSesNotifications } from '../ses-events/prune-notifications';
import { pruneWebhookEvents } from '../webhooks/prune-events';
import { dispatchWebhookOutbox, webhookMaxAttempts, type WebhookWorkerDeps } from '../webhooks/register';
import { requeueStalledDeliveries } from '../webhooks/requeue-stalled';
import { evaluateReputationAlerts } from '../reputation/reputation-alerts';
import { keepDeclared, REDECLARE_EVERY_MS } from './keep-declared';
import { replaceStuckWorker } from './replace-stuck-worker';

// The one registry of periodic jobs. A capability that needs one adds an entry here; start-up
// validates every schedule and declares it as a BullMQ job scheduler on the maintenance queue,
// so each tick runs once across all replicas (never a timer per process). Every handler must
// tolerate a run that overlaps one on another replica: each is a conditional statement or skips
// locked rows. No handler may do work whose size a tenant decides (a segment, a book, a backlog of
// one team's events): this worker runs one job at a time, so such work goes to a queue of its own
// (campaign-preparation) or is cut to PERIODIC_MAX_BATCHES_PER_RUN batches per run.

export interface PeriodicJob<D = WorkerDeps> {
  name: string;
  /** Cron expression, 5 fields or 6 with seconds, in UTC. Exactly one of cron and everyMs. */
  cron?: string;
  /** Fixed interval in milliseconds. */
  everyMs?: number;
  run(deps: D): Promise<unknown>;
}

export function periodicJobs(config: Config): PeriodicJob[] {
  return [
    // Also recovers emails whose worker died mid-send (expired lease).
    { name: 'sweep-unsent-emails', cron: config.SEND_SWEEP_CRON, run: (deps) => sweepUnsentEmails(deps) },
    { name: 'prune-ses-notifications', cron: '23 * * * *', run: (deps) => pruneSesNotifications(deps) },
    {
      name: 'purge-idempotency-records',
      cron: '41 * * * *',
      run: async (deps) => ({ purged: await purgeExpiredIdempotencyRecords(deps.sql, deps.clock.now()) }),
    },
    // The SES events' counter deltas, added to the counters in batches (counter-deltas.ts).
    {
      name: 'fold-counter-deltas',
      everyMs: config.COUNTER_FOLD_EVERY_MS,
      run: (deps) => foldCounterDeltas(deps.sql, deps.config.COUNTER_FOLD_BATCH_SIZE, deps.config.PERIODIC_MAX_BATCHES_PER_RUN),
    },
    { name: 'campaign-scan', everyMs: config.CAMPAIGN_SCAN_INTERVAL_MS, run: (deps) => scanCampaigns(deps) },
    {
      name: 'domain-verification-sweep',
      cron: config.DOMAIN_CHECK_CRON,
      run: async (deps) => ({ queued: await enqueueDueDomainChecks({ sql: deps.sql, queues: deps.queues, now: () => deps.clock.now() }) }),
    },
    { name: 'contact-import-sweep', cron: '*/5 * * * *', run: (deps) => sweepContactImports(deps) },
    // An interval, not a cron: the first run comes as the scheduler is declared (partitions ahead
    // right after the migration), then hourly: creates days ahead, clears bodies, drops old days.
    {
      name: 'email-partitions',
      everyMs: 3_600_000,
      run: (deps) => maintainEmailPartitions(deps.sql, emailPartitionSettings(deps.config), deps.clock.now()),
    },
    // Windowed bounce and complaint rates against SES's marks; alerts once per crossing.
    {
      name: 'reputation-alerts',
      cron: '*/5 * * * *',
      run: (deps) =>
        evaluateReputationAlerts({
          ...deps,
          mailAdmins: deps.systemMail,
          minSent: deps.config.REPUTATION_ALERT_MIN_SENT,
          publicUrl: deps.config.PUBLIC_URL,
        }),
    },
    // Like the email log's: days ahead, whole days dropped past REQUEST_LOG_RETENTION_DAYS.
    {
      name: 'request-log-partitions',
      everyMs: 3_600_000,
      run: (deps) => maintainRequestLogPartitions(deps.sql, requestLogPartitionSettings(deps.config), deps.clock.now()),
    },
    // Custom events past EVENT_RETENTION_DAYS, and their keys (docs/custom-events.md).
    {
      name: 'event-prune',
      everyMs: 3_600_000,
      run: (deps) => pruneEvents(deps.sql, deps.config.EVENT_RETENTION_DAYS, deps.clock.now(), deps.config.PERIODIC_MAX_BATCHES_PER_RUN),
    },
    // Automations: enrollment from new events, then due steps, per-team budgets (docs/automations.md).
    {
      name: 'automation-tick',
      everyMs: config.AUTOMATION_TICK_MS,
      run: (deps) =>
        automationTick(deps, {
          perTeam: deps.config.AUTOMATION_TEAM_BUDGET,
          total: deps.config.AUTOMATION_TICK_BUDGET,
          enrollBatch: deps.config.AUTOMATION_ENROLL_BATCH,
          concurrency: deps.config.AUTOMATION_STEP_CONCURRENCY,
          batch: deps.config.AUTOMATION_STEP_BATCH,
          // Steps stop at four fifths of the interval: with enrollment, the tick ends before the next is due.
          maxMs: Math.floor(deps.config.AUTOMATION_TICK_MS * 0.8),
        }),
    },
    ...webhookPeriodicJobs(config),
  ];
}

/** The webhook entries of the registry (apart so the webhook tests can run them without the rest). */
export function webhookPeriodicJobs(config: Config): PeriodicJob<WebhookWorkerDeps>[] {
  return [
    {
      name: 'webhook-dispatch',
      everyMs: config.WEBHOOK_DISPATCH_EVERY_MS,
      run: async (deps) => ({ events: await dispatchWebhookOutbox(deps, deps.config.PERIODIC_MAX_BATCHES_PER_RUN) }),
    },
    {
      name: 'webhook-requeue-stalled',
      everyMs: config.WEBHOOK_REQUEUE_EVERY_MS,
      run: async (deps) => ({
        requeued: await requeueStalledDeliveries(
          deps.sql,
          deps.queues.get(queueNames.webhooks),
          webhookMaxAttempts(deps.config),
          deps.clock.now(),
          deps.config,
        ),
      }),
    },
    {
      name: 'webhook-prune-events',
      everyMs: config.WEBHOOK_PRUNE_EVERY_MS,
      run: async (deps) => ({ deleted: await pruneWebhookEvents(deps.sql, deps.config.WEBHOOK_RETENTION_DAYS, deps.clock.now()) }),
    },
  ];
}

export class PeriodicJobError extends Error {}

/** Throws one error naming every job with an invalid schedule or a duplicate name. */
export function validatePeriodicJobs(jobs: PeriodicJob<never>[]): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const job of jobs) {
    if (seen.has(job.name)) problems.push(`${job.name}: declared twice`);
    seen.add(job.name);
    if (job.everyMs !== undefined) {
      if (job.cron !== undefined) problems.push(`${job.name}: give cron or everyMs, not both`);
      else if (!Number.isInteger(job.everyMs) || job.everyMs <= 0)
        problems.push(`${job.name}: invalid everyMs ${job.everyMs}: expected a positive integer`);
      continue;
    }
    const cron = job.cron ?? '';
    // cron-parser fills in missing fields ("" and "* * * *" parse as every minute): refuse those.
    const fields = cron.trim().split(/\s+/).filter(Boolean).length;
    if (!cron.trim().startsWith('@') && (fields < 5 || fields > 6)) {
      problems.push(`${job.name}: invalid cron "${cron}": expected 5 fields, or 6 with seconds`);
      continue;
    }
    try {
      CronExpressionParser.parse(cron, { tz: 'UTC' });
    } catch (err) {
      problems.push(`${job.name}: invalid cron "${cron}": ${(err as Error).message}`);
    }
  }
  if (problems.length) throw new PeriodicJobError(`Invalid periodic jobs:\n  ${problems.join('\n  ')}`);
}

/** What the runner itself needs; each job's handler gets the whole `deps`. */
export interface PeriodicRunnerDeps {
  config: Pick<Config, 'REDIS_PREFIX' | 'redisHashTags'>;
  redis: Redis;
  queues: QueueFactory;
  log: Logger;
}

export interface PeriodicJobsRunner {
  queue: Queue;
  /** How many times a stuck worker was replaced (replace-stuck-worker.ts). */
  replacements(): number;
  close(): Promise<void>;
}

/** A maintenance job due this long, untaken by a worker with room for it, gets that worker replaced. */
export const PERIODIC_WORKER_STUCK_AFTER_MS = 30_000;

// Queues that carried job schedulers before the registry held them all; an upgraded Redis still
// has those schedulers, which would keep adding jobs nobody asked for.
const QUEUES_WITH_RETIRED_SCHEDULERS = [queueNames.campaigns, queueNames.domains];

export async function startPeriodicJobs<D extends PeriodicRunnerDeps>(
  deps: D,
  jobs: PeriodicJob<D>[],
  opts: {
    redeclareEveryMs?: number;
    stuckAfterMs?: number;
    /** The clock the stuck-worker watch measures its waits on (tests move their own). */
    now?: () => number;
  } = {},
): Promise<PeriodicJobsRunner> {
  validatePeriodicJobs(jobs);
  const queue = deps.queues.get(queueNames.maintenance);
  const byName = new Map(jobs.map((j) => [j.name, j]));
  // Each job on its own: a Redis that lost a scheduler's key but kept its next job refuses that
  // scheduler ("job ID already exists") until the job's time, and must not hold back the others
  // (the campaign scan among them). That job still runs at its time; the scheduler comes back after.
  const declare = async () => {
    const refused: { job: string; err: unknown }[] = [];
    for (const job of jobs) {
      try {
        await queue.upsertJobScheduler(job.name, job.everyMs !== undefined ? { every: job.everyMs } : { pattern: job.cron, tz: 'UTC' }, {
          name: job.name,
          data: {},
          opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
        });
      } catch (err) {
        refused.push({ job: job.name, err });
      }
    }
    // None declared: Redis itself is the problem, as the caller should know.
    if (refused.length === jobs.length && refused.length > 0) throw refused[0].err;
    for (const { job, err } of refused) deps.log.warn({ err, job }, 'could not declare this periodic job again; declared the others');
  };
  // Declared now and every REDECLARE_EVERY_MS, so a Redis that lost its data gets them back.
  const stopDeclaring = await keepDeclared('periodic jobs', declare, opts.redeclareEveryMs ?? REDECLARE_EVERY_MS, deps.log);
  // Schedulers of jobs that left the registry would otherwise fire forever.
  for (const s of await queue.getJobSchedulers()) {
    if (s.key && !byName.has(s.key)) await queue.removeJobScheduler(s.key);
  }
  for (const name of QUEUES_WITH_RETIRED_SCHEDULERS) {
    const other = deps.queues.get(name);
    for (const s of await other.getJobSchedulers()) if (s.key) await other.removeJobScheduler(s.key);
  }
  // One job at a time per process, as before the registry held them all: running the scan, the
  // sweeper and the rest side by side measurably slowed the send path they share PostgreSQL with
  // (campaign-crash.test.ts). With several replicas, the others take the ticks meanwhile.
  // The sweeper, which recovers every lost send job, runs here: a worker that went quiet after a
  // failover would stop it in every replica at once, so a stuck one is replaced.
  const makeWorker = () => {
    const worker = new Worker(
      queueNames.maintenance,
      async (job) => {
        const periodic = byName.get(job.name);
        if (!periodic) return { skipped: 'unknown periodic job' };
        return periodic.run(deps);
      },
      { connection: deps.redis, prefix: queuePrefix(deps.config, queueNames.maintenance), concurrency: 1 },
    );
    worker.on('error', (err) => deps.log.error({ err }, 'periodic worker error'));
    worker.on('failed', (job, err) => deps.log.error({ err, job: job?.name }, 'periodic job failed'));
    return worker;
  };
  const stuckAfterMs = opts.stuckAfterMs ?? PERIODIC_WORKER_STUCK_AFTER_MS;
  const watched = replaceStuckWorker(makeWorker, queue, {
    stuckAfterMs,
    checkEveryMs: Math.max(100, stuckAfterMs / 6),
    log: deps.log,
    now: opts.now,
  });
  deps.log.info({ jobs: jobs.map((j) => ({ name: j.name, cron: j.cron, everyMs: j.everyMs })) }, 'periodic jobs registered');
  return {
    queue,
    replacements: watched.replacements,
    close: async () => {
      stopDeclaring();
      await watched.close();
    },
  };
}
