import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { emailIdPrefixAt } from '@mailrail/platform/ids';
import { contactEventsInsertSql } from '../sql/contact';
import { contactEventsSql } from '../events/contact-events';
import { newContactIds, newIds } from './contact-id';
import { canonicalProperties, mergeDuplicateContacts, type ContactInput } from './contact-input';

// The one contact merge: the contacts API (POST, PUT, bulk) and the CSV import write contacts
// through it, so "what happens to an existing contact of the same address" has one answer.
// On conflict, names are taken when given, properties merge, an unsubscribed contact stays
// unsubscribed (an upsert never re-subscribes), a subscribed one stays subscribed, and a pending
// one (double opt-in) is subscribed only when the new row is.

export interface ContactsTarget {
  contactBookId: string;
  teamId: number;
  /** The book's declared variables: property keys take their spelling (canonicalProperties). */
  variables: readonly string[];
  /** New contacts wait for a double opt-in confirmation (subscribed false, no reason). */
  awaitConfirmation: boolean;
  /** SKIP leaves an existing contact alone; UPDATE merges into it. */
  onExisting: 'SKIP' | 'UPDATE';
  /** Write a contact.created / contact.updated outbox row per contact written (built-in events are always written). */
  emitEvents: boolean;
}

/** What an upsert reports: counted in SQL, so ten thousand rows never travel back to Node. */
export interface UpsertContactsSummary {
  /** Contacts written (with SKIP: only the new ones). */
  total: number;
  created: number;
  /** The smallest contact id written (the only one for a single contact); null when none was. */
  firstId: string | null;
  /** Contacts awaiting double opt-in confirmation after the upsert. */
  pendingIds: string[];
}

// One statement for one contact or ten thousand: arrays in (unnest: a handful of parameters
// whatever the row count), counts out. Without webhook events only the columns the counts and the
// built-in events need come back. `old` is the book's contacts of these addresses before the
// statement (its snapshot), for the built-in contact.subscribed / contact.unsubscribed events.
const upsertSql = (onExisting: ContactsTarget['onExisting'], emitEvents: boolean) => `
  WITH old AS (
    SELECT o.email, o.subscribed, o."unsubscribeReason" FROM "Contact" o WHERE o."contactBookId" = $1 AND o.email = ANY($4::text[])
  ), upserted AS (
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
    RETURNING ${emitEvents ? 'c.*' : 'c.id, c."contactBookId", c.email, c.subscribed, c."unsubscribeReason"'}, (c.xmax = 0) AS inserted
  ), builtin_events AS (${contactEventsSql({
    source: `(SELECT u.*, old.subscribed AS "wasSubscribed", old."unsubscribeReason" IS NOT NULL AS "hadReason"
                FROM upserted u LEFT JOIN old ON old.email = u.email)`,
    teamIdSql: '$10',
    insertedSql: 's.inserted',
    // No old row for an updated contact: inserted concurrently after this statement's snapshot; no transition is claimed.
    wasSubscribedSql: `CASE WHEN s.inserted THEN false ELSE coalesce(s."wasSubscribed", s.subscribed) END`,
    hadReasonSql: `CASE WHEN s.inserted THEN true ELSE coalesce(s."hadReason", s."unsubscribeReason" IS NOT NULL) END`,
    nowParam: '$2',
    idPrefixParam: '$11',
  })})${
    emitEvents
      ? `, events AS (${contactEventsInsertSql({
          source: 'upserted',
          teamIdSql: '$10::int',
          typeSql: `CASE WHEN s.inserted THEN 'contact.created' ELSE 'contact.updated' END`,
          idsParam: '$12',
          nowParam: '$2',
        })})`
      : ''
  }
  SELECT count(*)::int AS total, (count(*) FILTER (WHERE inserted))::int AS created, min(id) AS "firstId",
    coalesce(array_agg(id) FILTER (WHERE NOT subscribed AND "unsubscribeReason" IS NULL), '{}') AS "pendingIds"
  FROM upserted`;

/**
 * One contact per address. UPDATE merges repeated addresses in order, as sequential upserts would;
 * SKIP keeps the first (a later row of the same address is skipped, as it would be against the
 * stored contact). Sorted by address, so concurrent writers of one book lock rows in the same
 * order and cannot deadlock each other.
 */
function uniqueContacts(target: ContactsTarget, contacts: readonly ContactInput[]): ContactInput[] {
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

/**
 * Inserts the contacts, or merges them into the book's contacts of the same address, in one
 * statement (run it in the caller's transaction when other writes must commit with it). An
 * explicit `subscribed: false` is stored as unsubscribed (reason UNSUBSCRIBED); otherwise a new
 * contact is subscribed unless the book awaits confirmation.
 */
export async function upsertContactsIntoBook(
  sql: SqlExecutor,
  target: ContactsTarget,
  inputs: readonly ContactInput[],
  now: Date,
): Promise<UpsertContactsSummary> {
  const contacts = uniqueContacts(target, inputs);
  if (contacts.length === 0) return { total: 0, created: 0, firstId: null, pendingIds: [] };
  const params: unknown[] = [
    target.contactBookId,
    now,
    newContactIds(contacts.length, now.getTime()),
    contacts.map((c) => c.email),
    contacts.map((c) => c.firstName ?? null),
    contacts.map((c) => c.lastName ?? null),
    contacts.map((c) => (c.properties && Object.keys(c.properties).length ? JSON.stringify(c.properties) : '{}')),
    contacts.map((c) => c.subscribed !== false && !target.awaitConfirmation),
    contacts.map((c) => (c.subscribed === false ? 'UNSUBSCRIBED' : null)),
    target.teamId,
    emailIdPrefixAt(now.getTime()),
  ];
  if (target.emitEvents) params.push(newIds(contacts.length));
  const [summary] = await sql.query<UpsertContactsSummary>(upsertSql(target.onExisting, target.emitEvents), params);
  return summary;
}
