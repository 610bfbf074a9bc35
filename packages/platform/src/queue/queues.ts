import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';

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
} as const;

/** One job per email; jobId is the email id, so an email has at most one live job. */
export interface SendEmailJob {
  emailId: string;
}

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
  closeAll(): Promise<void>;
}

/**
 * Lazily created queues on one shared connection; every key carries the installation prefix.
 * `closeConnection`: the connection is the factory's own, disconnected by closeAll.
 */
export function createQueueFactory(connection: ConnectionOptions, prefix: string, opts: { closeConnection?: boolean } = {}): QueueFactory {
  const queues = new Map<string, Queue>();
  const get = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, { connection, prefix, defaultJobOptions });
      queues.set(name, q);
    }
    return q;
  };
  return {
    get,
    closeAll: async () => {
      await Promise.all([...queues.values()].map((q) => q.close()));
      queues.clear();
      if (opts.closeConnection) (connection as { disconnect(): void }).disconnect();
    },
  };
}
