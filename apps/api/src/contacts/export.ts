import type { Response } from 'express';
import { segmentFilterSql } from '@mailrail/domain/audience/segments/segment-sql';
import { storedSegmentFilter, type SegmentFilter } from '@mailrail/domain/audience/segments/segment-filter';
import { isoUtcSql } from '@mailrail/platform/db/sql/time';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { findTeamContactBook } from '../contact-books/service';
import { findBookSegment } from '../segments/service';

// A book (or one segment of it) as CSV, streamed: rows are read in keyset batches by id, so memory
// holds one batch whatever the book's size, and each batch is written only once the client has
// taken the previous one (backpressure). Each batch is its own statement: a contact changed during
// the export appears once, as it was when its batch was read.

export const EXPORT_BATCH = 2000;
/** Property columns beyond this many are left out (a header of thousands of columns helps no one). */
export const MAX_EXPORT_PROPERTIES = 500;
const FIXED_COLUMNS = ['email', 'firstName', 'lastName', 'subscribed', 'createdAt'];

/** RFC 4180: a field with a comma, quote, CR or LF is quoted, quotes doubled. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

interface ExportRow {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  subscribed: boolean;
  createdAt: string;
  properties: Record<string, unknown>;
}

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
    if (!(await writeChunk(res, [...FIXED_COLUMNS, ...properties].map(csvField).join(',') + '\r\n'))) return;
    let after = '';
    for (;;) {
      const params: unknown[] = [];
      const batchWhere = selection(book.id, filter, params);
      const rows = await sql.query<ExportRow>(
        `SELECT c.id, c.email, c."firstName", c."lastName", c.subscribed, ${isoUtcSql('c."createdAt"')} AS "createdAt", c.properties
           FROM "Contact" c WHERE ${batchWhere} AND c.id > $${params.push(after)} ORDER BY c.id LIMIT ${EXPORT_BATCH}`,
        params,
      );
      if (rows.length === 0) break;
      let chunk = '';
      for (const r of rows) {
        const props = r.properties && typeof r.properties === 'object' ? r.properties : {};
        chunk +=
          [r.email, r.firstName, r.lastName, r.subscribed, r.createdAt, ...properties.map((p) => props[p])].map(csvField).join(',') +
          '\r\n';
      }
      if (!(await writeChunk(res, chunk))) return;
      after = rows[rows.length - 1].id;
      if (rows.length < EXPORT_BATCH) break;
    }
    res.end();
  } catch (err) {
    // The header is out: the only honest signal left is a broken response, never a partial file
    // that looks complete.
    res.destroy(err as Error);
  }
}
