import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { createGroupCommitter, type GroupCommitterSettings } from './group-committer';
import { claimEmailsForSending, type ClaimAnswer, type EmailClaimer, type SendSettings } from './send-email';

// Group claims (group-committer.ts). The claim was the last statement the worker ran for each
// email; the claimer gathers the claims of the jobs that start within a few milliseconds and runs
// one claimEmailsForSending for them: the same conditions per row, read under the row's lock, the
// same lease and SES call mark, and one answer per job (its row, or where its email stands). Rows
// another transaction holds are passed over (SKIP LOCKED): their jobs claim alone, waiting for the
// lock (sendOneEmail). A failed statement fails this group's claims only; those jobs claim alone.

export function createClaimCommitter(
  sql: SqlExecutor,
  send: Pick<SendSettings, 'leaseSeconds' | 'inDoubtWaitSeconds'>,
  settings: GroupCommitterSettings,
): EmailClaimer & { flush(): Promise<void> } {
  const group = createGroupCommitter<string, ClaimAnswer | undefined>(async (emailIds) => {
    const answers = await claimEmailsForSending(sql, emailIds, send, { skipLocked: true });
    return emailIds.map((id) => answers.get(id));
  }, settings);
  // One job per email: the same id twice goes into the next group, where it finds the lease taken.
  return { claim: (emailId) => group.submit(emailId, emailId), flush: () => group.flush() };
}
