import { ADDRESS_FIELD_RULE, parseAddress } from '@mailrail/domain/emails/address';
import { ApiError, badRequest } from '@mailrail/domain/errors/api-error';
import { findVerifiedSenderDomain } from '@mailrail/domain/domains/sender-domain';
import { newId } from '@mailrail/platform/ids';
import { toEditorDocument } from '@mailrail/domain/audience/editor-document';
import { type ContactBook } from '@mailrail/platform/db/generated/client';
import { type Db } from '@mailrail/platform/db/client';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { DEFAULT_DOUBLE_OPT_IN_CONTENT, DEFAULT_DOUBLE_OPT_IN_SUBJECT } from './double-opt-in-settings';
import type { CreateContactBookInput, UpdateContactBookInput } from './schemas';

export const DEFAULT_EMOJI = '📙';

export const contactBookNotFound = () => new ApiError('NOT_FOUND', 'Contact book not found');

/** A book of the caller's team, or a 404 that does not reveal whether another team has it. */
export async function findTeamContactBook(db: Db, teamId: number, contactBookId: string): Promise<ContactBook> {
  const book = await db.contactBook.findFirst({ where: { id: contactBookId, teamId } });
  if (!book) throw contactBookNotFound();
  return book;
}

async function checkDoubleOptInFrom(db: Db, auth: AuthContext, from: string | null | undefined): Promise<void> {
  if (from === null || from === undefined) return;
  const parsed = parseAddress(from);
  if (!parsed) {
    throw badRequest(`Invalid request body: doubleOptInFrom: ${ADDRESS_FIELD_RULE}`, [
      { path: ['doubleOptInFrom'], message: ADDRESS_FIELD_RULE },
    ]);
  }
  // Every refusal of the sender-domain rule (including a key bound to another domain) is this one
  // 400 on the field, unlike emails and campaigns, where the bound-key case is a 403 (documented).
  if (!(await findVerifiedSenderDomain(db, auth.teamId, parsed.address, auth.domainId)).ok) {
    const message = 'must use a verified domain of your team';
    throw badRequest(`Invalid request body: doubleOptInFrom: ${message}`, [{ path: ['doubleOptInFrom'], message }]);
  }
}

/** With double opt-in on, a missing subject or content falls back to the defaults. */
function withDoubleOptInDefaults<T extends { doubleOptInSubject?: string | null; doubleOptInContent?: string | null }>(
  enabled: boolean,
  v: T,
): T {
  if (!enabled) return v;
  return {
    ...v,
    doubleOptInSubject: v.doubleOptInSubject ?? DEFAULT_DOUBLE_OPT_IN_SUBJECT,
    doubleOptInContent: v.doubleOptInContent ?? DEFAULT_DOUBLE_OPT_IN_CONTENT,
  };
}

/** The wire shape: `doubleOptInContent` as an editor document, `_count.contacts`, `subscribedCount`. */
export function contactBookResponse(book: ContactBook, { contacts, subscribed }: BookCounts) {
  return {
    id: book.id,
    name: book.name,
    teamId: book.teamId,
    properties: book.properties,
    variables: book.variables,
    emoji: book.emoji,
    doubleOptInEnabled: book.doubleOptInEnabled,
    doubleOptInFrom: book.doubleOptInFrom,
    doubleOptInSubject: book.doubleOptInSubject,
    doubleOptInContent: toEditorDocument(book.doubleOptInContent),
    createdAt: book.createdAt,
    updatedAt: book.updatedAt,
    _count: { contacts },
    subscribedCount: subscribed,
  };
}

interface BookCounts {
  contacts: number;
  subscribed: number;
}
const NO_CONTACTS: BookCounts = { contacts: 0, subscribed: 0 };

/**
 * Both counts of each book in one pass: the (contactBookId, subscribed) index answers them
 * with an index-only scan, so the subscribed count costs nothing over the total.
 */
