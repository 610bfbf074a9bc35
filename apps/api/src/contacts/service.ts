import { ApiError } from '@mailrail/domain/errors/api-error';
import { contactColumnsSql, contactJsonSql } from '@mailrail/domain/sql/contact';
import { escapeLike } from '@mailrail/domain/audience/segments/segment-sql';
import { upsertContactsIntoBook } from '@mailrail/domain/audience/upsert-contacts';
import { deleteContactsFromBook, updateContactInBook } from '@mailrail/domain/audience/contact-changes';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { type ContactBook } from '@mailrail/platform/db/generated/client';
import { type Db } from '@mailrail/platform/db/client';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { contactBookNotFound, findTeamContactBook } from '../contact-books/service';
import { sendDoubleOptInConfirmations } from './double-opt-in';
import type { ContactInput, ListContactsQuery, UpdateContactInput } from './schemas';

const contactNotFound = () => new ApiError('NOT_FOUND', 'Contact not found');

/**
 * Creates or updates contacts by address (POST, PUT and bulk all come here), then sends the
 * double opt-in confirmations the book asks for.
 */
export async function upsertContacts(deps: ApiDeps, auth: AuthContext, book: ContactBook, inputs: ContactInput[]) {
  const now = deps.clock.now();
  const target = {
    contactBookId: book.id,
    teamId: auth.teamId,
    variables: book.variables,
    awaitConfirmation: book.doubleOptInEnabled,
    onExisting: 'UPDATE',
    emitEvents: true,
  } as const;
  const summary = await upsertContactsIntoBook(prismaExecutor(deps.db), target, inputs, now);
  if (book.doubleOptInEnabled) await sendDoubleOptInConfirmations(deps, book, summary.pendingIds, now, auth.domainId);
  return summary;
}

export async function createContact(deps: ApiDeps, auth: AuthContext, contactBookId: string, input: ContactInput) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const { firstId } = await upsertContacts(deps, auth, book, [input]);
  // One valid contact is always written (inserted or merged).
  return { contactId: firstId! };
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
  const id = await updateContactInBook(prismaExecutor(deps.db), book, contactId, input, deps.clock.now());
  if (id === null) throw contactNotFound();
  return { contactId: id };
}

const deleteContactsWhere = (deps: ApiDeps, auth: AuthContext, contactBookId: string, ids: string[]) =>
  deleteContactsFromBook(prismaExecutor(deps.db), { id: contactBookId, teamId: auth.teamId }, { ids }, deps.clock.now());

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
