import { recordSesAcceptances } from '@mailrail/domain/sql/ses-acceptance';
import { createBatcher, type BatchWindow } from '@mailrail/platform/batching/batcher';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

// Group commit of SES acceptances (createBatcher). One statement per email was a third of the
// worker's database work per email. The committer records the acceptances of all the sends that
// finish within a few milliseconds with one statement (recordSesAcceptances: the same guard and
// the same SENT event per email). Each caller still waits for its own email's write, so a job ends
// only once its acceptance is in the database: the exactly-once and in-doubt guarantees are those
// of the single-row statement, delayed by at most the window.

export interface AcceptanceRecorder {
  /** Resolves once the acceptance is committed: true when this write recorded it (not the Send event). */
  record(emailId: string, messageId: string): Promise<boolean>;
  /** Writes what is collected now and waits for every write in progress. */
  flush(): Promise<void>;
}

export type AcceptanceCommitterSettings = BatchWindow;

export function createAcceptanceCommitter(sql: SqlExecutor, settings: AcceptanceCommitterSettings): AcceptanceRecorder {
  const group = createBatcher<{ emailId: string; messageId: string }, boolean>(
    async (accepted) => {
      const recorded = await recordSesAcceptances(sql, accepted);
      return accepted.map((a) => recorded.has(a.emailId));
    },
    // The same email twice in one group (never in practice: one job per email) would make the
    // UPDATE ... FROM ambiguous; it goes into the next group.
    { schedule: { windowMs: settings.windowMs }, maxBatch: settings.maxBatch, distinctKey: (a) => a.emailId },
  );
  return {
    // A failed group fails each of its acceptances: every caller retries its own email
    // (retryDatabaseWrite), which joins a later group.
    record: (emailId, messageId) => group.submit({ emailId, messageId }),
    flush: () => group.flush(),
  };
}
