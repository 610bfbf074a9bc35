import type { Options } from 'csv-parse';

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

/** The line a record starts on, from the line it ends on (csv-parse's info.lines) and its raw text. */
export function recordStartLine(endLine: number, raw: string): number {
  let breaks = 0;
  const body = raw.endsWith('\n') ? raw.slice(0, -1) : raw;
  for (let i = body.indexOf('\n'); i !== -1; i = body.indexOf('\n', i + 1)) breaks++;
  return endLine - breaks;
}

/** A record's text for the rejects report: without its line break, cut to MAX_REJECT_ROW_LENGTH. */
export function rejectRowText(raw: string): string {
  let start = 0;
  let end = raw.length;
  while (start < end && (raw[start] === '\n' || raw[start] === '\r')) start++;
  while (end > start && (raw[end - 1] === '\n' || raw[end - 1] === '\r')) end--;
  const text = raw.slice(start, end);
  return text.length > MAX_REJECT_ROW_LENGTH ? `${text.slice(0, MAX_REJECT_ROW_LENGTH)}…` : text;
}

/** One CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180). */
export function csvField(value: string | number): string {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
