import { MAX_RECORD_BYTES, MAX_REJECT_ROW_LENGTH } from '@mailrail/domain/audience/imports/csv-format';

// csv-parse stops for good at a record over its max_record_size: with skip_records_with_error it
// reports that record and then drops every later one, so the import ended `completed` without
// them. This pass in front of it finds such a record itself (quote-aware, as csv-parse reads),
// reports it, and hands csv-parse its line breaks only (blank lines, skipped), so line numbers stay
// right and every later record is read. A lost quote makes the rest of its line the oversized
// record; reading resumes at the next line break.

export interface OversizedRecord {
  /** The line the record starts on (1-based, as an editor shows it). */
  line: number;
  /** Its first MAX_REJECT_ROW_LENGTH characters. */
  head: string;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

export async function* withoutOversizedRecords(
  text: AsyncIterable<string>,
  onOversized: (record: OversizedRecord) => void,
  maxRecordLength = MAX_RECORD_BYTES,
): AsyncGenerator<string> {
  let carry = ''; // the current record's text so far (at most maxRecordLength)
  let inQuotes = false;
  let quoteJustClosed = false; // a quote inside quotes: `""` is an escaped quote, anything else closes
  let fieldStart = true;
  let skipping = false; // inside an oversized record, until its line ends
  let line = 1; // the line the scan is on
  let recordLine = 1; // the line the current record started on
  let droppedBreaks = 0; // line breaks inside the oversized record, handed on as blank lines
  for await (const piece of text) {
    const buf = carry + piece;
    let out = '';
    let emitFrom = 0; // text before the current record not handed on yet
    let recordStart = 0;
    for (let i = carry.length; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c === LF) line++;
      if (skipping) {
        if (c !== LF) continue;
        skipping = false;
        out += '\n'.repeat(droppedBreaks + 1);
        droppedBreaks = 0;
        emitFrom = recordStart = i + 1;
        recordLine = line;
        inQuotes = quoteJustClosed = false;
        fieldStart = true;
        continue;
      }
      if (quoteJustClosed) {
        quoteJustClosed = false;
        if (c === QUOTE) {
          inQuotes = true;
          continue;
        }
      }
      if (inQuotes) {
        if (c === QUOTE) {
          inQuotes = false;
          quoteJustClosed = true;
        }
      } else if (c === QUOTE && fieldStart) {
        inQuotes = true;
        fieldStart = false;
      } else if (c === COMMA) {
        fieldStart = true;
      } else if (c === LF || c === CR) {
        fieldStart = true;
        recordStart = i + 1;
        recordLine = line;
        continue;
      } else {
        fieldStart = false;
      }
      if (i + 1 - recordStart > maxRecordLength) {
        const record = buf.slice(recordStart, i + 1);
        onOversized({ line: recordLine, head: `${record.slice(0, MAX_REJECT_ROW_LENGTH)}…` });
        out += buf.slice(emitFrom, recordStart);
        droppedBreaks = countLineFeeds(record);
        skipping = true;
      }
    }
    if (skipping) {
      carry = '';
    } else {
      // The current record waits in `carry` for its end (or its cut); what came before goes on.
      out += buf.slice(emitFrom, recordStart);
      carry = buf.slice(recordStart);
    }
    if (out) yield out;
  }
  if (skipping) yield '\n'.repeat(droppedBreaks);
  else if (carry) yield carry;
}

function countLineFeeds(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
