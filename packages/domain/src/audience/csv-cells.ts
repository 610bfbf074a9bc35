// CSV cells that mailrail writes (the contacts export, the import rejects report) and reads back
// (imports): RFC 4180 quoting, and the spreadsheet formula-injection guard (OWASP "CSV injection").
//
// A spreadsheet opening a CSV runs a cell that starts with `=`, `+`, `-` or `@` (and, in some, a tab
// or CR before one) as a formula, so a contact named `=HYPERLINK(...)` would act in the reader's
// spreadsheet. Such a cell is written with a leading `'`, which spreadsheets show as text. The guard
// also escapes cells that already start with `'` before one of those characters, so reading a cell
// back (fromSpreadsheetSafe, applied by imports) restores exactly what was written: an exported
// file re-imports to the same values.

/** `'`s, then one of the characters that make a spreadsheet read a cell as a formula. */
const ESCAPED = /^'*[-=+@\t\r]/;
/** What spreadsheetSafe wrote: one `'` more before the same. */
const UNESCAPE = /^'+[-=+@\t\r]/;

/** The cell as a spreadsheet shows it as text: a leading `'` when it would start a formula. */
export function spreadsheetSafe(value: string): string {
  return ESCAPED.test(value) ? `'${value}` : value;
}

/** The inverse of spreadsheetSafe: the one `'` it added goes; any other leading `'` is plain text. */
export function fromSpreadsheetSafe(value: string): string {
  return UNESCAPE.test(value) ? value.slice(1) : value;
}

/** One CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180). */
export function csvField(value: string | number): string {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One cell of a file people open in a spreadsheet: formula-safe, then quoted as needed. */
export function safeCsvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  return csvField(typeof value === 'string' ? spreadsheetSafe(value) : value);
}

/**
 * The SQL of safeCsvCell over a text expression (for CSV built by PostgreSQL); NULL is the empty
 * field. The same two rules: `'` before a formula start, then RFC 4180 quoting.
 */
export function safeCsvCellSql(sqlExpr: string): string {
  const expr = `(${sqlExpr})`; // `'x' || a ->> b` would bind as `('x' || a) ->> b`
  const safe = `(CASE WHEN ${expr} ~ ('^''*[-=+@' || chr(9) || chr(13) || ']') THEN '''' || ${expr} ELSE ${expr} END)`;
  return `(CASE WHEN ${safe} ~ ('[",' || chr(13) || chr(10) || ']') THEN '"' || replace(${safe}, '"', '""') || '"' ELSE coalesce(${safe}, '') END)`;
}
