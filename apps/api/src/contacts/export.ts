import type { Response } from 'express';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { storedSegmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { safeCsvCell, safeCsvCellSql } from '@mailrail/domain/audience/csv-cells';
import { isoUtcSql } from '@mailrail/platform/db/sql/time';
import { prismaExecutor, setLocalStatementTimeout, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { findTeamContactBook } from '../contact-books/service';
import { findBookSegment } from '../segments/service';
import { SEGMENT_POOL_WAIT_MS, segmentQueryError } from '../segments/bounded-query';

// A book (or one segment of it) as CSV, streamed: rows are read in keyset batches by id, so memory
// holds one batch whatever the book's size, and each batch is written only once the client has
// taken the previous one (backpressure). Every batch reads the same snapshot (one REPEATABLE READ,
// READ ONLY transaction for the whole export): contacts added, deleted or changed meanwhile are
// neither skipped nor doubled, the file is the book as it was when the export began.

export const EXPORT_BATCH = 1000;
/**
 * The export's transaction holds one connection of the pool while the client reads; past this an
 * export that is still running (a client reading very slowly) is broken off.
 */
export const EXPORT_MAX_MS = 15 * 60_000;
/** Property columns beyond this many are left out (a header of thousands of columns helps no one). */
export const MAX_EXPORT_PROPERTIES = 500;
const FIXED_COLUMNS = ['email', 'firstName', 'lastName', 'subscribed', 'createdAt'];

/** The rows to export: the book's, or only those its segment matches. */
function selection(contactBookId: string, filter: SegmentFilter | null, params: unknown[]): string {
  params.push(contactBookId);
  return `c."contactBookId" = $1${filter ? ` AND ${segmentFilterSql(filter, 'c', params)}` : ''}`;
}

/** Writes, then waits until the client has taken it (or left); false once the client is gone. */
async function writeChunk(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (!res.write(chunk)) {
    // One listener pair per wait, both removed after: none accumulate over a long export.
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
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
  filter: SegmentFilter | null,
  properties: string[],
  after: string,
) {
  const params: unknown[] = [];
  const where = selection(contactBookId, filter, params);
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

/** Validates first (404/400 as JSON), then streams `text/csv`. */
export async function exportContactsCsv(
  deps: ApiDeps,
  auth: AuthContext,
  contactBookId: string,
  segmentId: string | undefined,
  res: Response,
) {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const filter = segmentId ? storedSegmentFilter((await findBookSegment(deps.db, auth.teamId, book.id, segmentId)).filter) : null;
  const timeoutMs = deps.config.SEGMENT_QUERY_TIMEOUT_MS;
  try {
    await deps.db.$transaction(
      async (tx) => {
        const sql = prismaExecutor(tx);
        // Before the first read: every statement after it sees the snapshot that read takes.
        await sql.execute('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        // A segment's filter is user-built SQL: each of its statements is bounded.
        if (filter) await setLocalStatementTimeout(sql, timeoutMs);
        await streamCsv(sql, book.id, filter, res);
      },
      { maxWait: SEGMENT_POOL_WAIT_MS, timeout: EXPORT_MAX_MS },
    );
  } catch (err) {
    // Before the header: a JSON error (503 for a filter that was too slow). After: the only honest
    // signal left is a broken response, never a partial file that looks complete.
    if (!res.headersSent) throw segmentQueryError(err, timeoutMs);
    res.destroy(err as Error);
  }
}

/** The header, then the batches, each once the client has taken the one before. */
async function streamCsv(sql: SqlExecutor, contactBookId: string, filter: SegmentFilter | null, res: Response) {
  const keyParams: unknown[] = [];
  const where = selection(contactBookId, filter, keyParams);
  const keys = await sql.query<{ key: string }>(
    `SELECT DISTINCT k AS key FROM "Contact" c, jsonb_object_keys(CASE WHEN jsonb_typeof(c.properties) = 'object' THEN c.properties ELSE '{}' END) k
      WHERE ${where} ORDER BY k LIMIT ${MAX_EXPORT_PROPERTIES}`,
    keyParams,
  );
  const properties = keys.map((k) => k.key);

  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="contacts-${contactBookId.replace(/[^\w-]/g, '')}.csv"`);
  res.setHeader('Cache-Control', 'no-store');
  if (!(await writeChunk(res, [...FIXED_COLUMNS, ...properties].map(safeCsvCell).join(',') + '\r\n'))) return;
  let after = '';
  for (;;) {
    const batch = await csvBatch(sql, contactBookId, filter, properties, after);
    if (batch.rows === 0) break;
    if (!(await writeChunk(res, batch.chunk))) return;
    after = batch.lastId;
    if (batch.rows < EXPORT_BATCH) break;
  }
  res.end();
}
