import type { Response } from 'express';
import { segmentFilterSql, type SegmentScope } from '@mailrail/domain/audience/segments/segment-sql';
import { storedSegmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { safeCsvCell, safeCsvCellSql } from '@mailrail/domain/audience/csv-cells';
import { isoUtcSql } from '@mailrail/platform/db/sql/time';
import { setLocalStatementTimeout, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { findTeamContactBook } from '../contact-books/service';
import { findBookSegment } from '../segments/service';
import { requireAffordableFilter, segmentQueryError } from '../segments/bounded-query';

// A book (or one segment of it) as CSV, streamed: rows are read in keyset batches by id, so memory
// holds one batch whatever the book's size, and each batch is written only once the client has
// taken the previous one (backpressure). No connection is held while the client reads: each batch
// is one short transaction on the heavy pool, under a statement timeout, and the connection is
// back in the pool before the batch is written. So a client that does not read costs a place of
// the team's export budget (EXPORT_CONCURRENCY_PER_TEAM) until EXPORT_IDLE_TIMEOUT_MS cuts it off,
// and no connection. What a file guarantees without one snapshot: docs/audience.md ("Export").

export const EXPORT_BATCH = 1000;
/** Property columns beyond this many are left out (a header of thousands of columns helps no one). */
export const MAX_EXPORT_PROPERTIES = 500;
const FIXED_COLUMNS = ['email', 'firstName', 'lastName', 'subscribed', 'createdAt'];

/** The rows to export: the book's, or only those its segment matches. */
/** A segment to export: its filter and whose activity at which instant it reads (fixed when the export starts). */
interface ExportSegment {
  filter: SegmentFilter;
  scope: SegmentScope;
}

function selection(contactBookId: string, segment: ExportSegment | null, params: unknown[]): string {
  params.push(contactBookId);
  return `c."contactBookId" = $1${segment ? ` AND ${segmentFilterSql(segment.filter, 'c', segment.scope, params)}` : ''}`;
}

/**
 * Writes, then waits until the client has taken it, left, or taken nothing for `idleMs` (then the
 * response is destroyed: its socket closes); false once the client is gone.
 */
async function writeChunk(res: Response, chunk: string, idleMs: number): Promise<boolean> {
  if (res.destroyed) return false;
  if (!res.write(chunk)) {
    // One listener pair and one timer per wait, all removed after: none accumulate over a long export.
    const taken = await new Promise<boolean>((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(idle);
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(drained);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const idle = setTimeout(() => done(false), idleMs);
      res.on('drain', onDrain);
      res.on('close', onClose);
    });
    if (!taken && !res.destroyed) res.destroy();
  }
  return !res.destroyed;
}

/**
 * The next batch after `after`, as CSV text built by PostgreSQL: Node handles one string per batch
 * instead of thousands of row objects (whose garbage V8 collects lazily, so RSS would climb with
 * the book's size), and spends no CPU per contact.
 */
async function csvBatch(
  sql: Pick<SqlExecutor, 'query'>,
  contactBookId: string,
  segment: ExportSegment | null,
  properties: string[],
  after: string,
) {
  const params: unknown[] = [];
  const where = selection(contactBookId, segment, params);
  const afterParam = `$${params.push(after)}`;
  const props = properties.length
    ? `, (SELECT string_agg(${safeCsvCellSql('c.properties ->> u.k')}, ',' ORDER BY u.n) FROM unnest($${params.push(properties)}::text[]) WITH ORDINALITY AS u(k, n))`
    : '';
  const [batch] = await sql.query<{ chunk: string | null; rows: number; lastId: string | null }>(
    `SELECT string_agg(line, '' ORDER BY id) AS chunk, count(*)::int AS rows, max(id) AS "lastId" FROM (
       SELECT c.id, concat_ws(',', ${safeCsvCellSql('c.email')}, ${safeCsvCellSql('c."firstName"')}, ${safeCsvCellSql('c."lastName"')}, c.subscribed::text,
                  ${isoUtcSql('c."createdAt"')}${props}) || chr(13) || chr(10) AS line
         FROM "Contact" c WHERE ${where} AND c.id > ${afterParam} ORDER BY c.id LIMIT ${EXPORT_BATCH}
     ) b`,
    params,
  );
  return { chunk: batch.chunk ?? '', rows: batch.rows, lastId: batch.lastId ?? after };
}

/** One short transaction on the heavy pool, every statement bounded: its connection is free again when this answers. */
function readBatch<T>(deps: ApiDeps, work: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  return deps.heavySql.transaction(async (tx) => {
    await setLocalStatementTimeout(tx, deps.config.SEGMENT_QUERY_TIMEOUT_MS);
    return work(tx);
  });
}

/** Validates first (404/400 as JSON), takes a place of the team's export budget (429/503), then streams `text/csv`. */
export async function exportContactsCsv(
  deps: ApiDeps,
  auth: AuthContext,
  contactBookId: string,
  segmentId: string | undefined,
  res: Response,
) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const filter = segmentId ? storedSegmentFilter((await findBookSegment(deps.db, auth.teamId, book.id, segmentId)).filter) : null;
  if (filter) requireAffordableFilter(filter);
  const lease = await deps.budgets.acquire('export', auth.teamId);
  try {
    await streamCsv(deps, book.id, filter && { filter, scope: { teamId: auth.teamId, now: deps.clock.now() } }, res);
  } catch (err) {
    // Before the header: a JSON error (503 for a filter that was too slow). After: the only honest
    // signal left is a broken response, never a partial file that looks complete.
    if (!res.headersSent) throw segmentQueryError(err, deps.config.SEGMENT_QUERY_TIMEOUT_MS);
    res.destroy(err as Error);
  } finally {
    // However the export ended (done, failed, client gone or cut off), its place is free.
    await lease.release();
  }
}

/** The header, then the batches, each read once the client has taken the one before. */
async function streamCsv(deps: ApiDeps, contactBookId: string, segment: ExportSegment | null, res: Response) {
  const idleMs = deps.config.EXPORT_IDLE_TIMEOUT_MS;
  const keyParams: unknown[] = [];
  const where = selection(contactBookId, segment, keyParams);
  const keys = await readBatch(deps, (sql) =>
    sql.query<{ key: string }>(
      `SELECT DISTINCT k AS key FROM "Contact" c, jsonb_object_keys(CASE WHEN jsonb_typeof(c.properties) = 'object' THEN c.properties ELSE '{}' END) k
        WHERE ${where} ORDER BY k LIMIT ${MAX_EXPORT_PROPERTIES}`,
      keyParams,
    ),
  );
  const properties = keys.map((k) => k.key);

  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="contacts-${contactBookId.replace(/[^\w-]/g, '')}.csv"`);
  res.setHeader('Cache-Control', 'no-store');
  if (!(await writeChunk(res, [...FIXED_COLUMNS, ...properties].map(safeCsvCell).join(',') + '\r\n', idleMs))) return;
  let after = '';
  for (;;) {
    const batch = await readBatch(deps, (sql) => csvBatch(sql, contactBookId, segment, properties, after));
    if (batch.rows === 0) break;
    if (!(await writeChunk(res, batch.chunk, idleMs))) return;
    after = batch.lastId;
    if (batch.rows < EXPORT_BATCH) break;
  }
  res.end();
}
