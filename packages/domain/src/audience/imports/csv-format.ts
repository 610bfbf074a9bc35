import type { Options } from 'csv-parse';
import { csvField } from '@mailrail/domain/audience/csv-cells';

// The CSV dialect of contact imports, one definition for the API's preview and upload checks and
// the worker's import: RFC 4180 quoting (fields with commas, quotes and line breaks), CRLF or LF,
// a UTF-8 BOM dropped, blank lines skipped, a stray quote inside an unquoted field taken as text.

/** A record (one contact row) larger than this is an error, so a lost quote cannot swallow the file. */
export const MAX_RECORD_BYTES = 64 * 1024;
/** The text of a rejected row kept for the report. */
export const MAX_REJECT_ROW_LENGTH = 1000;

export function importCsvOptions(extra: Options = {}): Options {
  return {
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    relax_quotes: true,
    max_record_size: MAX_RECORD_BYTES,
    ...extra,
  };
}

/**
 * Line breaks inside a record's quoted fields: `breaks` counts each one once (CRLF or LF), `crlf`
 * the CRLF pairs, which csv-parse's `info.lines` counts twice. With both, a record's lines are
 * counted the way an editor shows them.
 */
export function lineBreaksInside(cells: readonly string[]): { breaks: number; crlf: number } {
  let breaks = 0;
  let crlf = 0;
  for (const cell of cells) {
    for (let i = cell.indexOf('\n'); i !== -1; i = cell.indexOf('\n', i + 1)) {
      breaks++;
      if (i > 0 && cell[i - 1] === '\r') crlf++;
    }
  }
  return { breaks, crlf };
}

/** A rejected record's text for the report: its fields written back as CSV, cut at MAX_REJECT_ROW_LENGTH. */
export function rejectRowText(cells: readonly string[]): string {
  const text = cells.map(csvField).join(',');
  return text.length > MAX_REJECT_ROW_LENGTH ? `${text.slice(0, MAX_REJECT_ROW_LENGTH)}…` : text;
}