async function countContacts(db: Db, contactBookIds: string[]): Promise<Map<string, BookCounts>> {
  const rows = await prismaExecutor(db).query<{ id: string } & BookCounts>(
    `SELECT "contactBookId" AS id, count(*)::int AS contacts, (count(*) FILTER (WHERE subscribed))::int AS subscribed
       FROM "Contact" WHERE "contactBookId" = ANY($1::text[]) GROUP BY "contactBookId"`,
    [contactBookIds],
  );
  return new Map(rows.map((r) => [r.id, { contacts: r.contacts, subscribed: r.subscribed }]));
}
const countsOf = async (db: Db, contactBookId: string) => (await countContacts(db, [contactBookId])).get(contactBookId) ?? NO_CONTACTS;

export async function createContactBook(deps: ApiDeps, auth: AuthContext, input: CreateContactBookInput) {
  await checkDoubleOptInFrom(deps.db, auth, input.doubleOptInFrom);
  const enabled = input.doubleOptInEnabled ?? false;
  const fields = withDoubleOptInDefaults(enabled, {
    doubleOptInSubject: input.doubleOptInSubject ?? null,
    doubleOptInContent: input.doubleOptInContent ?? null,
  });
  const book = await deps.db.contactBook.create({
    data: {
      id: newId(),
      teamId: auth.teamId,
      name: input.name,
      emoji: input.emoji || DEFAULT_EMOJI,
      properties: input.properties ?? {},
      variables: input.variables ?? [],
      doubleOptInEnabled: enabled,
      doubleOptInFrom: input.doubleOptInFrom ?? null,
      ...fields,
    },
  });
  return contactBookResponse(book, NO_CONTACTS);
}

export async function listContactBooks(deps: ApiDeps, auth: AuthContext) {
  const books = await deps.db.contactBook.findMany({
    where: { teamId: auth.teamId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const counts = await countContacts(
    deps.db,
    books.map((b) => b.id),
  );
  return books.map((b) => contactBookResponse(b, counts.get(b.id) ?? NO_CONTACTS));
}

export async function getContactBook(deps: ApiDeps, auth: AuthContext, contactBookId: string) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  return contactBookResponse(book, await countsOf(deps.db, book.id));
}

export async function updateContactBook(deps: ApiDeps, auth: AuthContext, contactBookId: string, input: UpdateContactBookInput) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  await checkDoubleOptInFrom(deps.db, auth, input.doubleOptInFrom);
  const enabled = input.doubleOptInEnabled ?? book.doubleOptInEnabled;
  const fields = withDoubleOptInDefaults(enabled, {
    doubleOptInSubject: input.doubleOptInSubject === undefined ? book.doubleOptInSubject : input.doubleOptInSubject,
    doubleOptInContent: input.doubleOptInContent === undefined ? book.doubleOptInContent : input.doubleOptInContent,
  });
  const updated = await deps.db.contactBook.update({
    where: { id: book.id },
    data: {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.emoji !== undefined ? { emoji: input.emoji || DEFAULT_EMOJI } : {}),
      ...(input.properties !== undefined ? { properties: input.properties } : {}),
      ...(input.variables !== undefined ? { variables: input.variables } : {}),
      ...(input.doubleOptInFrom !== undefined ? { doubleOptInFrom: input.doubleOptInFrom } : {}),
      doubleOptInEnabled: enabled,
      ...fields,
    },
  });
  return contactBookResponse(updated, await countsOf(deps.db, book.id));
}

export async function deleteContactBook(deps: ApiDeps, auth: AuthContext, contactBookId: string) {
  // The contacts go with it (ON DELETE CASCADE).
  const { count } = await deps.db.contactBook.deleteMany({ where: { id: contactBookId, teamId: auth.teamId } });
  if (count === 0) throw contactBookNotFound();
  return { id: contactBookId, success: true, message: 'Contact book deleted successfully' };
}
