import { Readable } from 'node:stream';
import type * as CsvParse from 'csv-parse';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';
import { rowToContact, type ImportTarget as ColumnTarget } from '@mailrail/domain/audience/imports/csv-mapping';
import type { PropertyType } from '@mailrail/domain/audience/properties/contact-properties';
import { importCsvOptions, lineBreaksInside, MAX_RECORD_BYTES, rejectRowText } from '@mailrail/domain/audience/imports/csv-format';
import type { Clock } from '@mailrail/platform/clock';
import type { TransactionalSqlExecutor } from '@mailrail/platform/db/sql/executor';
import { ImportFileError, importFileText } from './import-file';
import { withoutOversizedRecords } from './oversized-records';
import { writeImportBatch, type ImportBatch, type ImportReject, type ImportTarget } from './write-import-batch';

// Only an import job parses CSV: the worker loads csv-parse when the first one runs.
const csvParse = loadOnFirstUse<typeof CsvParse>('csv-parse');

// One CSV import, top to bottom: read the stored file as UTF-8 text, parse it as a stream, check
// each row with the contacts API's rule, and commit batches whose counters and checkpoint move in
// the same transaction. A retried job (crash, lost lock) starts again from the file's first byte
// and skips the records the checkpoint covers, so nothing is counted twice.

export interface ContactImportPorts {
  sql: TransactionalSqlExecutor;
  clock: Clock;
  batchSize: number;
  /** Test seam: called after each committed batch (a test throws here to play a crash). */
  afterBatch?: (committedRecords: number) => void | Promise<void>;
  /**
   * Asked after each batch this run committed (with their number): true makes the run stop there
   * (ImportYield) so that imports waiting for a place go first; the job resumes from the checkpoint.
   */
  shouldYield?: (batchesThisRun: number) => boolean | Promise<boolean>;
}

/** The run stepped back after a committed batch to let other imports run; nothing is lost. */
export class ImportYield extends Error {}

/** PostgreSQL text cannot hold U+0000: a row with one is reported, and its text shown without it. */
const NUL = '\u0000';
const withoutNul = (text: string) => (text.includes(NUL) ? text.split(NUL).join('\ufffd') : text);

interface ImportRow {
  id: string;
  contactBookId: string;
  status: string;
  onExisting: 'SKIP' | 'UPDATE';
  columns: ColumnTarget[];
  checkpointRecords: number;
  teamId: number;
  variables: string[];
  /** The book's typed properties (name → type), read when the run starts. */
  propertyTypes: Record<string, PropertyType>;
  emitEvents: boolean;
}

const CONTACT_EVENTS = ['contact.created', 'contact.updated'];

/** Claims a QUEUED or RUNNING import for this run; null when there is nothing to do. */
async function startImport(ports: ContactImportPorts, importId: string): Promise<ImportRow | null> {
  const [row] = await ports.sql.query<ImportRow>(
    `UPDATE "ContactImport" i SET status = 'RUNNING', "startedAt" = coalesce(i."startedAt", $2::timestamptz)
     FROM "ContactBook" b
     WHERE i.id = $1 AND i.status IN ('QUEUED', 'RUNNING') AND b.id = i."contactBookId"
     RETURNING i.id, i."contactBookId", i.status, i."onExisting", i.columns, i."checkpointRecords", b."teamId", b.variables,
       (SELECT coalesce(jsonb_object_agg(p.name, lower(p.type::text)), '{}'::jsonb) FROM "ContactProperty" p
         WHERE p."contactBookId" = b.id) AS "propertyTypes",
       EXISTS (SELECT 1 FROM "Webhook" w WHERE w."teamId" = b."teamId" AND w.status = 'ACTIVE'
               AND (cardinality(w.events) = 0 OR w.events && $3::text[])) AS "emitEvents"`,
    [importId, ports.clock.now(), CONTACT_EVENTS],
  );
  return row ?? null;
}

/** Ends an import (COMPLETED, or FAILED with a reason) and drops its file; the rejects stay. */
export async function finishImport(sql: TransactionalSqlExecutor, importId: string, now: Date, error: string | null): Promise<void> {
  await sql.transaction(async (tx) => {
    await tx.execute(
      `UPDATE "ContactImport" SET status = $2::"ContactImportStatus", error = $3, "finishedAt" = $4
       WHERE id = $1 AND status IN ('QUEUED', 'RUNNING')`,
      [importId, error === null ? 'COMPLETED' : 'FAILED', error, now],
    );
    await tx.execute(`DELETE FROM "ContactImportChunk" WHERE "importId" = $1`, [importId]);
  });
}

interface ParsedRecord {
  record: string[];
  info: { lines: number };
}

