import type { WorkerDeps } from '../deps';

// Every SNS message id that reached us is kept in "SesNotification" so that SNS redeliveries are
// counted once. SNS redelivers within hours, never weeks: older rows only grow the table.

const BATCH = 10_000;

/** Deletes dedupe rows older than SES_NOTIFICATION_RETENTION_DAYS, in short batches. */
export async function pruneSesNotifications(deps: Pick<WorkerDeps, 'sql' | 'config'>): Promise<{ deleted: number }> {
  let deleted = 0;
  for (;;) {
    // now() as in the INSERT of process-ses-event.ts, so both sides use the same clock.
    const rowCount = await deps.sql.execute(
      `DELETE FROM "SesNotification" WHERE "messageId" IN (
         SELECT "messageId" FROM "SesNotification"
          WHERE "receivedAt" < now() - ($1::int * interval '1 day')
          LIMIT ${BATCH})`,
      [deps.config.SES_NOTIFICATION_RETENTION_DAYS],
    );
    deleted += rowCount;
    if (rowCount < BATCH) return { deleted };
  }
}
