import { ApiError, badRequest, type Issue } from '@mailrail/domain/errors/api-error';
import { bodyHash } from '@mailrail/domain/emails/idempotency';
import { newEmailId } from '@mailrail/platform/ids';
import { prismaExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { ContactBook } from '@mailrail/platform/db/generated/client';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { upsertContacts } from '../contacts/service';
import { insertEventsSql } from '@mailrail/domain/events/insert-events';
import { MAX_OCCURRED_AT_AHEAD_MS, type EventInput } from './schemas';

// POST /api/v1/events: one event or a batch, all or nothing. In order:
//   1. every check that needs no write (occurredAt ahead, repeated eventIds, known contacts and
//      books): any failure is one 400 naming each bad item, and nothing is written;
//   2. eventIds already stored: the same event again is a replay (its first id), another event
//      under the same eventId is a 409 (as the emails' Idempotency-Key: a replay must not hide a bug);
//   3. contacts asked for with createContact, through the contacts API's own upsert (one
//      statement per book; contact.created webhooks and double opt-in exactly as POST .../contacts);
//   4. one INSERT statement for the keys and the events, in a transaction with the re-check of
//      any key a concurrent request stored first.

export interface RecordedEvent {
  id: string;
  /** True when the event was stored before (same eventId, same event): nothing new was stored. */
  duplicate: boolean;
}

interface Fresh {
  index: number;
  input: EventInput;
  hash: string;
  id: string;
  contactId?: string;
  contactBookId?: string;
}

/** Issue paths of a batch's item i (`events.3.name`), or of the single event (`name`). */
type Where = (index: number, field: string) => (string | number)[];

const bookKey = (bookId: string, email: string) => `${bookId}\n${email}`;

export async function recordEvents(deps: ApiDeps, auth: AuthContext, inputs: EventInput[], where: Where): Promise<RecordedEvent[]> {
  const now = deps.clock.now();
  const issues: Issue[] = [];
  const results: (RecordedEvent | undefined)[] = new Array(inputs.length);
  const hashes = inputs.map((input) => bodyHash(input));

  // 1a. occurredAt: the caller's clock may be a little ahead, never a day.
  inputs.forEach((input, i) => {
    if (input.occurredAt && input.occurredAt.getTime() > now.getTime() + MAX_OCCURRED_AT_AHEAD_MS)
      issues.push({ path: where(i, 'occurredAt'), message: 'must be at most 24 hours ahead of now' });
  });

  // 1b. The same eventId twice in one batch: the same event is stored once; two events under one id is a mistake.
  const firstOfKey = new Map<string, number>();
  const aliasOf = new Map<number, number>();
  inputs.forEach((input, i) => {
    if (input.eventId === undefined) return;
    const first = firstOfKey.get(input.eventId);
    if (first === undefined) firstOfKey.set(input.eventId, i);
    else if (hashes[first] === hashes[i]) aliasOf.set(i, first);
    else issues.push({ path: where(i, 'eventId'), message: `repeats the eventId of item ${first} with another event` });
  });

  // 2. eventIds stored before.
  const sql = prismaExecutor(deps.db);
  const keys = [...firstOfKey.keys()];
  const stored = new Map<string, { eventId: string; bodyHash: string }>();
  if (keys.length) {
    const rows = await sql.query<{ key: string; eventId: string; bodyHash: string }>(
      `SELECT key, "eventId", "bodyHash" FROM "EventKey" WHERE "teamId" = $1 AND key = ANY($2::text[])`,
      [auth.teamId, keys],
    );
    for (const r of rows) stored.set(r.key, r);
  }
  const conflicts: Issue[] = [];
  const fresh: Fresh[] = [];
  inputs.forEach((input, i) => {
    if (aliasOf.has(i)) return;
    const before = input.eventId === undefined ? undefined : stored.get(input.eventId);
    if (!before) fresh.push({ index: i, input, hash: hashes[i], id: newEmailId(now) });
    else if (before.bodyHash === hashes[i]) results[i] = { id: before.eventId, duplicate: true };
    else conflicts.push({ path: where(i, 'eventId'), message: 'already used with another event' });
  });

  // 1c. Contacts and books, of the events not stored before.
  const books = await teamBooks(deps, auth.teamId, fresh);
  const byId = await teamContactsById(sql, auth.teamId, fresh);
  const missing = new Map<string, { book: ContactBook; emails: Set<string> }>();
  const resolveByEmail = async () => {
    const found = await contactsByEmail(sql, fresh);
    for (const f of fresh) {
      const { email, contactBookId, createContact } = f.input;
      if (email === undefined || contactBookId === undefined) continue;
      const book = books.get(contactBookId);
      if (!book) {
        issues.push({ path: where(f.index, 'contactBookId'), message: 'Contact book not found' });
        continue;
      }
      const contactId = found.get(bookKey(contactBookId, email));
      if (contactId) Object.assign(f, { contactId, contactBookId });
      else if (!createContact)
        issues.push({ path: where(f.index, 'email'), message: 'no contact of this address in the book (createContact: true creates it)' });
      else {
        const entry = missing.get(book.id) ?? { book, emails: new Set<string>() };
        entry.emails.add(email);
        missing.set(book.id, entry);
      }
    }
  };
  for (const f of fresh) {
    if (f.input.contactId === undefined) continue;
    const contactBookId = byId.get(f.input.contactId);
    if (contactBookId) Object.assign(f, { contactId: f.input.contactId, contactBookId });
    else issues.push({ path: where(f.index, 'contactId'), message: 'Contact not found' });
  }
  await resolveByEmail();

  if (issues.length) throw badRequest(`Invalid request body: ${issues[0].path.join('.')}: ${issues[0].message}`, issues);
  if (conflicts.length) throw new ApiError('NOT_UNIQUE', `${conflicts[0].path.join('.')}: ${conflicts[0].message}`, conflicts);

  // 3. Contacts to create, then their ids.
  if (missing.size) {
    for (const { book, emails } of missing.values())
      await upsertContacts(
        deps,
        auth,
        book,
        [...emails].map((email) => ({ email })),
      );
    missing.clear();
    await resolveByEmail();
    // A contact deleted between its creation and here: refused like an unknown one.
    for (const f of fresh) if (!f.contactId) issues.push({ path: where(f.index, 'email'), message: 'the contact was deleted meanwhile' });
    if (issues.length) throw badRequest(`Invalid request body: ${issues[0].path.join('.')}: ${issues[0].message}`, issues);
  }

  // 4. One statement for the batch, and the keys a concurrent request stored first.
  if (fresh.length) {
    await deps.db.$transaction(async (tx) => {
      const txSql = prismaExecutor(tx);
      const inserted = new Set(
        (await txSql.query<{ id: string }>(INSERT_EVENTS_SQL, [JSON.stringify(fresh.map(eventRow)), auth.teamId, now])).map((r) => r.id),
      );
      const lost = fresh.filter((f) => !inserted.has(f.id));
      const winners = new Map<string, { eventId: string; bodyHash: string }>();
      if (lost.length) {
        const rows = await txSql.query<{ key: string; eventId: string; bodyHash: string }>(
          `SELECT key, "eventId", "bodyHash" FROM "EventKey" WHERE "teamId" = $1 AND key = ANY($2::text[])`,
          [auth.teamId, lost.map((f) => f.input.eventId)],
        );
        for (const r of rows) winners.set(r.key, r);
      }
      const raced: Issue[] = [];
      for (const f of fresh) {
        const winner = inserted.has(f.id) ? undefined : winners.get(f.input.eventId!);
        if (inserted.has(f.id)) results[f.index] = { id: f.id, duplicate: false };
        else if (winner?.bodyHash === f.hash) results[f.index] = { id: winner.eventId, duplicate: true };
        else raced.push({ path: where(f.index, 'eventId'), message: 'already used with another event' });
      }
      // Rolls the whole batch back: all or nothing, as for the checks above.
      if (raced.length) throw new ApiError('NOT_UNIQUE', `${raced[0].path.join('.')}: ${raced[0].message}`, raced);
    });
  }
  for (const [i, first] of aliasOf) results[i] = { id: results[first]!.id, duplicate: true };
  return results as RecordedEvent[];
}

// The keys first (ON CONFLICT DO NOTHING: a key a concurrent request holds waits for it, then is
// skipped), then, through the one INSERT of events (insert-events.ts), the events without a key or
// whose key was inserted here.
const INSERT_EVENTS_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(id text, name text, "contactId" text, "contactBookId" text,
      properties jsonb, key text, hash text, "occurredAt" timestamptz)
  ), keys AS (
    INSERT INTO "EventKey" ("teamId", key, "eventId", "bodyHash", "createdAt")
    SELECT $2, key, id, hash, $3 FROM input WHERE key IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING "eventId"
  )
  ${insertEventsSql(
    `SELECT i.id, $2::int AS "teamId", i.name, i."contactId", i."contactBookId", i.properties, i.key AS "externalId",
            'api' AS source, i."occurredAt"
       FROM input i
      WHERE i.key IS NULL OR i.id IN (SELECT "eventId" FROM keys)`,
    // Every id is made by the caller (newEmailId): it answers them.
    { idPrefixSql: 'NULL', createdAtSql: '$3', returning: 'id' },
  )}`;

const eventRow = (f: Fresh) => ({
  id: f.id,
  name: f.input.name,
  contactId: f.contactId,
  contactBookId: f.contactBookId,
  properties: f.input.properties ?? {},
  key: f.input.eventId ?? null,
  hash: f.hash,
  occurredAt: f.input.occurredAt?.toISOString() ?? null,
});

async function teamBooks(deps: ApiDeps, teamId: number, fresh: Fresh[]): Promise<Map<string, ContactBook>> {
  const ids = [...new Set(fresh.flatMap((f) => (f.input.contactBookId ? [f.input.contactBookId] : [])))];
  if (!ids.length) return new Map();
  const books = await deps.db.contactBook.findMany({ where: { id: { in: ids }, teamId } });
  return new Map(books.map((b) => [b.id, b]));
}

/** Contact id → its book, for the team's contacts among the ids named. */
async function teamContactsById(sql: SqlExecutor, teamId: number, fresh: Fresh[]): Promise<Map<string, string>> {
  const ids = [...new Set(fresh.flatMap((f) => (f.input.contactId ? [f.input.contactId] : [])))];
  if (!ids.length) return new Map();
  const rows = await sql.query<{ id: string; contactBookId: string }>(
    `SELECT c.id, c."contactBookId" FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId"
      WHERE b."teamId" = $1 AND c.id = ANY($2::text[])`,
    [teamId, ids],
  );
  return new Map(rows.map((r) => [r.id, r.contactBookId]));
}

/** (book, address) → contact id, for the pairs named (the books are checked to be the team's apart). */
async function contactsByEmail(sql: SqlExecutor, fresh: Fresh[]): Promise<Map<string, string>> {
  const pairs = fresh.flatMap((f) => (f.input.email && f.input.contactBookId ? [[f.input.contactBookId, f.input.email]] : []));
  if (!pairs.length) return new Map();
  const rows = await sql.query<{ id: string; contactBookId: string; email: string }>(
    `SELECT c.id, c."contactBookId", c.email FROM "Contact" c
      WHERE (c."contactBookId", c.email) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
  );
  return new Map(rows.map((r) => [bookKey(r.contactBookId, r.email), r.id]));
}
