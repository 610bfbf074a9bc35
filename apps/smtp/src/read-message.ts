import libmime from 'libmime';
import { decode as decodeQuotedPrintable } from 'libqp';
import { parseAddressHeader, simpleParser, type AddressObject } from 'mailparser';
import type { AttachmentSummary } from '@mailrail/domain/emails/attachment-list';

// What the relay reads from a message to fill the email's row: the header fields, and the html
// and text bodies (GET /api/v1/emails shows them). The message itself is stored as received.
//
// mailparser reads everything (every header of every part, attachments into buffers), which was
// a tenth of the relay's CPU per message. Most messages are one of three simple shapes: a text
// body, an html body, or multipart/alternative with one of each, in UTF-8 or ASCII, 7bit, 8bit or
// quoted-printable. Those are read here in one linear pass, with mailparser's own functions for
// each header (libmime's decoding, mailparser's address parser), so the fields come out as
// mailparser gives them (read-message.test.ts compares the two). Any other shape (attachments,
// inline images, nested parts, other charsets or encodings, format=flowed, anything unexpected)
// goes to mailparser as before.

export interface MessageAddress {
  name: string;
  address: string;
}

export interface MessageFields {
  from: MessageAddress[];
  to: MessageAddress[];
  cc: MessageAddress[];
  replyTo: MessageAddress[];
  subject: string | undefined;
  messageId: string | undefined;
  /** The X-Mailrail-Idempotency-Key header: undefined without one, an array when repeated. */
  idempotencyKey: string | string[] | undefined;
  html: string | undefined;
  text: string | undefined;
  /** Name, type and size of each attached file (the email page lists them); inline images of the html left out. */
  attachments: AttachmentSummary[];
}

const PARSE_OPTIONS = {
  // Only what the row shows: no conversions, no data: URIs for inline images, no checksums.
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipImageLinks: true,
  skipTextLinks: true,
  keepCidLinks: true,
  checksumAlgo: false as const,
};

/** Addresses of an address header as mailparser gives it (one object, or one per repeated header), groups flattened. */
function addressesOf(header: AddressObject | AddressObject[] | undefined): MessageAddress[] {
  const objects = Array.isArray(header) ? header : header ? [header] : [];
  return objects.flatMap((o) =>
    o.value.flatMap((a) => (a.group ?? [a]).filter((g) => !!g.address).map((g) => ({ name: g.name, address: g.address! }))),
  );
}

/** The addresses of one address header value (as written, folding and all), by mailparser's address parser. */
export function readAddressHeader(value: string): MessageAddress[] {
  return addressesOf(parseAddressHeader([value]));
}

/** The fields through mailparser: any message. Exported for read-message.test.ts. */
export async function readWithMailparser(raw: Buffer, idempotencyHeader: string): Promise<MessageFields> {
  const parsed = await simpleParser(raw, PARSE_OPTIONS);
  const key = parsed.headers.get(idempotencyHeader);
  return {
    from: addressesOf(parsed.from),
    to: addressesOf(parsed.to),
    cc: addressesOf(parsed.cc),
    replyTo: addressesOf(parsed.replyTo),
    subject: parsed.subject,
    messageId: parsed.messageId,
    idempotencyKey: key === undefined ? undefined : typeof key === 'string' ? key : Array.isArray(key) ? (key as string[]) : [],
    // mailparser answers an empty text for an html-only message (its html-to-text skipped).
    html: parsed.html || undefined,
    text: parsed.text || undefined,
    attachments: parsed.attachments
      .filter((a) => !a.related)
      .map((a) => ({ filename: (a.filename ?? 'unnamed').slice(0, MAX_ATTACHMENT_NAME), contentType: a.contentType, size: a.size })),
  };
}

// As the send API's cap on an attachment's name.
const MAX_ATTACHMENT_NAME = 255;
const CRLF = '\r\n';
const HEADER_END = '\r\n\r\n';
const SIMPLE_ENCODINGS = new Set(['', '7bit', '8bit', 'binary', 'quoted-printable']);
const UTF8_CHARSETS = new Set(['ascii', 'usascii', 'utf8']);

/** A header block (latin1, CRLF lines) as [lower-case name, raw value] in order, unfolded as libmime does; null when a line is not a header. */
function headerLines(block: string): [string, string][] | null {
  const out: [string, string][] = [];
  let start = 0;
  while (start < block.length) {
    // A logical line ends at a CRLF not followed by a space or tab (folding).
    let end = block.indexOf(CRLF, start);
    while (end !== -1 && (block[end + 2] === ' ' || block[end + 2] === '\t')) end = block.indexOf(CRLF, end + 2);
    if (end === -1) end = block.length;
    const line = block.slice(start, end);
    start = end + 2;
    if (line[0] === ' ' || line[0] === '\t' || line.indexOf(':') < 1) return null;
    const { key, value } = libmime.decodeHeader(line);
    // 8-bit header bytes are UTF-8, as mailparser reads them.
    out.push([key, Buffer.from(value, 'binary').toString()]);
  }
  return out;
}

interface Leaf {
  contentType: string;
  body: string;
}

