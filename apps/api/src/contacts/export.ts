import type { Response } from 'express';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { storedSegmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { safeCsvCell, safeCsvCellSql } from '@mailrail/domain/audience/csv-cells';
import { isoUtcSql } from '@mailrail/platform/db/sql/time';
import { prismaExecutor, type SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { findTeamContactBook } from '../contact-books/service';
import { findBookSegment } from '../segments/service';

// A book (or one segment of it) as CSV, streamed: rows are read in keyset batches by id, so memory
// holds one batch whatever the book's size, and each batch is written only once the client has
// taken the previous one (backpressure). Each batch is its own statement: a contact changed during
// the export appears once, as it was when its batch was read.

export const EXPORT_BATCH = 1000;
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
async function csvBatch(sql: SqlExecutor, contactBookId: string, filter: SegmentFilter | null, properties: string[], after: string) {
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
  const sql = prismaExecutor(deps.db);

  const keyParams: unknown[] = [];
  const where = selection(book.id, filter, keyParams);
  const keys = await sql.query<{ key: string }>(
    `SELECT DISTINCT k AS key FROM "Contact" c, jsonb_object_keys(CASE WHEN jsonb_typeof(c.properties) = 'object' THEN c.properties ELSE '{}' END) k
      WHERE ${where} ORDER BY k LIMIT ${MAX_EXPORT_PROPERTIES}`,
    keyParams,
  );
  const properties = keys.map((k) => k.key);

  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="contacts-${book.id.replace(/[^\w-]/g, '')}.csv"`);
  res.setHeader('Cache-Control', 'no-store');
  try {
    if (!(await writeChunk(res, [...FIXED_COLUMNS, ...properties].map(safeCsvCell).join(',') + '\r\n'))) return;
    let after = '';
    for (;;) {
      const batch = await csvBatch(sql, book.id, filter, properties, after);
      if (batch.rows === 0) break;
      if (!(await writeChunk(res, batch.chunk))) return;
      after = batch.lastId;
      if (batch.rows < EXPORT_BATCH) break;
    }
    res.end();
  } catch (err) {
    // The header is out: the only honest signal left is a broken response, never a partial file
    // that looks complete.
    res.destroy(err as Error);
  }
}
