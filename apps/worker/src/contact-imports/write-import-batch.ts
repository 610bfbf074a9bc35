import { newContactIds, newIds } from '@mailrail/domain/audience/contact-id';
import { canonicalProperties, mergeDuplicateContacts, type ContactInput } from '@mailrail/domain/audience/contact-input';
import { contactEventsInsertSql } from '@mailrail/domain/sql/contact';
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

export interface ImportTarget {
  importId: string;
  contactBookId: string;
  teamId: number;
  variables: string[];
  onExisting: 'SKIP' | 'UPDATE';
  /** Write contact.created / contact.updated outbox rows (only when a webhook of the team wants them). */
  emitEvents: boolean;
}

export class CheckpointMoved extends Error {}

// Contacts go in as arrays, one statement per batch (unnest: a handful of parameters whatever the
// row count). A new address is inserted subscribed unless its row says otherwise; `SKIP` leaves
// existing contacts alone, `UPDATE` merges like the contacts API's upsert (names when given,
// properties merged, an unsubscribed contact stays unsubscribed).
// The rows come back only to count them (and, for the outbox, to describe them): without events,
// only the `inserted` flag is returned.
const insertSql = (onExisting: 'SKIP' | 'UPDATE', emitEvents: boolean) => `
  WITH upserted AS (
    INSERT INTO "Contact" AS c (id, "contactBookId", email, "firstName", "lastName", properties, subscribed, "unsubscribeReason", "createdAt", "updatedAt")
    SELECT t.id, $1, t.email, t."firstName", t."lastName", t.properties, t.subscribed, t.reason, $2::timestamptz, $2::timestamptz
    FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::bool[], $9::"UnsubscribeReason"[])
      AS t(id, email, "firstName", "lastName", properties, subscribed, reason)
    ${
      onExisting === 'SKIP'
        ? 'ON CONFLICT ("contactBookId", email) DO NOTHING'
        : `ON CONFLICT ("contactBookId", email) DO UPDATE SET
      "firstName" = coalesce(excluded."firstName", c."firstName"),
      "lastName" = coalesce(excluded."lastName", c."lastName"),
      properties = c.properties || excluded.properties,
      subscribed = CASE WHEN excluded."unsubscribeReason" IS NOT NULL OR c."unsubscribeReason" IS NOT NULL THEN false
                        ELSE c.subscribed OR excluded.subscribed END,
      "unsubscribeReason" = coalesce(c."unsubscribeReason", excluded."unsubscribeReason"),
      "updatedAt" = excluded."updatedAt"`
    }
    RETURNING ${emitEvents ? 'c.*, ' : ''}(c.xmax = 0) AS inserted
  )${
    emitEvents
      ? `, events AS (${contactEventsInsertSql({
          source: 'upserted',
          teamIdSql: '$10::int',
          typeSql: `CASE WHEN s.inserted THEN 'contact.created' ELSE 'contact.updated' END`,
          idsParam: '$11',
          nowParam: '$2',
        })})`
      : ''
  }
  SELECT (count(*) FILTER (WHERE inserted))::int AS created FROM upserted`;

/**
 * The contacts of a batch, one per address. SKIP keeps the first row of an address (a later row
 * of the same address is skipped, as it would be against the stored contact); UPDATE merges them
 * in file order, as the contacts API merges a bulk request. Sorted by address, so concurrent
 * writers of the same book lock rows in the same order.
 */
function uniqueContacts(target: ImportTarget, contacts: ContactInput[]): ContactInput[] {
  let unique: ContactInput[];
  if (target.onExisting === 'UPDATE') unique = mergeDuplicateContacts(target.variables, contacts);
  else {
    const seen = new Map<string, ContactInput>();
    for (const c of contacts)
      if (!seen.has(c.email)) seen.set(c.email, { ...c, properties: canonicalProperties(target.variables, c.properties) });
    unique = [...seen.values()];
  }
  return unique.sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
}

async function insertContacts(tx: SqlExecutor, target: ImportTarget, contacts: ContactInput[], now: Date): Promise<number> {
  if (contacts.length === 0) return 0;
  const ids = newContactIds(contacts.length, now.getTime());
  const params: unknown[] = [
    target.contactBookId,
    now,
    ids,
    contacts.map((c) => c.email),
    contacts.map((c) => c.firstName ?? null),
    contacts.map((c) => c.lastName ?? null),
    contacts.map((c) => (c.properties && Object.keys(c.properties).length ? JSON.stringify(c.properties) : '{}')),
    contacts.map((c) => c.subscribed !== false),
    contacts.map((c) => (c.subscribed === false ? 'UNSUBSCRIBED' : null)),
  ];
  if (target.emitEvents) params.push(target.teamId, newIds(contacts.length));
  const [{ created }] = await tx.query<{ created: number }>(insertSql(target.onExisting, target.emitEvents), params);
  return created;
}

/** How many of the batch's addresses (normalised, as suppressions are stored) are on the team's suppression list. */
async function countSuppressed(tx: SqlExecutor, teamId: number, contacts: ContactInput[]): Promise<number> {
  if (contacts.length === 0) return 0;
  const [{ n }] = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "Suppression" WHERE "teamId" = $1 AND email = ANY($2::text[])`,
    [teamId, contacts.map((c) => c.email)],
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
  const contacts = uniqueContacts(target, batch.contacts);
  await sql.transaction(async (tx) => {
    const created = await insertContacts(tx, target, contacts, now);
    const suppressed = await countSuppressed(tx, target.teamId, contacts);
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
