import type { ContactInput } from '@mailrail/domain/audience/contact-input';
import { upsertContactsIntoBook, type ContactsTarget } from '@mailrail/domain/audience/upsert-contacts';
import type { SqlExecutor, TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';

export interface ImportReject {
  line: number;
  reason: string;
  row: string;
}

/** One batch of the file: its valid contacts and its rejected rows, in file order. */
export interface ImportBatch {
  contacts: ContactInput[];
  rejects: ImportReject[];
  /** Data records this batch covers (contacts + rejects); the checkpoint moves by this much. */
  records: number;
}

/** Where a batch goes; `emitEvents` only when a webhook of the team wants contact events. */
export interface ImportTarget extends Omit<ContactsTarget, 'awaitConfirmation'> {
  importId: string;
}

export class CheckpointMoved extends Error {}

/** How many of the batch's addresses (normalised, as suppressions are stored) are on the team's suppression list. */
async function countSuppressed(tx: SqlExecutor, teamId: number, contacts: ContactInput[]): Promise<number> {
  if (contacts.length === 0) return 0;
  const [{ n }] = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "Suppression" WHERE "teamId" = $1 AND email = ANY($2::text[])`,
    [teamId, [...new Set(contacts.map((c) => c.email))]],
  );
  return n;
}

/**
 * Writes one batch and moves the import's counters and checkpoint, in one transaction: either the
 * whole batch counts or none of it, so a retry after a crash never counts a row twice. The
 * checkpoint must still be where this runner read it (`fromRecord`); if another runner moved it,
 * nothing is written and CheckpointMoved is thrown.
 */
export async function writeImportBatch(
  sql: TransactionalSqlExecutor,
  target: ImportTarget,
  batch: ImportBatch,
  fromRecord: number,
  now: Date,
): Promise<void> {
  await sql.transaction(async (tx) => {
    // The import's own rule for new contacts: subscribed unless the row says otherwise (no double opt-in).
    const { created } = await upsertContactsIntoBook(tx, { ...target, awaitConfirmation: false }, batch.contacts, now);
    const suppressed = await countSuppressed(tx, target.teamId, batch.contacts);
    const others = batch.contacts.length - created;
    if (batch.rejects.length) {
      await tx.execute(
        `INSERT INTO "ContactImportReject" ("importId", line, reason, row)
         SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
        [target.importId, batch.rejects.map((r) => r.line), batch.rejects.map((r) => r.reason), batch.rejects.map((r) => r.row)],
      );
    }
    const moved = await tx.execute(
      `UPDATE "ContactImport" SET "rowsRead" = "rowsRead" + $3, created = created + $4, updated = updated + $5, skipped = skipped + $6,
         rejected = rejected + $7, suppressed = suppressed + $8, "checkpointRecords" = $2 + $3
       WHERE id = $1 AND "checkpointRecords" = $2 AND status = 'RUNNING'`,
      [
        target.importId,
        fromRecord,
        batch.records,
        created,
        target.onExisting === 'UPDATE' ? others : 0,
        target.onExisting === 'SKIP' ? others : 0,
        batch.rejects.length,
        suppressed,
      ],
    );
    if (moved !== 1) throw new CheckpointMoved(`import ${target.importId}: checkpoint is no longer ${fromRecord}`);
  });
}
