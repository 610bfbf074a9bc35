import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { emailIdPrefixAt, newId } from '@mailrail/platform/ids';
import { contactEventsInsertSql } from '../sql/contact';
import { contactEventsSql } from '../events/contact-events';
import { newIds } from './contact-id';
import { canonicalProperties } from './contact-input';

// The one update and the one delete of a contact: the contacts API (PATCH, DELETE, bulk delete) and
// the automations' update and remove steps come here, so a change made by either writes the same
// contact.updated / contact.deleted webhook rows and built-in events (upsert-contacts.ts is the
// one create-or-merge).

export interface ContactChange {
  firstName?: string;
  lastName?: string;
  /** Merged into the stored properties; keys take the spelling of the book's declared variables. */
  properties?: Record<string, string | number | boolean | null>;
  /** `true` re-subscribes (the reason is cleared); `false` unsubscribes. */
  subscribed?: boolean;
}

/**
 * Changes one contact of book `contactBookId` (of team `teamId`); its id, or null when the book has
 * no such contact.
 */
export async function updateContactInBook(
  sql: SqlExecutor,
  book: { id: string; teamId: number; variables: readonly string[] },
  contactId: string,
  change: ContactChange,
  now: Date,
): Promise<string | null> {
  const params: unknown[] = [contactId, book.id, book.teamId, now, [newId()]];
  const sets = [`"updatedAt" = $4::timestamptz`];
  if (change.firstName !== undefined) sets.push(`"firstName" = $${params.push(change.firstName)}`);
  if (change.lastName !== undefined) sets.push(`"lastName" = $${params.push(change.lastName)}`);
  if (change.properties !== undefined) {
    sets.push(
      `properties = c.properties || $${params.push(JSON.stringify(canonicalProperties(book.variables, change.properties)))}::jsonb`,
    );
  }
  if (change.subscribed === true) sets.push(`subscribed = true, "unsubscribeReason" = NULL`);
  if (change.subscribed === false) sets.push(`subscribed = false, "unsubscribeReason" = coalesce(c."unsubscribeReason", 'UNSUBSCRIBED')`);
  // `old` locks the row first, so the built-in events compare with the state this update replaced.
  const prefix = `$${params.push(emailIdPrefixAt(now.getTime()))}`;
  const rows = await sql.query<{ id: string }>(
    `WITH old AS (
       SELECT id, subscribed, "unsubscribeReason" FROM "Contact" WHERE id = $1 AND "contactBookId" = $2 FOR UPDATE
     ), changed AS (
       UPDATE "Contact" c SET ${sets.join(', ')} FROM old WHERE c.id = old.id
       RETURNING c.*, old.subscribed AS "wasSubscribed", old."unsubscribeReason" IS NOT NULL AS "hadReason"
     ), events AS (
       ${contactEventsInsertSql({ source: 'changed', teamIdSql: '$3', typeSql: `'contact.updated'`, idsParam: '$5', nowParam: '$4' })}
     ), builtin_events AS (
       ${contactEventsSql({
         source: 'changed',
         teamIdSql: '$3',
         insertedSql: 'false',
         wasSubscribedSql: 's."wasSubscribed"',
         hadReasonSql: 's."hadReason"',
         nowParam: '$4',
         idPrefixParam: prefix,
       })}
     )
     SELECT id FROM changed`,
    params,
  );
  return rows[0]?.id ?? null;
}

/** Deletes the contacts of book `contactBookId` with these ids, or this address; how many were deleted. */
export async function deleteContactsFromBook(
  sql: SqlExecutor,
  book: { id: string; teamId: number },
  which: { ids: readonly string[] } | { email: string },
  now: Date,
): Promise<number> {
  const where = 'ids' in which ? `c.id = ANY($2::text[])` : `c.email = $2`;
  const key = 'ids' in which ? [...new Set(which.ids)] : which.email;
  const rows = await sql.query<{ id: string }>(
    `WITH gone AS (
       DELETE FROM "Contact" c WHERE c."contactBookId" = $1 AND ${where} RETURNING c.*
     ), events AS (
       ${contactEventsInsertSql({ source: 'gone', teamIdSql: '$3', typeSql: `'contact.deleted'`, idsParam: '$5', nowParam: '$4' })}
     )
     SELECT id FROM gone`,
    [book.id, key, book.teamId, now, newIds(Array.isArray(key) ? key.length : 1)],
  );
  return rows.length;
}
