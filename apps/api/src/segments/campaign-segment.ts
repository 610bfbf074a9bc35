import { ApiError, badRequest } from '@mailrail/domain/errors/api-error';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { storedSegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { type Segment } from '@mailrail/platform/db/generated/client';
import type { Db } from '@mailrail/platform/db/client';
import { evaluateSegment, type SegmentQueryDeps } from './bounded-query';

// The segment a campaign targets (create, schedule, and PATCH when it comes): a segment of the
// team that does not exist is a 404; one of another book than the campaign's is a 400.

export async function campaignSegment(db: Db, teamId: number, contactBookId: string, segmentId: string): Promise<Segment> {
  const s = await db.segment.findFirst({ where: { id: segmentId, teamId } });
  if (!s) throw new ApiError('NOT_FOUND', 'Segment not found');
  if (s.contactBookId !== contactBookId) {
    const message = "The segment belongs to another contact book than the campaign's";
    throw badRequest(message, [{ path: ['segmentId'], message }]);
  }
  return s;
}

/** A campaign that would start with no recipient is refused, as for a whole book. */
export async function requireSubscribedInSegment(deps: SegmentQueryDeps, segment: Segment): Promise<void> {
  const filter = storedSegmentFilter(segment.filter);
  const params: unknown[] = [segment.contactBookId];
  const where = segmentFilterSql(filter, 'c', { teamId: segment.teamId, now: deps.clock.now() }, params);
  const [{ any }] = await evaluateSegment(deps, segment.teamId, filter, 'SEGMENT_QUERY_TIMEOUT_MS', (sql) =>
    sql.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM "Contact" c WHERE c."contactBookId" = $1 AND c.subscribed AND ${where}) AS any`,
      params,
    ),
  );
  if (!any) throw badRequest('No subscribed contacts to send', [{ path: ['segmentId'], message: 'No subscribed contacts in the segment' }]);
}
