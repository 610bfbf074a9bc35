import { ApiError } from '@mailrail/domain/errors/api-error';
import { contactColumnsSql, contactEventsInsertSql, contactJsonSql } from '@mailrail/domain/sql/contact';
import { newContactIds, newIds } from '@mailrail/domain/audience/contact-id';
import { escapeLike } from '@mailrail/domain/audience/segments/segment-sql';
import { canonicalProperties, mergeDuplicateContacts } from '@mailrail/domain/audience/contact-input';
import { newId } from '@mailrail/platform/ids';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { type ContactBook } from '@mailrail/platform/db/generated/client';
import { type Db } from '@mailrail/platform/db/client';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { contactBookNotFound, findTeamContactBook } from '../contact-books/service';
import { sendDoubleOptInConfirmations } from './double-opt-in';
import type { ContactInput, ListContactsQuery, UpdateContactInput } from './schemas';

const contactNotFound = () => new ApiError('NOT_FOUND', 'Contact not found');

/** What an upsert reports: counted in SQL, so ten thousand rows never travel back to Node. */
interface UpsertSummary {
  total: number;
  created: number;
  /** The smallest contact id (the only one for single creates). */
  firstId: string;
  /** Contacts awaiting double opt-in confirmation after the upsert. */
  pendingIds: string[];
}

