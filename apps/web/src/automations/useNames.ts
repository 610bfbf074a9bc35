import { useQueries } from '@tanstack/react-query';
import { api } from '../api/client';
import type { CampaignList, ContactBook, Segment } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import type { Names } from './words';

/** A segment with the name of its book, for a picker grouped by book. */
export interface TeamSegment {
  segment: Segment;
  bookName: string;
}

/**
 * The team's contact books, segments (each book's GET .../segments, cached under the same key as the
 * book's page) and campaigns (the first page, as the segment builder's picker), and names for their
 * ids: the id itself until they are loaded, or for one deleted since.
 */
export function useNames() {
  const { team, base } = useTeam();
  const booksQuery = useTeamQuery<ContactBook[]>(['contact-books'], '/v1/contactBooks');
  const books = booksQuery.data ?? [];
  const segmentQueries = useQueries({
    queries: books.map((b) => ({
      queryKey: ['team', team.id, 'contact-books', b.id, 'segments', null],
      queryFn: () => api.get<Segment[]>(`${base}/v1/contactBooks/${b.id}/segments`),
    })),
  });
  const campaignsQuery = useTeamQuery<CampaignList>(['campaigns'], '/v1/campaigns', { page: 1 });
  const bookNames = new Map(books.map((b) => [b.id, b.name]));
  const segments: TeamSegment[] = segmentQueries.flatMap((q) =>
    (q.data ?? []).map((segment) => ({ segment, bookName: bookNames.get(segment.contactBookId) ?? segment.contactBookId })),
  );
  const segmentNames = new Map(segments.map((s) => [s.segment.id, s.segment.name]));
  const campaigns = campaignsQuery.data?.campaigns ?? [];
  const campaignNames = new Map(campaigns.map((c) => [c.id, c.name]));
  const names: Names = {
    book: (id) => bookNames.get(id) ?? id,
    segment: (id) => segmentNames.get(id) ?? id,
    campaign: (id) => campaignNames.get(id) ?? id,
  };
  return { books, segments, campaigns, names };
}
