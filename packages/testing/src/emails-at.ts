import { insertEmailRows, prepareEmails, type EmailDraft } from '@mailrail/domain/emails/create-emails';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

/**
 * Stores `n` plain emails of a team as minted at `at`, through the production insert: their ids
 * and createdAt come from that instant, so they land in that day's partition of the email log.
 */
export async function insertEmailsAt(sql: SqlExecutor, at: Date, teamId: number, n = 1, over: Partial<EmailDraft> = {}): Promise<string[]> {
  const drafts = Array.from({ length: n }, (): EmailDraft => ({
    teamId,
    domainId: null,
    region: 'us-east-1',
    source: 'API',
    from: 'a@example.com',
    to: ['b@example.org'],
    subject: 's',
    html: '<p>hi</p>',
    text: 'hi',
    ...over,
  }));
  const prepared = prepareEmails(drafts, at);
  await insertEmailRows(sql, prepared, at);
  return prepared.map((p) => p.created.id);
}
