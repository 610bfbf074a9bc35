import { TextDecoder } from 'node:util';
import type { Request, Response } from 'express';
import type * as CsvParseSync from 'csv-parse/sync';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';
import { importCsvOptions } from '@mailrail/domain/audience/imports/csv-format';
import { fromSpreadsheetSafe, safeCsvCell } from '@mailrail/domain/audience/csv-cells';
import { guessMapping, MAX_COLUMNS, resolveColumns, type ImportTarget } from '@mailrail/domain/audience/imports/csv-mapping';
import { detectPropertyType, type PropertyType } from '@mailrail/domain/audience/properties/contact-properties';
import { createUploadingImport, storeImportChunk } from '@mailrail/domain/audience/imports/import-file-store';
import { badRequest, ApiError } from '@mailrail/domain/errors/api-error';
import { newId } from '@mailrail/platform/ids';
import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import { isoUtcSql } from '@mailrail/platform/db/sql/time';
import { queueNames, type ContactImportJob } from '@mailrail/platform/queue/queues';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { parseOrThrow } from '../http/validate';
import { findTeamContactBook } from '../contact-books/service';
import { registerImportedProperties } from '../contact-properties/service';
import { uploadFields, type ImportView } from './schemas';
import { notUtf8, receiveCsvUpload } from './upload';

const importNotFound = () => new ApiError('NOT_FOUND', 'Import not found');
const SAMPLE_ROWS = 5;
const PROPERTY_PREFIX = 'properties.';
/** Rows of the preview read to suggest each column's type (the body is at most 64 KB). */
const DETECTION_ROWS = 100;
// The preview is the only reader of CSV in the API: csv-parse is loaded by the first upload.
const csvParseSync = loadOnFirstUse<typeof CsvParseSync>('csv-parse/sync');
const LIST_LIMIT = 50;
const REJECTS_PAGE = 5000;

// The wire view of an import, built in SQL (lower-case status, UTC ISO timestamps).
const viewSql = `i.id, i."contactBookId", i."fileName", lower(i.status::text) AS status, lower(i."onExisting"::text) AS "onExisting",
  i."rowsRead", i.created, i.updated, i.skipped, i.rejected, i.suppressed, i.error, ${isoUtcSql('i."createdAt"')} AS "createdAt",
  ${isoUtcSql('i."startedAt"')} AS "startedAt", ${isoUtcSql('i."finishedAt"')} AS "finishedAt"`;

interface CsvHead {
  headers: string[];
  sample: string[][];
  /** The rows read for type detection (the sample's and more). */
  rows: string[][];
}

/**
 * The header and first rows of a file's beginning. `complete` says whether the bytes are the whole
 * file: if not, a character or a row cut at the end is left out.
 */
function readCsvHead(bytes: Uint8Array, complete: boolean): CsvHead {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: !complete });
  } catch {
    throw notUtf8();
  }
  const records = csvParseSync().parse(text, importCsvOptions({ to: DETECTION_ROWS + 2, skip_records_with_error: true })) as string[][];
  // Without the file's end, the last record read may be cut in the middle.
  if (!complete && !text.endsWith('\n') && records.length > 1) records.pop();
  const [head, ...rows] = records;
  if (!head) throw badRequest('The file has no header row');
  // A header written formula-safe (an exported property "=x" is "'=x") names the column as it was.
  const headers = head.map(fromSpreadsheetSafe);
  if (headers.length > MAX_COLUMNS) throw badRequest(`The file has ${headers.length} columns; at most ${MAX_COLUMNS} are supported`);
  return { headers, sample: rows.slice(0, SAMPLE_ROWS), rows };
}

export async function previewImport(deps: ApiDeps, auth: AuthContext, contactBookId: string, body: Buffer) {
  await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const { headers, sample, rows } = readCsvHead(body, false);
  const types = Object.fromEntries(headers.map((h, i) => [h, detectPropertyType(rows.map((r) => r[i] ?? ''))]));
  return { headers, mapping: guessMapping(headers), sample, types };
}

/**
 * Takes an upload: the file goes into PostgreSQL as it streams (ContactImportChunk), the header
 * and the form fields are checked (400 with nothing kept when the file cannot be imported), then
 * the import is queued for the worker.
 */
