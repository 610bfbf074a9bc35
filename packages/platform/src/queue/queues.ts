import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from '../redis/client';
import { withFairPriorities, type FairJob } from './fair-priority';

// Queue names and job payloads shared by the API (producer) and the worker (consumer).
// Sends are split per SES region (each region has its own rate) and per lane, so campaign
// traffic cannot starve transactional mail.
export type SendLane = 'transactional' | 'marketing';

export const queueNames = {
  send: (region: string, lane: SendLane) => `send-${lane}-${region}`,
  campaigns: 'campaigns',
  sesEvents: 'ses-events',
  webhooks: 'webhooks',
  domains: 'domains',
  maintenance: 'maintenance',
  contactImports: 'contact-imports',
  campaignPreparation: 'campaign-preparation',
} as const;

/**
 * A send job: one email (jobId = the email id), or a group of emails stored together and due now
 * (`emailIds`, jobId = sendGroupJobId of the first). BullMQ's scripts run once per job, so a group
 * costs Redis and the worker one job's moves instead of one per email. An email
 * has at most one live job of its own; the row names its group job (Email.sendJobId) so the
 * sweeper can tell a waiting group member from a lost one.
 */
export type SendEmailJob = { emailId: string } | { emailIds: string[] };

/** Emails per group job: enough to spread BullMQ's per-job cost, few enough to share out among replicas. */
export const SEND_GROUP_SIZE = 16;

/** A group job's id: BullMQ refuses ids with ':', and the prefix keeps it apart from every email id. */
export const sendGroupJobId = (firstEmailId: string) => `grp-${firstEmailId}`;

/** A send job for one email, for Queue.addBulk: id = the email id, delayed by `delayMs` when positive. */
export function singleSendJob(emailId: string, delayMs = 0): { name: 'send'; data: SendEmailJob; opts: { jobId: string; delay?: number } } {
  return { name: 'send', data: { emailId }, opts: { jobId: emailId, ...(delayMs > 0 ? { delay: Math.ceil(delayMs) } : {}) } };
}

/** The emails a send job carries, whichever its shape. */
export const sendJobEmailIds = (job: SendEmailJob): string[] => ('emailIds' in job ? job.emailIds : [job.emailId]);

/** One job per campaign whose recipients are to be prepared; jobId is campaignPreparationJobId. */
export interface CampaignPreparationJob {
  campaignId: string;
  teamId: number;
}

/** At most one preparation job per campaign while one is waiting, delayed or running. */
export const campaignPreparationJobId = (campaignId: string) => `prepare-${campaignId}`;

/** One job per CSV import; jobId is the import id. */
export interface ContactImportJob {
  importId: string;
}

export const defaultJobOptions: JobsOptions = {
  removeOnComplete: { age: 3600, count: 10000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

export interface QueueFactory {
  get(name: string): Queue;
  /** Adds the jobs with priorities that share the queue fairly among teams (fair-priority.ts). */
  addFairly<T>(name: string, jobs: FairJob<T>[], nowMs: number): Promise<void>;
  closeAll(): Promise<void>;
}

/** How queue keys are named: REDIS_PREFIX and whether each queue gets its own hash tag (Config.redisHashTags). */
export interface QueueKeyspace {
  REDIS_PREFIX: string;
  redisHashTags: boolean;
}

/**
 * The BullMQ prefix of one queue. BullMQ names its keys `<prefix>:<queue>:<suffix>` and its
 * scripts touch several of them at once, so on a Redis Cluster they must share a slot: with hash
 * tags the prefix is `<REDIS_PREFIX>:{<queue>}`, which puts all of one queue in one slot and
 * different queues in different slots (so they spread over the masters). Without, it is
 * REDIS_PREFIX alone, the key names of earlier releases (docs/redis.md).
 */
export function queuePrefix(keyspace: QueueKeyspace, queueName: string): string {
  return keyspace.redisHashTags ? `${keyspace.REDIS_PREFIX}:{${queueName}}` : keyspace.REDIS_PREFIX;
}

/**
 * Lazily created queues on one shared connection; every key carries the installation prefix.
 * `closeConnection`: the connection is the factory's own, disconnected by closeAll.
 */
export function createQueueFactory(
  connection: Redis,
  keys: QueueKeyspace | string,
  opts: { closeConnection?: boolean } = {},
): QueueFactory {
  // A bare prefix (tests, benchmarks on one Redis) means no hash tags.
  const keyspace = typeof keys === 'string' ? { REDIS_PREFIX: keys, redisHashTags: false } : keys;
  const queues = new Map<string, Queue>();
  const get = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, { connection, prefix: queuePrefix(keyspace, name), defaultJobOptions });
      queues.set(name, q);
    }
    return q;
  };
  return {
    get,
    addFairly: async (name, jobs, nowMs) => {
      const queue = get(name);
      await queue.addBulk(await withFairPriorities(connection, (window) => queue.toKey(`fair:${window}`), jobs, nowMs));
    },
    closeAll: async () => {
      await Promise.all([...queues.values()].map((q) => q.close()));
      queues.clear();
      if (opts.closeConnection) connection.disconnect();
    },
  };
}
