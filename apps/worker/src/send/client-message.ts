import { CLIENT_MESSAGE_DROPPED_HEADERS, EMAIL_ID_HEADER, headerBlockEnd } from '@mailrail/domain/emails/headers';

// A message an SMTP client wrote itself (Email.rawMessage) goes to SES byte for byte, except for
// its header block: our email id header first, and the headers core's headers.ts lists as
// dropped taken out. Bodies, MIME structure, attachments and every other header are untouched.

/** The header fields of a header block, each with its continuation lines and line ends. */
function headerFields(block: string): string[] {
  const fields: string[] = [];
  // Split after each LF so that every piece keeps its own line end (CRLF or a bare LF).
  for (const line of block.split(/(?<=\n)/)) {
    const folded = line.startsWith(' ') || line.startsWith('\t');
    if (folded && fields.length) fields[fields.length - 1] += line;
    else fields.push(line);
  }
  return fields;
}

const fieldName = (field: string) => {
  const colon = field.indexOf(':');
  return colon < 0 ? '' : field.slice(0, colon).trim().toLowerCase();
};

/** The client's message as SES gets it: our email id header added, the dropped headers removed. */
export function clientMessageForSes(raw: Buffer, emailId: string): Buffer {
  const end = headerBlockEnd(raw);
  // latin1 maps every byte to one character and back: 8-bit header bytes survive unchanged.
  const block = raw.subarray(0, end).toString('latin1');
  const eol = /^[^\n]*\r\n/.test(block) || end === 0 ? '\r\n' : '\n';
  const kept = headerFields(block).filter((f) => !CLIENT_MESSAGE_DROPPED_HEADERS.has(fieldName(f)));
  const head = Buffer.from(`${EMAIL_ID_HEADER}: ${emailId}${eol}${kept.join('')}`, 'latin1');
  return Buffer.concat([head, raw.subarray(end)]);
}