// One statement for one contact or ten thousand: insert, or merge into the existing row of the same
// address, and write a contact.created / contact.updated outbox row per contact.
// The inserted values encode what the caller asked: an explicit `subscribed:false` arrives as
// reason UNSUBSCRIBED; otherwise `subscribed` is false only when the book needs a confirmation.
// On conflict an unsubscribed contact stays unsubscribed (upserts never re-subscribe), a
// subscribed one stays subscribed, and a pending one is subscribed only when the book no longer
// asks for confirmation.
const UPSERT_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(id text, email text, "firstName" text, "lastName" text,
      properties jsonb, subscribed boolean, reason "UnsubscribeReason")
  ), upserted AS (
    INSERT INTO "Contact" AS c (id, "contactBookId", email, "firstName", "lastName", properties, subscribed, "unsubscribeReason", "createdAt", "updatedAt")
    SELECT i.id, $2, i.email, i."firstName", i."lastName", coalesce(i.properties, '{}'::jsonb), i.subscribed, i.reason, $4::timestamptz, $4::timestamptz
    FROM input i
    ON CONFLICT ("contactBookId", email) DO UPDATE SET
      "firstName" = coalesce(excluded."firstName", c."firstName"),
      "lastName" = coalesce(excluded."lastName", c."lastName"),
      properties = c.properties || excluded.properties,
      subscribed = CASE WHEN excluded."unsubscribeReason" IS NOT NULL OR c."unsubscribeReason" IS NOT NULL THEN false
                        ELSE c.subscribed OR excluded.subscribed END,
      "unsubscribeReason" = coalesce(c."unsubscribeReason", excluded."unsubscribeReason"),
      "updatedAt" = excluded."updatedAt"
    RETURNING c.*, (c.xmax = 0) AS inserted
  ), events AS (
    ${contactEventsInsertSql({
      source: 'upserted',
      teamIdSql: '$3',
      typeSql: `CASE WHEN s.inserted THEN 'contact.created' ELSE 'contact.updated' END`,
      idsParam: '$5',
      nowParam: '$4',
    })}
  )
  SELECT count(*)::int AS total, (count(*) FILTER (WHERE inserted))::int AS created, min(id) AS "firstId",
    coalesce(array_agg(id) FILTER (WHERE NOT subscribed AND "unsubscribeReason" IS NULL), '{}') AS "pendingIds"
  FROM upserted`;

/**
 * Creates or updates contacts by address (POST, PUT and bulk all come here), then sends the
 * double opt-in confirmations the book asks for.
 */
export async function upsertContacts(deps: ApiDeps, auth: AuthContext, book: ContactBook, inputs: ContactInput[]): Promise<UpsertSummary> {
  const now = deps.clock.now();
  // Rows go in address order, so two concurrent bulk upserts lock their rows in the same order
  // and cannot deadlock each other.
  const merged = mergeDuplicateContacts(book.variables, inputs).sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  const ids = newContactIds(merged.length, now.getTime());
  const rows = merged.map((c, i) => ({
    id: ids[i],
    email: c.email,
    firstName: c.firstName ?? null,
    lastName: c.lastName ?? null,
    properties: c.properties ?? {},
    subscribed: c.subscribed !== false && !book.doubleOptInEnabled,
    reason: c.subscribed === false ? 'UNSUBSCRIBED' : null,
  }));
  const eventIds = newIds(rows.length);
  const [summary] = await prismaExecutor(deps.db).query<UpsertSummary>(UPSERT_SQL, [
    JSON.stringify(rows),
    book.id,
    auth.teamId,
    now,
    eventIds,
  ]);
  if (book.doubleOptInEnabled) await sendDoubleOptInConfirmations(deps, book, summary.pendingIds, now, auth.domainId);
  return summary;
}

export async function createContact(deps: ApiDeps, auth: AuthContext, contactBookId: string, input: ContactInput) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const { firstId } = await upsertContacts(deps, auth, book, [input]);
  return { contactId: firstId };
}

export async function bulkUpsertContacts(deps: ApiDeps, auth: AuthContext, contactBookId: string, inputs: ContactInput[]) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const { total, created } = await upsertContacts(deps, auth, book, inputs);
  return { message: `Processed ${total} contacts: ${created} created, ${total - created} updated`, count: total };
}

/**
 * The page as one JSON text built by PostgreSQL, in the same statement that checks the book belongs
 * to the team: no per-row work in Node on the hot path. The JSON is built after LIMIT, so skipped
 * rows cost nothing; pages past the first pick their ids from the (contactBookId, id) index alone
 * before reading any row.
 */
export async function listContactsJson(deps: ApiDeps, auth: AuthContext, contactBookId: string, q: ListContactsQuery): Promise<string> {
  const params: unknown[] = [contactBookId, auth.teamId, q.limit, (q.page - 1) * q.limit];
  // The book check gates the page too (evaluated once), so another team's book reads no rows.
  let filters = ` AND EXISTS (SELECT 1 FROM "ContactBook" b WHERE b.id = $1 AND b."teamId" = $2)`;
  if (q.emails) filters += ` AND c.email = ANY($${params.push(q.emails)}::text[])`;
  if (q.ids) filters += ` AND c.id = ANY($${params.push(q.ids)}::text[])`;
  if (q.subscribed !== undefined) filters += ` AND c.subscribed = $${params.push(q.subscribed)}::boolean`;
  if (q.after) filters += ` AND c.id > $${params.push(q.after)}`;
  if (q.search) {
    const p = `$${params.push(`%${escapeLike(q.search)}%`)}`;
    filters += ` AND (c.email ILIKE ${p} OR c."firstName" ILIKE ${p} OR c."lastName" ILIKE ${p})`;
  }
  const page =
    q.page === 1
      ? `SELECT * FROM "Contact" c WHERE c."contactBookId" = $1${filters} ORDER BY c.id LIMIT $3 OFFSET $4`
      : `SELECT c.* FROM (SELECT c.id FROM "Contact" c WHERE c."contactBookId" = $1${filters} ORDER BY c.id LIMIT $3 OFFSET $4) k
         JOIN "Contact" c ON c.id = k.id ORDER BY c.id`;
  // The sorted subquery feeds json_agg in order (PostgreSQL documents this for aggregates).
  // `suppressed` (mailrail's): one lookup of the page's addresses in the team's suppression list.
  const [{ found, body }] = await prismaExecutor(deps.db).query<{ found: boolean; body: string }>(
    `SELECT EXISTS (SELECT 1 FROM "ContactBook" WHERE id = $1 AND "teamId" = $2) AS found,
       (SELECT coalesce(json_agg(r), '[]')::text FROM (
          SELECT ${contactColumnsSql('c')},
                 EXISTS (SELECT 1 FROM "Suppression" s WHERE s."teamId" = $2 AND s.email = lower(c.email)) AS suppressed
            FROM (${page}) c) r) AS body`,
    params,
  );
  if (!found) throw contactBookNotFound();
  return body;
}

async function contactJsonText(db: Db, contactBookId: string, contactId: string): Promise<string | null> {
  const rows = await prismaExecutor(db).query<{ body: string }>(
    `SELECT ${contactJsonSql('c')}::text AS body FROM "Contact" c WHERE c.id = $1 AND c."contactBookId" = $2`,
    [contactId, contactBookId],
  );
  return rows[0]?.body ?? null;
}

export async function getContactJson(deps: ApiDeps, auth: AuthContext, contactBookId: string, contactId: string): Promise<string> {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const body = await contactJsonText(deps.db, book.id, contactId);
  if (body === null) throw contactNotFound();
  return body;
}

/** PATCH may re-subscribe (`subscribed:true` clears the reason); `false` unsubscribes. */
export async function updateContact(deps: ApiDeps, auth: AuthContext, contactBookId: string, contactId: string, input: UpdateContactInput) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const params: unknown[] = [contactId, book.id, auth.teamId, deps.clock.now(), [newId()]];
  const sets = [`"updatedAt" = $4::timestamptz`];
  if (input.firstName !== undefined) sets.push(`"firstName" = $${params.push(input.firstName)}`);
  if (input.lastName !== undefined) sets.push(`"lastName" = $${params.push(input.lastName)}`);
  if (input.properties !== undefined) {
    sets.push(`properties = c.properties || $${params.push(JSON.stringify(canonicalProperties(book.variables, input.properties)))}::jsonb`);
  }
  if (input.subscribed === true) sets.push(`subscribed = true, "unsubscribeReason" = NULL`);
  if (input.subscribed === false) sets.push(`subscribed = false, "unsubscribeReason" = coalesce(c."unsubscribeReason", 'UNSUBSCRIBED')`);
  const rows = await prismaExecutor(deps.db).query<{ id: string }>(
    `WITH changed AS (
       UPDATE "Contact" c SET ${sets.join(', ')} WHERE c.id = $1 AND c."contactBookId" = $2 RETURNING c.*
     ), events AS (
       ${contactEventsInsertSql({ source: 'changed', teamIdSql: '$3', typeSql: `'contact.updated'`, idsParam: '$5', nowParam: '$4' })}
     )
     SELECT id FROM changed`,
    params,
  );
  if (rows.length === 0) throw contactNotFound();
  return { contactId: rows[0].id };
}

async function deleteContactsWhere(deps: ApiDeps, auth: AuthContext, contactBookId: string, ids: string[]): Promise<number> {
  const unique = [...new Set(ids)];
  const rows = await prismaExecutor(deps.db).query<{ id: string }>(
    `WITH gone AS (
       DELETE FROM "Contact" c WHERE c."contactBookId" = $1 AND c.id = ANY($2::text[]) RETURNING c.*
     ), events AS (
       ${contactEventsInsertSql({ source: 'gone', teamIdSql: '$3', typeSql: `'contact.deleted'`, idsParam: '$5', nowParam: '$4' })}
     )
     SELECT id FROM gone`,
    [contactBookId, unique, auth.teamId, deps.clock.now(), newIds(unique.length)],
  );
  return rows.length;
}

export async function deleteContact(deps: ApiDeps, auth: AuthContext, contactBookId: string, contactId: string) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  if ((await deleteContactsWhere(deps, auth, book.id, [contactId])) === 0) throw contactNotFound();
  return { success: true };
}

/** Ids that are not in the book are ignored; `count` is how many were deleted. */
export async function bulkDeleteContacts(deps: ApiDeps, auth: AuthContext, contactBookId: string, contactIds: string[]) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  return { success: true, count: await deleteContactsWhere(deps, auth, book.id, contactIds) };
}
