import { queueNames, type ContactImportJob } from '@mailrail/platform/queue/queues';
import type { WorkerDeps } from '../deps';

/** An upload that has not completed in this long was abandoned (its API process died). */
const ABANDONED_UPLOAD_MS = 6 * 3600_000;

/**
 * PostgreSQL is the truth, Redis only carries the work: every unfinished import gets its job
 * again (a no-op while the job exists, since the job id is the import id), and uploads abandoned
 * mid-way are deleted with their chunks.
 */
export async function sweepContactImports(deps: Pick<WorkerDeps, 'sql' | 'queues' | 'config' | 'clock'>) {
  const open = await deps.sql.query<{ id: string }>(`SELECT id FROM "ContactImport" WHERE status IN ('QUEUED', 'RUNNING') LIMIT 1000`);
  if (open.length) {
    await deps.queues.get(queueNames.contactImports).addBulk(
      open.map(({ id }) => ({
        name: 'import',
        data: { importId: id } satisfies ContactImportJob,
        opts: { jobId: id, attempts: deps.config.CONTACT_IMPORT_ATTEMPTS, backoff: { type: 'exponential', delay: 2000 } },
      })),
    );
  }
  const abandoned = await deps.sql.execute(`DELETE FROM "ContactImport" WHERE status = 'UPLOADING' AND "createdAt" < $1`, [
    new Date(deps.clock.now().getTime() - ABANDONED_UPLOAD_MS),
  ]);
  return { requeued: open.length, abandoned };
}
