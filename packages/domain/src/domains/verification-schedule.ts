import { CronExpressionParser } from 'cron-parser';
import type { Config } from '@mailrail/platform/config/schema';
import { queueNames, type QueueFactory } from '@mailrail/platform/queue/queues';

export const domainJobNames = { verify: 'verify-domain', sweep: 'sweep-domains' } as const;

export interface VerifyDomainJob {
  domainId: number;
}

export type ScheduleConfig = Pick<Config, 'DOMAIN_CHECK_CRON' | 'DOMAIN_RECHECK_CRON'>;

export function nextCronTime(expr: string, after: Date): Date {
  return CronExpressionParser.parse(expr, { currentDate: after, tz: 'UTC' }).next().toDate();
}

/**
 * How long DNS may take to show a new domain's records (resolvers cache a missing name for up to
 * its zone's negative TTL, a changed one for its TTL; SES itself keeps trying for 72 hours). Until
 * then a check that does not find the records (or finds old ones) keeps the domain PENDING.
 */
export const DNS_PROPAGATION_HOURS = 72;

/** When a domain created at `createdAt` that never verified may be called FAILED for its records. */
export function propagationEndsAt(createdAt: Date): Date {
  return new Date(createdAt.getTime() + DNS_PROPAGATION_HOURS * 3_600_000);
}

/** Domains not verified yet are looked at every few hours; verified ones rarely. */
export function nextDomainCheckAt(config: ScheduleConfig, verified: boolean, now: Date): Date {
  return nextCronTime(verified ? config.DOMAIN_RECHECK_CRON : config.DOMAIN_CHECK_CRON, now);
}

/**
 * Asks the worker to check one domain now. At most one such job waits per domain (BullMQ
 * deduplication), so repeated PUT /verify calls cannot pile up DNS and SES calls.
 */
export async function enqueueDomainVerification(queues: QueueFactory, domainId: number): Promise<void> {
  const job: VerifyDomainJob = { domainId };
  await queues.get(queueNames.domains).add(domainJobNames.verify, job, {
    deduplication: { id: `verify-${domainId}` },
    attempts: 3,
    backoff: { type: 'exponential', delay: 5000 },
  });
}