export async function startImport(deps: ApiDeps, auth: AuthContext, contactBookId: string, req: Request): Promise<ImportView> {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const sql = prismaExecutor(deps.db);
  const id = newId();
  const { storedBytes } = await openImportWithinTeamCaps(deps, auth.teamId, { id, contactBookId: book.id }).catch((err: unknown) => {
    // The body is read and dropped, so the answer reaches a client still sending its file.
    req.resume();
    throw err;
  });
  const maxStoredBytes = deps.config.CONTACT_IMPORT_MAX_STORED_MB_PER_TEAM * 1024 * 1024;
  let uploadedBytes = 0;
  try {
    const upload = await receiveCsvUpload(req, {
      maxBytes: deps.config.CONTACT_IMPORT_MAX_MB * 1024 * 1024,
      storeChunk: async (seq, data) => {
        uploadedBytes += data.length;
        if (storedBytes + uploadedBytes > maxStoredBytes) throw storedBytesFull(deps);
        await storeImportChunk(sql, id, seq, data);
      },
    });
    const fields = parseOrThrow(uploadFields, upload.fields, 'form');
    const { headers } = readCsvHead(upload.head, upload.head.length === upload.bytes);
    const resolved = resolveColumns(headers, fields.mapping);
    if (!resolved.ok) throw badRequest(resolved.message);
    const columns = await registerPropertyColumns(deps, book, resolved.columns, fields.propertyTypes ?? {});
    const [view] = await sql.query<ImportView>(
      `UPDATE "ContactImport" i SET status = 'QUEUED', "fileName" = $2, columns = $3::jsonb, "onExisting" = $4::"ContactImportOnExisting", bytes = $5
       WHERE id = $1 RETURNING ${viewSql}`,
      [id, upload.fileName, JSON.stringify(columns), fields.onExisting.toUpperCase(), upload.bytes],
    );
    const job: ContactImportJob = { importId: id };
    await deps.queues.get(queueNames.contactImports).add('import', job, {
      jobId: id,
      attempts: deps.config.CONTACT_IMPORT_ATTEMPTS,
      backoff: { type: 'exponential', delay: 2000 },
    });
    return view;
  } catch (err) {
    await sql.execute(`DELETE FROM "ContactImport" WHERE id = $1`, [id]);
    throw err;
  }
}

/**
 * Adds the import's property columns to the book's registry with their confirmed types, and answers
 * the columns with each property named as the registry (or a book variable) spells it.
 */
async function registerPropertyColumns(
  deps: ApiDeps,
  book: { id: string; variables: string[] },
  columns: ImportTarget[],
  types: Record<string, PropertyType>,
): Promise<ImportTarget[]> {
  const named = columns.map((t) => (t.startsWith(PROPERTY_PREFIX) ? t.slice(PROPERTY_PREFIX.length) : null));
  const variables = new Map(book.variables.map((v) => [v.toLowerCase(), v]));
  const names = named.filter((n): n is string => n !== null).map((n) => variables.get(n.toLowerCase()) ?? n);
  if (names.length === 0) return columns;
  const typeOf = new Map(Object.entries(types).map(([k, v]) => [k.toLowerCase(), v]));
  const canonical = await registerImportedProperties(
    deps.db,
    book.id,
    names.map((name) => ({ name, type: typeOf.get(name.toLowerCase()) })),
  );
  return columns.map((t, i): ImportTarget => {
    const n = named[i];
    if (n === null) return t;
    const spelled = variables.get(n.toLowerCase()) ?? n;
    return `properties.${canonical.get(spelled) ?? spelled}`;
  });
}

const storedBytesFull = (deps: ApiDeps) =>
  new ApiError(
    'RATE_LIMITED',
    `This team's unfinished imports already keep ${deps.config.CONTACT_IMPORT_MAX_STORED_MB_PER_TEAM} MB of uploaded files, its limit: retry when one finishes`,
  );

