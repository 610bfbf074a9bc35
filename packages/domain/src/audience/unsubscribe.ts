import type { Db, UnsubscribeReason } from '@mailrail/platform/db/client';
import { newIds } from './contact-id';
import { emailIdPrefixAt } from '@mailrail/platform/ids';
import { contactEventsInsertSql } from '../sql/contact';
import { contactEventsSql } from '../events/contact-events';
import { prismaExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';

interface UnsubscribeTarget {
  /** SQL selecting the contacts to unsubscribe (aliases c = Contact, b = ContactBook), params from $6. */
  whereSql: string;
  params: unknown[];
  reason: UnsubscribeReason;
  /** Campaign whose `unsubscribed` counter goes up by one if `countContactId` was subscribed. */
  campaignId: string | null;
  countContactId: string | null;
  now: Date;
  /** Contacts expected to change: one outbox event id made here each (more get an id made in SQL). */
  expectedRows: number;
}

// One statement: lock the contacts, unsubscribe those not already unsubscribed, count the campaign
// once (only a contact that was subscribed counts), write the contact.updated outbox rows and the
// built-in contact.unsubscribed events.
// A concurrent second unsubscribe re-checks the row after the lock and changes nothing.
async function unsubscribeContacts(sql: SqlExecutor, t: UnsubscribeTarget): Promise<{ id: string; wasSubscribed: boolean }[]> {
  const ids = newIds(t.expectedRows);
  const prefixParam = `$${6 + t.params.length}`;
  const statement = `
    WITH old AS (
      SELECT c.id, c.subscribed, b."teamId" FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE c."unsubscribeReason" IS NULL AND ${t.whereSql}
      ORDER BY c.id
      FOR UPDATE OF c
    ), changed AS (
      UPDATE "Contact" c SET subscribed = false, "unsubscribeReason" = $1::"UnsubscribeReason", "updatedAt" = $2::timestamptz
      FROM old WHERE c.id = old.id AND c."unsubscribeReason" IS NULL
      RETURNING c.*, old.subscribed AS "wasSubscribed", old."teamId" AS "teamId"
    ), counted AS (
      UPDATE "Campaign" k SET unsubscribed = k.unsubscribed + 1, "updatedAt" = $2::timestamptz
      FROM changed WHERE k.id = $3 AND changed.id = $4 AND changed."wasSubscribed" AND k."teamId" = changed."teamId"
    ), events AS (
      ${contactEventsInsertSql({ source: 'changed', teamIdSql: 's."teamId"', typeSql: `'contact.updated'`, idsParam: '$5', nowParam: '$2' })}
    ), builtin_events AS (
      ${contactEventsSql({
        source: 'changed',
        teamIdSql: 's."teamId"',
        insertedSql: 'false',
        wasSubscribedSql: 's."wasSubscribed"',
        hadReasonSql: 'false',
        nowParam: '$2',
        idPrefixParam: prefixParam,
      })}
    )
    SELECT id, "wasSubscribed" FROM changed`;
  return sql.query(statement, [t.reason, t.now, t.campaignId, t.countContactId, ids, ...t.params, emailIdPrefixAt(t.now.getTime())]);
}

/**
 * Unsubscribes one contact (the unsubscribe page and one-click). Returns false when the contact
 * does not exist or was already unsubscribed; the campaign counts it only if it was subscribed.
 */
export async function unsubscribeContact(
  db: Db,
  contactId: string,
  campaignId: string | null,
  now = new Date(),
): Promise<{ changed: boolean; wasSubscribed: boolean }> {
  const rows = await unsubscribeContacts(prismaExecutor(db), {
    whereSql: 'c.id = $6',
    params: [contactId],
    reason: 'UNSUBSCRIBED',
    campaignId,
    countContactId: contactId,
    now,
    expectedRows: 1,
  });
  return { changed: rows.length > 0, wasSubscribed: rows[0]?.wasSubscribed ?? false };
}

/**
 * A hard bounce or a complaint: the addresses leave every contact book of the team, in the
 * caller's transaction when it passes one (the SES event's, so the suppression, the status and
 * the unsubscription commit together). When the event came from a campaign email, pass its
 * campaign and contact so the campaign's `unsubscribed` counts it.
 */
export async function unsubscribeEverywhere(
  sql: SqlExecutor,
  teamId: number,
  emails: readonly string[],
  reason: UnsubscribeReason,
  opts: { campaignId?: string | null; contactId?: string | null; now?: Date } = {},
): Promise<{ contactIds: string[] }> {
  // Sorted: concurrent events lock the same contacts in the same order.
  const addresses = [...new Set(emails.map((e) => e.trim().toLowerCase()))].sort();
  if (addresses.length === 0) return { contactIds: [] };
  const rows = await unsubscribeContacts(sql, {
    whereSql: 'b."teamId" = $6 AND c.email = ANY($7::text[])',
    params: [teamId, addresses],
    reason,
    campaignId: opts.campaignId ?? null,
    countContactId: opts.contactId ?? null,
    now: opts.now ?? new Date(),
    // Usually one book holds an address.
    expectedRows: addresses.length,
  });
  return { contactIds: rows.map((r) => r.id) };
}
