import { Worker, type Job } from 'bullmq';
import { runJobInBudget, stepBack } from '@mailrail/platform/budgets/budgeted-job';
import { queueNames, queuePrefix, type ContactImportJob } from '@mailrail/platform/queue/queues';
import type { WorkerDeps } from '../deps';
import { finishImport, ImportYield, runContactImport, type ContactImportPorts } from './run-contact-import';

/**
 * The `contact-imports` worker. Fair across teams without BullMQ Pro's groups:
 *  - a team runs at most CONTACT_IMPORT_CONCURRENCY_PER_TEAM imports at once, all replicas together
 *    (the 'contact-import' budget); a job of a team at its limit goes back to delayed, without using
 *    an attempt, and the worker's slot goes at once to the next job, another team's;
 *  - an import that has committed CONTACT_IMPORT_YIELD_EVERY_BATCHES batches in this run while
 *    another import waits steps back behind it (delayed by 0: to the end of the line) and resumes
 *    from its checkpoint later, so a 2-row import never waits for a 1M-row one to finish. Alone, it
 *    runs on: the rule is work-conserving.
 * Each import streams its file and keeps one batch in memory, so a process runs at most
 * CONTACT_IMPORT_CONCURRENCY at once. A job that fails is retried (attempts and backoff set by the
 * API when it queues the job) and resumes from the import's checkpoint; after the last attempt the
 * import is marked FAILED.
 */
export function registerContactImports(
  deps: Pick<WorkerDeps, 'sql' | 'clock' | 'config' | 'redis' | 'log' | 'budgets' | 'queues'>,
  ports: Partial<ContactImportPorts> = {},
): { worker: Worker<ContactImportJob>; close: () => Promise<void> } {
  const queue = deps.queues.get(queueNames.contactImports);
  const yieldEvery = deps.config.CONTACT_IMPORT_YIELD_EVERY_BATCHES;
  const importPorts: ContactImportPorts = {
    sql: deps.sql,
    clock: deps.clock,
    batchSize: deps.config.CONTACT_IMPORT_BATCH_SIZE,
    shouldYield: async (batches) => batches % yieldEvery === 0 && (await queue.getWaitingCount()) > 0,
    ...ports,
  };
  const teamOf = async (importId: string): Promise<number | null> => {
    const [row] = await deps.sql.query<{ teamId: number }>(
      `SELECT b."teamId" FROM "ContactImport" i JOIN "ContactBook" b ON b.id = i."contactBookId" WHERE i.id = $1`,
      [importId],
    );
    return row?.teamId ?? null;
  };

  const worker = new Worker<ContactImportJob>(
    queueNames.contactImports,
    async (job, token) => {
      const teamId = await teamOf(job.data.importId);
      if (teamId === null) return null; // the import (or its book) was deleted
      return runJobInBudget(deps.budgets, 'contact-import', teamId, job, token, async () => {
        try {
          return await runContactImport(importPorts, job.data.importId);
        } catch (err) {
          if (err instanceof ImportYield) return stepBack(job, token, 0);
          throw err;
        }
      });
    },
    {
      connection: deps.redis,
      // The queue's own {hash tag} on a cluster, as the API's Queue writes it (queuePrefix).
      prefix: queuePrefix(deps.config, queueNames.contactImports),
      concurrency: deps.config.CONTACT_IMPORT_CONCURRENCY,
    },
  );
  worker.on('failed', (job: Job<ContactImportJob> | undefined, err) => {
    deps.log.warn({ err, importId: job?.data.importId, attempt: job?.attemptsMade }, 'contact import attempt failed');
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const reason = `The import stopped after ${job.attemptsMade} attempts: ${err.message.slice(0, 500)}`;
    finishImport(deps.sql, job.data.importId, deps.clock.now(), reason).catch((e: unknown) =>
      deps.log.error({ err: e, importId: job.data.importId }, 'could not mark the contact import failed'),
    );
  });
  return { worker, close: () => worker.close() };
}
