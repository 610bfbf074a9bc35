import { isDeepStrictEqual } from 'node:util';
import { ApiError, badRequest, conflict } from '@mailrail/domain/errors/api-error';
import { contactColumnsSql } from '@mailrail/domain/sql/contact';
import { segmentFilterSql, type SegmentScope } from '@mailrail/domain/audience/segments/segment-sql';
import { activityCampaignIds, storedSegmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { newId } from '@mailrail/platform/ids';
import { prismaExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import { type Segment } from '@mailrail/platform/db/generated/client';
import type { Db } from '@mailrail/platform/db/client';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { findTeamContactBook } from '../contact-books/service';
import { evaluateSegment } from './bounded-query';
import type { CreateSegmentBody, SegmentContactsQuery, UpdateSegmentBody } from './schemas';

// Saved filters over one contact book. Counting and paging run the compiled filter
// (packages/domain/src/audience/segments/segment-sql.ts), the same SQL the worker uses to fix a
// campaign's recipients, so a count shown here is what a campaign started now would send to. Every
// evaluation runs under the team's segment budget, on the heavy pool, with a statement timeout
// (bounded-query.ts).

export const PREVIEW_CONTACTS = 10;
export const segmentNotFound = () => new ApiError('NOT_FOUND', 'Segment not found');

export function segmentView(s: Segment) {
  return {
    id: s.id,
    contactBookId: s.contactBookId,
    name: s.name,
    filter: s.filter as SegmentFilter,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** A segment of the team's book; another team's (or another book's) is not found. */
export async function findBookSegment(db: Db, teamId: number, contactBookId: string, segmentId: string): Promise<Segment> {
  const s = await db.segment.findFirst({ where: { id: segmentId, contactBookId, teamId } });
  if (!s) throw segmentNotFound();
  return s;
}

/**
 * Refuses (400, at the condition's value) an "opened / clicked campaign" condition naming a campaign
 * the team does not have: another team's campaign id would match nobody, silently.
 */
async function requireTeamCampaigns(db: Db, teamId: number, filter: SegmentFilter): Promise<void> {
  const named = activityCampaignIds(filter);
  if (!named.length) return;
  const ids = [...new Set(named.map((n) => n.campaignId))];
  const found = await db.campaign.findMany({ where: { teamId, id: { in: ids } }, select: { id: true } });
  const known = new Set(found.map((c) => c.id));
  const unknown = named.filter((n) => !known.has(n.campaignId));
  if (unknown.length)
    throw badRequest(
      'A condition names a campaign that does not exist',
      unknown.map((n) => ({ path: ['filter', ...n.path], message: `Campaign ${n.campaignId} not found` })),
    );
}

export async function createSegment(deps: ApiDeps, auth: AuthContext, contactBookId: string, body: CreateSegmentBody) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  await requireTeamCampaigns(deps.db, auth.teamId, body.filter);
  const s = await deps.db.segment.create({
    data: { id: newId(), contactBookId: book.id, teamId: auth.teamId, name: body.name, filter: body.filter },
  });
  return segmentView(s);
}

export async function listSegments(deps: ApiDeps, auth: AuthContext, contactBookId: string) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const rows = await deps.db.segment.findMany({
    where: { contactBookId: book.id, teamId: auth.teamId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map(segmentView);
}

export async function getSegment(deps: ApiDeps, auth: AuthContext, contactBookId: string, segmentId: string) {
  return segmentView(await findBookSegment(deps.db, auth.teamId, contactBookId, segmentId));
}

/**
 * A new filter is refused (409) while a campaign that is about to fix its recipients from it
 * (SCHEDULED, or RUNNING before its recipients are written) uses the segment: the filter checked
 * when it was scheduled is the one it is prepared with. Renaming is always allowed; pausing the
 * campaign frees the filter. The row lock orders this against a concurrent schedule, as in delete.
 */
export async function updateSegment(deps: ApiDeps, auth: AuthContext, contactBookId: string, segmentId: string, body: UpdateSegmentBody) {
  const s = await findBookSegment(deps.db, auth.teamId, contactBookId, segmentId);
  const newFilter = body.filter !== undefined && !isDeepStrictEqual(body.filter, s.filter);
  if (newFilter && body.filter) await requireTeamCampaigns(deps.db, auth.teamId, body.filter);
  const updated = await deps.db.$transaction(async (tx) => {
    if (newFilter) {
      const sql = prismaExecutor(tx);
      const locked = await sql.query<{ id: string }>(`SELECT id FROM "Segment" WHERE id = $1 FOR UPDATE`, [s.id]);
      if (locked.length === 0) throw segmentNotFound();
      const using = await sql.query<{ id: string }>(
        `SELECT id FROM "Campaign" WHERE "segmentId" = $1 AND status IN ('SCHEDULED', 'RUNNING') AND "recipientsReadyAt" IS NULL LIMIT 1`,
        [s.id],
      );
      if (using.length)
        throw conflict(`Segment is used by campaign ${using[0].id}, which is about to send to it: pause the campaign to change the filter`);
    }
    return tx.segment.update({
      where: { id: s.id },
      data: { ...(body.name !== undefined ? { name: body.name } : {}), ...(newFilter ? { filter: body.filter } : {}) },
    });
  });
  return segmentView(updated);
}

// Campaigns that still need the segment: it decides their recipients when they start.
const USING_STATUSES = `status IN ('SCHEDULED', 'RUNNING') OR (status = 'PAUSED' AND "recipientsReadyAt" IS NULL)`;

/**
 * Refused (409) while a campaign that has not fixed its recipients yet uses the segment. The row
 * lock orders this against a concurrent schedule: setting Campaign.segmentId takes a key-share lock
 * on the segment, so either the schedule commits first and is seen here, or it waits and then fails.
 */
export async function deleteSegment(deps: ApiDeps, auth: AuthContext, contactBookId: string, segmentId: string) {
  const s = await findBookSegment(deps.db, auth.teamId, contactBookId, segmentId);
  await deps.db.$transaction(async (tx) => {
    const sql = prismaExecutor(tx);
    const locked = await sql.query<{ id: string }>(`SELECT id FROM "Segment" WHERE id = $1 FOR UPDATE`, [s.id]);
    if (locked.length === 0) throw segmentNotFound();
    const using = await sql.query<{ id: string }>(`SELECT id FROM "Campaign" WHERE "segmentId" = $1 AND (${USING_STATUSES}) LIMIT 1`, [
      s.id,
    ]);
    if (using.length) throw conflict(`Segment is used by campaign ${using[0].id}, which has not started sending yet`);
    await sql.execute(`DELETE FROM "Segment" WHERE id = $1`, [s.id]);
  });
  return { success: true as const };
}

interface Counts {
  count: number;
  subscribedCount: number;
}

/** How many contacts of the book match, and how many of them are subscribed (a campaign's audience). */
async function countMatching(sql: SqlExecutor, contactBookId: string, filter: SegmentFilter, scope: SegmentScope): Promise<Counts> {
  const params: unknown[] = [contactBookId];
  const where = segmentFilterSql(filter, 'c', scope, params);
  const [row] = await sql.query<Counts>(
    `SELECT count(*)::int AS count, (count(*) FILTER (WHERE c.subscribed))::int AS "subscribedCount"
       FROM "Contact" c WHERE c."contactBookId" = $1 AND ${where}`,
    params,
  );
  return row;
}

/** One page of matching contacts as JSON text built by PostgreSQL, ordered by id. */
async function matchingContactsJson(
  sql: SqlExecutor,
  contactBookId: string,
  filter: SegmentFilter,
  scope: SegmentScope,
  limit: number,
  offset: number,
): Promise<string> {
  const params: unknown[] = [contactBookId, limit, offset];
  const where = segmentFilterSql(filter, 'c', scope, params);
  const [{ body }] = await sql.query<{ body: string }>(
    `SELECT coalesce(json_agg(r), '[]')::text AS body FROM (
       SELECT ${contactColumnsSql('c')} FROM "Contact" c WHERE c."contactBookId" = $1 AND ${where} ORDER BY c.id LIMIT $2 OFFSET $3
     ) r`,
    params,
  );
  return body;
}

/** `{data, count, subscribedCount}`, as text (the page is JSON from PostgreSQL). */
export async function segmentContactsJson(
  deps: ApiDeps,
  auth: AuthContext,
  contactBookId: string,
  segmentId: string,
  q: SegmentContactsQuery,
) {
  const s = await findBookSegment(deps.db, auth.teamId, contactBookId, segmentId);
  const filter = storedSegmentFilter(s.filter);
  // One place of the team's segment budget and one heavy connection, the two statements in turn.
  return evaluateSegment(deps, auth.teamId, filter, 'SEGMENT_QUERY_TIMEOUT_MS', async (sql) => {
    const scope = { teamId: auth.teamId, now: deps.clock.now() };
    const counts = await countMatching(sql, s.contactBookId, filter, scope);
    const data = await matchingContactsJson(sql, s.contactBookId, filter, scope, q.limit, (q.page - 1) * q.limit);
    return `{"data":${data},"count":${counts.count},"subscribedCount":${counts.subscribedCount}}`;
  });
}

/** The live count of the segment builder, with the first matches (asked at every edit: the short timeout). */
export async function previewSegmentJson(deps: ApiDeps, auth: AuthContext, contactBookId: string, filter: SegmentFilter) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  await requireTeamCampaigns(deps.db, auth.teamId, filter);
  return evaluateSegment(deps, auth.teamId, filter, 'SEGMENT_PREVIEW_TIMEOUT_MS', async (sql) => {
    const scope = { teamId: auth.teamId, now: deps.clock.now() };
    const counts = await countMatching(sql, book.id, filter, scope);
    const contacts = await matchingContactsJson(sql, book.id, filter, scope, PREVIEW_CONTACTS, 0);
    return `{"count":${counts.count},"subscribedCount":${counts.subscribedCount},"contacts":${contacts}}`;
  });
}