/** Runs (or resumes) one import to its end. Errors other than ImportFileError are left to the job's retries. */
export async function runContactImport(ports: ContactImportPorts, importId: string): Promise<{ status: string } | null> {
  const row = await startImport(ports, importId);
  if (!row) return null;
  const target: ImportTarget = {
    importId,
    contactBookId: row.contactBookId,
    teamId: row.teamId,
    variables: row.variables,
    onExisting: row.onExisting,
    emitEvents: row.emitEvents,
  };
  try {
    await importRecords(ports, row, target);
  } catch (err) {
    if (!(err instanceof ImportFileError)) throw err;
    await finishImport(ports.sql, importId, ports.clock.now(), err.message);
    return { status: 'FAILED' };
  }
  await finishImport(ports.sql, importId, ports.clock.now(), null);
  return { status: 'COMPLETED' };
}

async function importRecords(ports: ContactImportPorts, row: ImportRow, target: ImportTarget): Promise<void> {
  // Rows csv-parse could not read (a broken quote, a record over the size cap): rejected, in
  // line order with the others (they are reported as they are met, before any later record).
  const parseErrors: ImportReject[] = [];
  let crlfSeen = 0; // CRLF pairs inside quoted fields so far (csv-parse counts each as two lines)
  const parser = csvParse().parse(
    importCsvOptions({
      // info gives each record's last line; csv-parse's `raw` would cost about as much again per row,
      // so a record it could not read is reported without its text.
      info: true,
      skip_records_with_error: true,
      on_skip: (err: CsvParse.CsvError | undefined) => {
        if (err)
          addParseError({
            line: Number(err.lines) - crlfSeen,
            reason: `Not valid CSV: ${err.message.replace(/^Invalid [^:]*: /, '')}`,
            row: '',
          });
      },
    }),
  );
  // In line order: a record found too long before csv-parse reads its chunk comes before that chunk's errors.
  const addParseError = (reject: ImportReject) => {
    let at = parseErrors.length;
    while (at > 0 && parseErrors[at - 1].line > reject.line) at--;
    parseErrors.splice(at, 0, reject);
  };
  const text = withoutOversizedRecords(importFileText(ports.sql, row.id), (oversized) =>
    addParseError({
      line: oversized.line,
      reason: `Not valid CSV: the record is longer than ${MAX_RECORD_BYTES / 1024} KB (a quote left open?); the next line is read as the next record`,
      row: withoutNul(oversized.head),
    }),
  );
  const source = Readable.from(text);
  source.on('error', (err) => parser.destroy(err));
  source.pipe(parser);

  let header = true;
  let record = 0; // data records met so far (the checkpoint counts these)
  let committed = row.checkpointRecords;
  let batch: ImportBatch = { contacts: [], rejects: [], records: 0 };
  let writing: Promise<void> = Promise.resolve();
  let batchesThisRun = 0;

  // One batch is written while the next is parsed; batches commit in order.
  const flush = async () => {
    const done = batch;
    batch = { contacts: [], rejects: [], records: 0 };
    await writing;
    const from = committed;
    committed += done.records;
    writing = writeImportBatch(ports.sql, target, done, from, ports.clock.now()).then(async () => {
      await ports.afterBatch?.(committed);
      if (await ports.shouldYield?.(++batchesThisRun))
        throw new ImportYield(`import ${target.importId} steps back after ${committed} records`);
    });
    // An unhandled rejection must not escape while the next batch is parsed; it is awaited below.
    writing.catch(() => undefined);
  };
  const takeReject = (reject: ImportReject) => {
    if (record++ < row.checkpointRecords) return;
    batch.rejects.push(reject);
    batch.records++;
  };

  for await (const out of parser as AsyncIterable<ParsedRecord>) {
    const inside = lineBreaksInside(out.record);
    crlfSeen += inside.crlf;
    const line = out.info.lines - crlfSeen - inside.breaks;
    while (parseErrors.length && parseErrors[0].line < line) takeReject(parseErrors.shift()!);
    if (header) {
      header = false;
      if (out.record.length !== row.columns.length) throw new ImportFileError('The header of the file changed since it was uploaded');
      continue;
    }
    if (record++ < row.checkpointRecords) continue;
    const result = out.record.some((cell) => cell.includes(NUL))
      ? { ok: false as const, reason: 'The row contains a NUL character (byte 0), which a contact cannot hold' }
      : rowToContact(row.columns, out.record, row.propertyTypes);
    if (result.ok) batch.contacts.push(result.contact);
    else batch.rejects.push({ line, reason: result.reason, row: withoutNul(rejectRowText(out.record)) });
    batch.records++;
    if (batch.records >= ports.batchSize) await flush();
  }
  for (const reject of parseErrors.splice(0)) takeReject(reject);
  if (header) throw new ImportFileError('The file is empty');
  if (batch.records > 0) await flush();
  await writing;
}
