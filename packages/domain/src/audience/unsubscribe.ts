import type { Db, UnsubscribeReason } from '@mailrail/platform/db/client';
import { newId } from '@mailrail/platform/ids';
import { contactEventsInsertSql } from '../sql/contact';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';

interface UnsubscribeTarget {
  /** SQL selecting the contacts to unsubscribe (aliases c = Contact, b = ContactBook), params from $6. */
  whereSql: string;
  params: unknown[];
  reason: UnsubscribeReason;
  /** Campaign whose `unsubscribed` counter goes up by one if `countContactId` was subscribed. */
  campaignId: string | null;
  countContactId: string | null;
  now: Date;
  /** Upper bound of contacts changed: one outbox event id each. */
  maxRows: number;
}

// One statement: lock the contacts, unsubscribe those not already unsubscribed, count the campaign
// once (only a contact that was subscribed counts) and write the contact.updated outbox rows.
// A concurrent second unsubscribe re-checks the row after the lock and changes nothing.
async function unsubscribeContacts(db: Db, t: UnsubscribeTarget): Promise<{ id: string; wasSubscribed: boolean }[]> {
  const ids = Array.from({ length: t.maxRows }, () => newId());
  const sql = `
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
    )
    SELECT id, "wasSubscribed" FROM changed`;
  return prismaExecutor(db).query(sql, [t.reason, t.now, t.campaignId, t.countContactId, ids, ...t.params]);
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
  const rows = await unsubscribeContacts(db, {
    whereSql: 'c.id = $6',
    params: [contactId],
    reason: 'UNSUBSCRIBED',
    campaignId,
    countContactId: contactId,
    now,
    maxRows: 1,
  });
  return { changed: rows.length > 0, wasSubscribed: rows[0]?.wasSubscribed ?? false };
}

/**
 * A hard bounce or a complaint: the address leaves every contact book of the team. When it came
 * from a campaign email, pass its campaign and contact so the campaign's `unsubscribed` counts it.
 */
export async function unsubscribeEverywhere(
  db: Db,
  teamId: number,
  email: string,
  reason: UnsubscribeReason,
  opts: { campaignId?: string | null; contactId?: string | null; now?: Date } = {},
): Promise<{ contactIds: string[] }> {
  const address = email.trim().toLowerCase();
  const books = await db.contact.count({ where: { email: address, contactBook: { teamId } } });
  if (books === 0) return { contactIds: [] };
  const rows = await unsubscribeContacts(db, {
    whereSql: 'b."teamId" = $6 AND c.email = $7',
    params: [teamId, address],
    reason,
    campaignId: opts.campaignId ?? null,
    countContactId: opts.contactId ?? null,
    now: opts.now ?? new Date(),
    maxRows: books,
  });
  return { contactIds: rows.map((r) => r.id) };
}
