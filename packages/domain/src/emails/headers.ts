// The one definition of which message headers belong to mailrail: the API refuses them in a send
// request's `headers`, and the worker's MIME builder drops them from stored custom headers (a
// second guard for rows written before a rule changed). A header the builder always sets itself
// must be here, or a client could send a message that says something else than what is sent.

/** The header that carries the email id in every message we send (useSend's name). */
export const EMAIL_ID_HEADER = 'X-Usesend-Email-ID';

/** Lower-case names that carry an email id: ours and the one older useSend (Unsend) sent. */
export const EMAIL_ID_HEADERS: ReadonlySet<string> = new Set([EMAIL_ID_HEADER.toLowerCase(), 'x-unsend-email-id']);

/**
 * Lower-case header names a custom header may not set: the envelope and addresses, the MIME
 * structure, what SES or the signer sets (Return-Path, DKIM-Signature), and the email id headers.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'return-path',
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
