import { recordSesAcceptances } from '@mailrail/domain/sql/ses-acceptance';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

// Group commit of SES acceptances. One statement per email was a third of the worker's database
// work per email (a pool checkout, a round trip, a commit of its own). The committer collects the
// acceptances of all the sends that finish within a few milliseconds and records them with one
// statement (recordSesAcceptances: the same guard and the same SENT event per email). Each caller
// still waits for its own email's write, so a job ends only once its acceptance is in the
// database: the exactly-once and in-doubt guarantees are those of the single-row statement,
// delayed by at most the window.

export interface AcceptanceRecorder {
  /** Resolves once the acceptance is committed: true when this write recorded it (not the Send event). */
  record(emailId: string, messageId: string): Promise<boolean>;
  /** Writes what is collected now and waits for every write in progress. */
  flush(): Promise<void>;
}

export interface AcceptanceCommitterSettings {
  /** How long the first acceptance of a group waits for others. */
  windowMs: number;
  /** A group this large is written at once. */
  maxBatch: number;
}

interface Pending {
  emailId: string;
  messageId: string;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

export function createAcceptanceCommitter(sql: SqlExecutor, settings: AcceptanceCommitterSettings): AcceptanceRecorder {
  let group = new Map<string, Pending>();
  let timer: NodeJS.Timeout | null = null;
  const writing = new Set<Promise<void>>();

  const write = async (batch: Pending[]) => {
    try {
      const recorded = await recordSesAcceptances(sql, batch);
      for (const p of batch) p.resolve(recorded.has(p.emailId));
    } catch (err) {
      // Every caller retries its own email (retryDatabaseWrite), which joins a later group.
      for (const p of batch) p.reject(err);
    }
  };
  const writeGroup = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (group.size === 0) return;
    const batch = [...group.values()];
    group = new Map();
    const done = write(batch).finally(() => writing.delete(done));
    writing.add(done);
  };

  return {
    record(emailId, messageId) {
      return new Promise<boolean>((resolve, reject) => {
        // The same email twice in one group (never in practice: one job per email) would make
        // the UPDATE ... FROM ambiguous; the second one goes on its own.
        if (group.has(emailId)) writeGroup();
        group.set(emailId, { emailId, messageId, resolve, reject });
        if (group.size >= settings.maxBatch) writeGroup();
        else timer ??= setTimeout(writeGroup, settings.windowMs);
      });
    },
    async flush() {
      writeGroup();
      await Promise.all([...writing]);
    },
  };
}