/** A text leaf's content as mailparser gives it, or null when this path does not take it. */
function leafText(headers: [string, string][], body: string): Leaf | null {
  let contentType: string | undefined;
  let charset = '';
  let encoding = '';
  for (const [key, value] of headers) {
    if (key === 'content-disposition') return null;
    if (key === 'content-type' && contentType === undefined) {
      const parsed = libmime.parseHeaderValue(value, { stripComments: true });
      contentType = parsed.value.toLowerCase().trim();
      for (const param of Object.keys(parsed.params)) {
        if (param === 'charset') charset = parsed.params[param].toLowerCase().replace(/[^a-z0-9]+/g, '');
        else if (param === 'format' || param === 'delsp') return null;
      }
    }
    if (key === 'content-transfer-encoding' && !encoding) encoding = value.toLowerCase().trim();
  }
  if (contentType !== 'text/plain' && contentType !== 'text/html') return null;
  if (charset && !UTF8_CHARSETS.has(charset)) return null;
  if (!SIMPLE_ENCODINGS.has(encoding)) return null;
  const bytes = encoding === 'quoted-printable' ? decodeQuotedPrintable(body) : Buffer.from(body, 'binary');
  return { contentType, body: bytes.toString().replace(/\r?\n/g, '\n') };
}

/** The parts of a multipart body (latin1) between its delimiters, or null when the structure is not plain. */
function multipartParts(body: string, boundary: string): string[] | null {
  const delimiter = `--${boundary}`;
  const parts: string[] = [];
  // The CRLF before a delimiter line belongs to the delimiter; the first line may be one.
  let lineStart = body.startsWith(delimiter) ? 0 : body.indexOf(CRLF + delimiter) + 2;
  if (lineStart === 1) return null;
  let contentStart = -1;
  for (;;) {
    if (contentStart !== -1) parts.push(body.slice(contentStart, Math.max(contentStart, lineStart - 2)));
    const afterDelimiter = lineStart + delimiter.length;
    if (body.startsWith('--', afterDelimiter)) return parts.length > 0 ? parts : null;
    const lineEnd = body.indexOf(CRLF, afterDelimiter);
    if (lineEnd === -1 || body.slice(afterDelimiter, lineEnd).trim() !== '') return null;
    contentStart = lineEnd + 2;
    lineStart = body.indexOf(CRLF + delimiter, lineEnd) + 2;
    if (lineStart === 1) return null;
  }
}

/** The fields of a message of one of the simple shapes; null for any other. Exported for read-message.test.ts. */
export function readSimple(raw: Buffer, idempotencyHeader: string): MessageFields | null {
  const headerEnd = raw.indexOf(HEADER_END);
  if (headerEnd < 1) return null;
  const headerBlock = raw.toString('binary', 0, headerEnd);
  // A bare-LF message is mailparser's to read.
  if (headerBlock.replaceAll(CRLF, '').includes('\n')) return null;
  const headers = headerLines(headerBlock);
  if (!headers) return null;
  const body = raw.toString('binary', headerEnd + HEADER_END.length);

  const first = (key: string) => headers.find(([k, v]) => k === key && v !== '')?.[1];
  const all = (key: string) => headers.filter(([k, v]) => k === key && v !== '').map(([, v]) => v);
  const decodeWords = (value: string | undefined) => {
    if (value === undefined) return undefined;
    try {
      return libmime.decodeWords(value);
    } catch {
      return value;
    }
  };
  const addresses = (values: string[]) => addressesOf(values.length ? parseAddressHeader(values) : undefined);

  let leaves: Leaf[];
  const contentType = first('content-type');
  const root = contentType === undefined ? null : libmime.parseHeaderValue(contentType, { stripComments: true });
  if (root && root.value.toLowerCase().trim() === 'multipart/alternative') {
    if (first('content-disposition') !== undefined) return null;
    const boundary = root.params.boundary;
    if (!boundary) return null;
    const parts = multipartParts(body, boundary);
    if (!parts || parts.length > 2) return null;
    leaves = [];
    for (const part of parts) {
      const partHeaderEnd = part.indexOf(HEADER_END);
      if (partHeaderEnd < 1) return null;
      const partHeaders = headerLines(part.slice(0, partHeaderEnd));
      const leaf = partHeaders && leafText(partHeaders, part.slice(partHeaderEnd + HEADER_END.length));
      if (!leaf || leaves.some((l) => l.contentType === leaf.contentType)) return null;
      leaves.push(leaf);
    }
  } else {
    // A message without Content-Type is text/plain.
    const leaf = leafText(contentType === undefined ? [['content-type', 'text/plain'], ...headers] : headers, body);
    if (!leaf) return null;
    leaves = [leaf];
  }
  const html = leaves.find((l) => l.contentType === 'text/html')?.body;
  const text = leaves.find((l) => l.contentType === 'text/plain')?.body;
  const messageId = decodeWords(first('message-id'));
  const keys = all(idempotencyHeader);
  return {
    from: addresses(first('from') === undefined ? [] : [first('from')!]),
    to: addresses(all('to')),
    cc: addresses(all('cc')),
    replyTo: addresses(first('reply-to') === undefined ? [] : [first('reply-to')!]),
    subject: decodeWords(first('subject')),
    messageId: messageId ? `${messageId.startsWith('<') ? '' : '<'}${messageId}${messageId.endsWith('>') ? '' : '>'}` : undefined,
    idempotencyKey: keys.length === 0 ? undefined : keys.length === 1 ? keys[0] : keys,
    html,
    text,
    // The simple shapes are bodies only.
    attachments: [],
  };
}

/** The row's fields of a message: the linear path for the simple shapes, mailparser for the rest. */
export async function readMessage(raw: Buffer, idempotencyHeader: string): Promise<MessageFields> {
  return readSimple(raw, idempotencyHeader.toLowerCase()) ?? readWithMailparser(raw, idempotencyHeader.toLowerCase());
}
