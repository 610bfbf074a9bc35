import { domainJobNames, type VerifyDomainJob } from '@mailrail/domain/domains/verification-schedule';
import { queueNames, type QueueFactory } from '@mailrail/platform/queue/queues';
import { verifyDomain } from '@mailrail/domain/domains/verify-domain';
import { type Config } from '@mailrail/platform/config/schema';
import { type Db } from '@mailrail/platform/db/client';
import { type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { type DnsLookup } from '@mailrail/domain/domains/dns-lookup';
import { type IdentityPort } from '@mailrail/domain/ses-identity/port';
import { type Logger } from '@mailrail/platform/log/logger';
import { Worker, type ConnectionOptions, type Job } from 'bullmq';

export interface DomainVerificationDeps {
  db: Db;
  /** The node-postgres pool: the sweep goes through it, not through Prisma. */
  sql: SqlExecutor;
  queues: QueueFactory;
  identities: IdentityPort;
  dns: DnsLookup;
  config: Pick<Config, 'DOMAIN_CHECK_CRON' | 'DOMAIN_RECHECK_CRON'>;
  log: Logger;
  now?: () => Date;
}

const SWEEP_BATCH = 500;
// A sweep fired by the scheduler may start a hair before the tick a domain was scheduled for.
const SWEEP_SLACK_MS = 60_000;

/**
 * Finds domains whose next check is due and queues one verification job each. PostgreSQL's
 * nextCheckAt is the schedule; the queue only carries the work, so a lost job is found again.
 * The periodic job `domain-verification-sweep` runs it on DOMAIN_CHECK_CRON.
 */
export async function enqueueDueDomainChecks(deps: Pick<DomainVerificationDeps, 'sql' | 'queues' | 'now'>): Promise<number> {
  const now = deps.now?.() ?? new Date();
  // Through the SQL executor: a worker with no domain to check never builds the Prisma client.
  const due = await deps.sql.query<{ id: number }>(
    `SELECT id FROM "Domain" WHERE "nextCheckAt" <= $1 ORDER BY "nextCheckAt" LIMIT $2::int`,
    [new Date(now.getTime() + SWEEP_SLACK_MS), SWEEP_BATCH],
  );
  if (due.length === 0) return 0;
  await deps.queues.get(queueNames.domains).addBulk(
    due.map((d) => ({
      name: domainJobNames.verify,
      data: { domainId: d.id } satisfies VerifyDomainJob,
      opts: { deduplication: { id: `verify-${d.id}` }, attempts: 3, backoff: { type: 'exponential', delay: 5000 } },
    })),
  );
  return due.length;
}

/** The processor of the `domains` queue: one domain's check (or a sweep job left by an older version's scheduler). */
export async function processDomainJob(deps: DomainVerificationDeps, job: Pick<Job, 'name' | 'data'>): Promise<unknown> {
  switch (job.name) {
    case domainJobNames.verify: {
      const { domainId } = job.data as VerifyDomainJob;
      const domain = await verifyDomain(deps, domainId);
      if (!domain) return { domainId, skipped: 'domain no longer exists' };
      deps.log.info({ domainId, status: domain.status, errorMessage: domain.errorMessage }, 'domain checked');
      return { domainId, status: domain.status };
    }
    case domainJobNames.sweep:
      return { queued: await enqueueDueDomainChecks(deps) };
    default:
      throw new Error(`unknown domains job "${job.name}"`);
  }
}

/**
 * Starts the `domains` worker. The sweep that finds due domains is a periodic job of the registry
 * (periodic/periodic-jobs.ts); `close` stops the worker (the queues belong to the caller).
 */
export async function registerDomainVerification(
  deps: DomainVerificationDeps,
  opts: { connection: ConnectionOptions; prefix: string; concurrency?: number },
): Promise<{ worker: Worker; close: () => Promise<void> }> {
  const worker = new Worker(queueNames.domains, (job) => processDomainJob(deps, job), {
    connection: opts.connection,
    prefix: opts.prefix,
    concurrency: opts.concurrency ?? 2,
  });
  worker.on('failed', (job, err) => deps.log.warn({ err, jobName: job?.name, data: job?.data }, 'domains job failed'));
  return { worker, close: () => worker.close() };
}
