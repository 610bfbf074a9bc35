import { Worker, type Job } from 'bullmq';
import { queueNames, queuePrefix, type ContactImportJob } from '@mailrail/platform/queue/queues';
import type { WorkerDeps } from '../deps';
import { finishImport, runContactImport, type ContactImportPorts } from './run-contact-import';

/**
 * The `contact-imports` worker: one import at a time per process (an import streams its file and
 * keeps one batch in memory, so a replica's memory stays bounded; more replicas run more imports).
 * A job that fails is retried (attempts and backoff set by the API when it queues the job) and
 * resumes from the import's checkpoint; after the last attempt the import is marked FAILED.
 */
export function registerContactImports(deps: WorkerDeps, ports: Partial<ContactImportPorts> = {}): { close: () => Promise<void> } {
  const importPorts: ContactImportPorts = { sql: deps.sql, clock: deps.clock, batchSize: deps.config.CONTACT_IMPORT_BATCH_SIZE, ...ports };
  const worker = new Worker<ContactImportJob>(queueNames.contactImports, (job) => runContactImport(importPorts, job.data.importId), {
    connection: deps.redis,
    // The queue's own {hash tag} on a cluster, as the API's Queue writes it (queuePrefix).
    prefix: queuePrefix(deps.config, queueNames.contactImports),
    concurrency: 1,
  });
  worker.on('failed', (job: Job<ContactImportJob> | undefined, err) => {
    deps.log.warn({ err, importId: job?.data.importId, attempt: job?.attemptsMade }, 'contact import attempt failed');
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const reason = `The import stopped after ${job.attemptsMade} attempts: ${err.message.slice(0, 500)}`;
    finishImport(deps.sql, job.data.importId, deps.clock.now(), reason).catch((e: unknown) =>
      deps.log.error({ err: e, importId: job.data.importId }, 'could not mark the contact import failed'),
    );
  });
  return { close: () => worker.close() };
}
