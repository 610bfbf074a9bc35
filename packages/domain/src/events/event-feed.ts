import { readCommitOrdered, type FeedPosition } from '@mailrail/platform/db/sql/commit-ordered-feed';
import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';

// The team's new events in a stable order, each once and none twice, as automations' enrollment
// reads them: in the order their transactions can no longer change (readCommitOrdered says why
// ids and times do not give that). The cursor is opaque (`<txid>.<id>`); keep it with what you did
// with the events, in one transaction, and the feed is exactly once.

export interface FeedEvent {
  id: string;
  name: string;
  contactId: string;
  contactBookId: string;
  properties: unknown;
  source: string;
  externalId: string | null;
  occurredAt: Date;
  createdAt: Date;
}

export interface EventFeedPage {
  events: FeedEvent[];
  /** Where the next read starts: the last event's position, or the cursor given when none was new. */
  cursor: string | null;
}

const encode = (txid: string, id: string) => `${txid}.${id}`;

function decode(cursor: string | null): FeedPosition {
  if (!cursor) return { txid: '-1', id: '' };
  const dot = cursor.indexOf('.');
  const txid = cursor.slice(0, dot);
  if (dot < 1 || !/^\d{1,19}$/.test(txid)) throw new Error(`not an event feed cursor: ${cursor.slice(0, 50)}`);
  return { txid, id: cursor.slice(dot + 1) };
}

/** Up to `limit` events of the team after `cursor` (null: from the oldest kept), in feed order. */
export async function readEventFeed(sql: SqlExecutor, teamId: number, cursor: string | null, limit = 500): Promise<EventFeedPage> {
  const rows = await readCommitOrdered<Omit<FeedEvent, 'id'>>(sql, {
    table: '"Event"',
    where: '"teamId" = $1',
    params: [teamId],
    columns: 'name, "contactId", "contactBookId", properties, source, "externalId", "occurredAt", "createdAt"',
    after: decode(cursor),
    limit,
  });
  const last = rows.at(-1);
  return {
    events: rows.map(({ txid: _txid, ...event }) => event),
    cursor: last ? encode(last.txid, last.id) : cursor,
  };
}