/**
 * Counts the team's unfinished imports and the bytes their files keep stored, and opens this one
 * (UPLOADING) only within CONTACT_IMPORT_MAX_OPEN_PER_TEAM and CONTACT_IMPORT_MAX_STORED_MB_PER_TEAM
 * (429 past either). A per-team advisory lock makes the count and the insert one step, so
 * simultaneous uploads cannot all pass the count.
 */
async function openImportWithinTeamCaps(
  deps: ApiDeps,
  teamId: number,
  row: { id: string; contactBookId: string },
): Promise<{ storedBytes: number }> {
  return deps.db.$transaction(async (tx) => {
    const sql = prismaExecutor(tx);
    await sql.execute(`SELECT pg_advisory_xact_lock(hashtext('contact-import-caps'), $1::int)`, [teamId]);
    const [team] = await sql.query<{ open: number; storedBytes: string }>(
      `SELECT count(*)::int AS open,
              coalesce(sum((SELECT sum(octet_length(c.data)) FROM "ContactImportChunk" c WHERE c."importId" = i.id)), 0)::text AS "storedBytes"
         FROM "ContactImport" i JOIN "ContactBook" b ON b.id = i."contactBookId"
        WHERE b."teamId" = $1 AND i.status IN ('UPLOADING', 'QUEUED', 'RUNNING')`,
      [teamId],
    );
    const limit = deps.config.CONTACT_IMPORT_MAX_OPEN_PER_TEAM;
    if (team.open >= limit)
      throw new ApiError(
        'RATE_LIMITED',
        `This team already has ${limit} imports uploading, waiting or running, its limit: retry when one finishes`,
      );
    const storedBytes = Number(team.storedBytes);
    if (storedBytes >= deps.config.CONTACT_IMPORT_MAX_STORED_MB_PER_TEAM * 1024 * 1024) throw storedBytesFull(deps);
    await createUploadingImport(sql, { id: row.id, contactBookId: row.contactBookId, fileName: 'contacts.csv', now: deps.clock.now() });
    return { storedBytes };
  });
}

export async function listImports(deps: ApiDeps, auth: AuthContext, contactBookId: string): Promise<ImportView[]> {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  return prismaExecutor(deps.db).query<ImportView>(
    `SELECT ${viewSql} FROM "ContactImport" i WHERE i."contactBookId" = $1 AND i.status <> 'UPLOADING'
     ORDER BY i."createdAt" DESC, i.id DESC LIMIT ${LIST_LIMIT}`,
    [book.id],
  );
}

export async function getImport(deps: ApiDeps, auth: AuthContext, contactBookId: string, importId: string): Promise<ImportView> {
  const book = await findTeamContactBook(deps.db, auth.teamId, contactBookId);
  const [view] = await prismaExecutor(deps.db).query<ImportView>(
    `SELECT ${viewSql} FROM "ContactImport" i WHERE i.id = $1 AND i."contactBookId" = $2 AND i.status <> 'UPLOADING'`,
    [importId, book.id],
  );
  if (!view) throw importNotFound();
  return view;
}

/** The rejected rows as CSV (`line,reason,row`), read and sent a page at a time. */
export async function sendRejectsCsv(deps: ApiDeps, auth: AuthContext, contactBookId: string, importId: string, res: Response) {
  await getImport(deps, auth, contactBookId, importId);
  res.type('text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="import-${importId}-rejects.csv"`);
  res.write('line,reason,row\n');
  const sql = prismaExecutor(deps.db);
  for (let after = 0; ;) {
    const rows = await sql.query<{ line: number; reason: string; row: string }>(
      `SELECT line, reason, row FROM "ContactImportReject" WHERE "importId" = $1 AND line > $2 ORDER BY line LIMIT ${REJECTS_PAGE}`,
      [importId, after],
    );
    if (rows.length === 0) break;
    // Formula-safe cells: the row is the file's own text, opened in a spreadsheet.
    const text = rows.map((r) => `${r.line},${safeCsvCell(r.reason)},${safeCsvCell(r.row)}\n`).join('');
    if (!res.write(text)) await new Promise((resolve) => res.once('drain', resolve));
    after = rows[rows.length - 1].line;
    if (rows.length < REJECTS_PAGE) break;
  }
  res.end();
}
