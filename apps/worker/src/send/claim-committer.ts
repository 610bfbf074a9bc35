import { createBatcher, type BatchWindow } from '@mailrail/platform/batching/batcher';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { claimEmailsForSending, type ClaimAnswer, type EmailClaimer, type SendSettings } from './send-email';

// Group claims (createBatcher). A statement per email was most of the worker's database work per
// email (a pool checkout, a round trip, a commit, a wake-up of the server). The claimer gathers the
// claims of the jobs that start within a few milliseconds and runs one claimEmailsForSending for
// them: the same conditions per row, read under the row's lock, the same lease and SES call mark,
// and one answer per job (its row, or where its email stands). Each job still waits for its own
// answer, so what it knows once it resumes is what the single-row claim would have told it, at most
// the window later. Rows another transaction holds are passed over (SKIP LOCKED): their jobs claim
// alone, waiting for the lock (sendOneEmail). A failed statement fails this group's claims only;
// those jobs claim alone.

export function createClaimCommitter(
  sql: SqlExecutor,
  send: Pick<SendSettings, 'leaseSeconds' | 'inDoubtWaitSeconds'>,
  settings: BatchWindow,
): EmailClaimer & { flush(): Promise<void> } {
  const group = createBatcher<string, ClaimAnswer | undefined>(
    async (emailIds) => {
      const answers = await claimEmailsForSending(sql, emailIds, send, { skipLocked: true });
      return emailIds.map((id) => answers.get(id));
    },
    // One job per email: the same id twice goes into the next group, where it finds the lease taken.
    { schedule: { windowMs: settings.windowMs }, maxBatch: settings.maxBatch, distinctKey: (emailId) => emailId },
  );
  return { claim: (emailId) => group.submit(emailId), flush: () => group.flush() };
}
