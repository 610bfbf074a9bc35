import type { SqlExecutor } from './executor';

// Rows of a table in the order their transactions can no longer change, for a consumer that must
// see each row once and none twice (the event feed, automations' enrollment). Ids and timestamps
// do not give that: a row written by a transaction that commits later may carry a smaller id than
// one already read. So each such table keeps the id of the transaction that wrote the row (a
// `txid` column defaulting to pg_current_xact_id()), and a read:
//   - orders by (txid, id);
//   - takes only rows of transactions older than the oldest one still running
//     (pg_snapshot_xmin): every such transaction has ended, so no row can appear later before the
//     position read up to. A long transaction delays the feed (by its length), never makes it skip.
// Rows whose txid is NULL (written before the column existed) are never read.

/** Where a reader stands: the last row it took, or a txid to start after (with id ''). */
export interface FeedPosition {
  txid: string;
  id: string;
}

export interface CommitOrderedRead {
  /** A table name or FROM item whose rows have `id` (text) and `txid` (bigint). */
  table: string;
  /** The rows' scope, a condition on the table using placeholders $1..$n of `params`. */
  where: string;
  params: unknown[];
  /** The columns to return besides id and txid (SQL select list). */
  columns: string;
  after: FeedPosition;
  limit: number;
}

/** Up to `limit` rows after `after`, in (txid, id) order, each with its id and txid (as text). */
export function readCommitOrdered<T extends object>(sql: Pick<SqlExecutor, 'query'>, read: CommitOrderedRead) {
  const n = read.params.length;
  return sql.query<T & FeedPosition>(
    `SELECT ${read.columns}, id, txid::text AS txid FROM ${read.table}
      WHERE ${read.where} AND (txid, id) > ($${n + 1}::bigint, $${n + 2}::text)
        AND txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
      ORDER BY txid, id
      LIMIT $${n + 3}::int`,
    [...read.params, read.after.txid, read.after.id, read.limit],
  );
}

/**
 * Whether transaction `txid` is visible in `snapshot` (pg_current_snapshot()'s text form,
 * `xmin:xmax:xip,...`), as pg_visible_in_snapshot says: it had ended before the snapshot was taken
 * (below xmin, or below xmax and not in progress then). A row of a visible transaction existed,
 * or was rolled back, before that moment.
 */
export function visibleInSnapshot(txid: bigint, snapshot: string): boolean {
  const [xmin, xmax, xip = ''] = snapshot.split(':');
  if (txid < BigInt(xmin)) return true;
  if (txid >= BigInt(xmax)) return false;
  return !xip.split(',').some((x) => x !== '' && BigInt(x) === txid);
}
