import { notFound } from '@mailrail/domain/errors/api-error';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { decodeCreatedAtCursor, encodeCreatedAtCursor } from '../http/created-at-cursor';
import type { ListEventsQuery } from './schemas';

// GET /api/v1/events and /api/v1/events/{eventId}: the team's events (custom and built-in), newest first by when
// they occurred, paged by (occurredAt, id) like the request log by (createdAt, id) (the same opaque
// cursor; the instant in it is occurredAt here). Events have no domain: a key bound to a domain sees
// the team's events, as it sees the team's contact books.

interface EventRow {
  id: string;
  externalId: string | null;
  name: string;
  contactId: string;
  contactBookId: string;
  contactEmail: string | null;
  properties: unknown;
  source: string;
  occurredAt: Date;
  createdAt: Date;
}

const COLUMNS = `e.id, e."externalId", e.name, e."contactId", e."contactBookId", c.email AS "contactEmail", e.properties, e.source, e."occurredAt", e."createdAt"`;
// The contact's address as it is now (null once the contact is deleted: its events stay).
const FROM = `"Event" e LEFT JOIN "Contact" c ON c.id = e."contactId"`;

const eventJson = (r: EventRow) => ({
  id: r.id,
  eventId: r.externalId,
  name: r.name,
  contactId: r.contactId,
  contactBookId: r.contactBookId,
  contactEmail: r.contactEmail,
  properties: r.properties,
  source: r.source,
  occurredAt: r.occurredAt.toISOString(),
  createdAt: r.createdAt.toISOString(),
});

export async function listEvents(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, q: ListEventsQuery) {
  const params: unknown[] = [auth.teamId];
  const p = (v: unknown) => `$${params.push(v)}`;
  const where = [`e."teamId" = $1`];
  if (q.name !== undefined) where.push(`e.name = ${p(q.name)}`);
  if (q.source !== undefined) where.push(`e.source = ${p(q.source)}`);
  if (q.contactId !== undefined) where.push(`e."contactId" = ${p(q.contactId)}`);
  if (q.email !== undefined)
    where.push(
      `e."contactId" IN (SELECT k.id FROM "Contact" k JOIN "ContactBook" b ON b.id = k."contactBookId" WHERE b."teamId" = $1 AND k.email = ${p(q.email)})`,
    );
  if (q.startDate) where.push(`e."occurredAt" >= ${p(q.startDate)}`);
  if (q.endDate) where.push(`e."occurredAt" < ${p(q.endDate)}`);
  if (q.cursor) {
    const cursor = decodeCreatedAtCursor(q.cursor);
    where.push(`(e."occurredAt", e.id) < (${p(cursor.createdAt)}, ${p(cursor.id)})`);
  }
  const rows = await prismaExecutor(deps.db).query<EventRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE ${where.join(' AND ')} ORDER BY e."occurredAt" DESC, e.id DESC LIMIT ${p(q.limit + 1)}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    data: page.map(eventJson),
    nextCursor: rows.length > q.limit && last ? encodeCreatedAtCursor({ createdAt: last.occurredAt, id: last.id }) : null,
  };
}

export async function getEvent(deps: Pick<ApiDeps, 'db'>, auth: AuthContext, eventId: string) {
  const [row] = await prismaExecutor(deps.db).query<EventRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE e.id = $1 AND e."teamId" = $2`, [
    eventId,
    auth.teamId,
  ]);
  if (!row) throw notFound('Event not found');
  return eventJson(row);
}
