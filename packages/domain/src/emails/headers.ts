// The one definition of which message headers belong to mailrail: the API refuses them in a send
// request's `headers`, and the worker's MIME builder drops them from stored custom headers (a
// second guard for rows written before a rule changed). A header the builder always sets itself
// must be here, or a client could send a message that says something else than what is sent.

/** The header that carries the email id in every message we send (useSend's name). */
export const EMAIL_ID_HEADER = 'X-Usesend-Email-ID';

/** Lower-case names that carry an email id: ours and the one older useSend (Unsend) sent. */
export const EMAIL_ID_HEADERS: ReadonlySet<string> = new Set([EMAIL_ID_HEADER.toLowerCase(), 'x-unsend-email-id']);

/**
 * Lower-case names of the headers that name who sends a message. SES checks every one of them
 * against the verified identities of the whole account, not of a team: each must therefore be
 * checked against the sending key's own domains before SES sees it (the API sets From itself and
 * refuses the others as custom headers; the SMTP relay checks them in the client's message).
 */
export const SENDER_HEADERS = ['from', 'sender', 'return-path'] as const;

/**
 * Lower-case header names a custom header may not set: the envelope and addresses, the MIME
 * structure, what SES or the signer sets (Return-Path, DKIM-Signature), and the email id headers.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  ...SENDER_HEADERS,
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'dkim-signature',
  ...EMAIL_ID_HEADERS,
]);

export const isReservedHeader = (name: string): boolean => RESERVED_HEADERS.has(name.toLowerCase());

/** A header name as RFC 7230/5322 allow it in practice: a token (linear, one character class). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A header value that cannot start another header line. */
export const isSafeHeaderValue = (value: string): boolean => !/[\r\n]/.test(value);

/** An SMTP client's own idempotency key for one message (the relay reads it; never sent on). */
export const SMTP_IDEMPOTENCY_HEADER = 'X-Mailrail-Idempotency-Key';

/**
 * Lower-case names of the headers taken out of a client's own MIME message (SMTP relay) before
 * it goes to SES; every other header, and the body, leave as the client wrote them. Bcc would
 * show the blind copies to every recipient (they travel in the envelope); the email id headers
 * are ours alone, so a client cannot claim another email's id; the idempotency key is for us.
 */
export const CLIENT_MESSAGE_DROPPED_HEADERS: ReadonlySet<string> = new Set([
  'bcc',
  ...EMAIL_ID_HEADERS,
  SMTP_IDEMPOTENCY_HEADER.toLowerCase(),
]);

/** Offset of the first byte of the empty line that ends a raw message's header block, or its length when there is none. */
export function headerBlockEnd(raw: Buffer): number {
  if (raw[0] === 0x0a || (raw[0] === 0x0d && raw[1] === 0x0a)) return 0;
  const crlf = raw.indexOf('\n\r\n');
  const lf = raw.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return ends.length ? Math.min(...ends) + 1 : raw.length;
}

/** The sender headers of a client's message (SENDER_HEADERS), each value unfolded, in order. */
export interface ClientSenderHeaders {
  from: string[];
  sender: string[];
  returnPath: string[];
}

export type ClientHeaderBlockProblem =
  /** A CR or an LF that is not part of a CRLF: readers disagree on where such a line ends. */
  | 'bare-line-break'
  /** Not exactly one From header: readers disagree on which one is the author. */
  | 'from-count';

/**
 * The header rule for a message a client wrote itself (SMTP): lines end in CRLF only, and one From
 * header. A bare CR or LF would let a line that this reader sees as part of a value be a header of
 * its own to SES or to a mailbox, and a second From would be checked by one reader and used by
 * another. The sender headers come back for the caller to hold to the key's domains.
 */
export function readClientHeaderBlock(
  raw: Buffer,
): { ok: true; senders: ClientSenderHeaders } | { ok: false; problem: ClientHeaderBlockProblem } {
  // latin1: one character per byte, so offsets and 8-bit bytes survive.
  const block = raw.toString('latin1', 0, headerBlockEnd(raw));
  for (let i = block.indexOf('\r'); i !== -1; i = block.indexOf('\r', i + 1)) {
    if (block[i + 1] !== '\n') return { ok: false, problem: 'bare-line-break' };
  }
  for (let i = block.indexOf('\n'); i !== -1; i = block.indexOf('\n', i + 1)) {
    if (block[i - 1] !== '\r') return { ok: false, problem: 'bare-line-break' };
  }
  const senders: ClientSenderHeaders = { from: [], sender: [], returnPath: [] };
  let field = '';
  const take = () => {
    const colon = field.indexOf(':');
    // Named as the worker and mailparser name a field: trimmed, case-insensitive.
    const name = colon < 0 ? '' : field.slice(0, colon).trim().toLowerCase();
    const value = field.slice(colon + 1).trim();
    if (name === 'from') senders.from.push(value);
    else if (name === 'sender') senders.sender.push(value);
    else if (name === 'return-path') senders.returnPath.push(value);
  };
  for (const line of block.split('\r\n')) {
    if (line.startsWith(' ') || line.startsWith('\t')) field += line;
    else {
      if (field) take();
      field = line;
    }
  }
  if (field) take();
  if (senders.from.length !== 1) return { ok: false, problem: 'from-count' };
  return { ok: true, senders };
}
