import type { SMTPServerError } from 'smtp-server';
import type { MessageOutcome } from './smtp-metrics';

// Every reply the relay chooses itself, with its RFC 3463 enhanced status code written into the
// text (smtp-server's automatic enhanced codes are off: they would name 5.1.1 "mailbox unknown"
// for a sender-domain refusal). smtp-server sends `responseCode` and the message as the reply.

export class SmtpReply extends Error implements SMTPServerError {
  constructor(
    readonly responseCode: number,
    enhanced: string,
    text: string,
    /** How the message transaction ends when this is the answer to MAIL FROM or DATA (metrics). */
    readonly outcome: MessageOutcome = 'invalid-message',
  ) {
    super(`${enhanced} ${text}`);
  }
}

/** What the client reads after AUTH, MAIL FROM, RCPT TO or the end of DATA. */
export const reply = {
  accepted: (emailId: string) => `2.0.0 OK ${emailId}`,
  authRequired: '5.7.0 Authentication required',
  badCredentials: () =>
    new SmtpReply(535, '5.7.8', 'Authentication credentials invalid: the username is mailrail (or usesend), the password an API key'),
  tooManyAuthFailures: (retryAfter: number) =>
    new SmtpReply(421, '4.7.0', `Too many failed authentications from this address, try again in ${retryAfter} seconds`),
  encryptionRequired: () => new SmtpReply(538, '5.7.11', 'Encryption required: use STARTTLS or the implicit TLS port'),
  authUnavailable: () => new SmtpReply(454, '4.7.0', 'Temporary authentication failure, try again'),
  senderRequired: () => new SmtpReply(553, '5.1.7', 'A sender address is required', 'sender-refused'),
  badSenderAddress: () => new SmtpReply(553, '5.1.7', 'The sender address is not valid', 'sender-refused'),
  /** MAIL FROM of a domain this key may not send from. */
  envelopeSenderRefused: (message: string) => new SmtpReply(553, '5.7.1', message, 'sender-refused'),
  /** The From header of a domain this key may not send from. */
  headerSenderRefused: (message: string) => new SmtpReply(550, '5.7.1', message, 'sender-refused'),
  oneFromAddress: () => new SmtpReply(550, '5.6.0', 'The message needs exactly one From address'),
  badRecipientAddress: () => new SmtpReply(553, '5.1.3', 'The recipient address is not valid'),
  tooManyRecipients: (max: number) => new SmtpReply(452, '4.5.3', `Too many recipients: at most ${max} per message`),
  tooLarge: (maxBytes: number) => new SmtpReply(552, '5.3.4', `Message too large: the limit is ${maxBytes} bytes`, 'too-large'),
  rateLimited: (limit: number, retryAfter: number) =>
    new SmtpReply(
      454,
      '4.7.0',
      `Throttling failure: the team's limit of ${limit} messages per second is exceeded, try again in ${retryAfter} seconds`,
      'rate-limited',
    ),
  idempotencyKeyInvalid: () => new SmtpReply(550, '5.6.0', 'X-Mailrail-Idempotency-Key must be 1 to 256 characters'),
  idempotencyKeyReused: () => new SmtpReply(554, '5.6.0', 'X-Mailrail-Idempotency-Key was already used for a different message'),
  idempotencyKeyBusy: () =>
    new SmtpReply(451, '4.3.0', 'A message with the same idempotency key is being accepted, try again', 'temporary-failure'),
  /** PostgreSQL or Redis unavailable, or anything unexpected: nothing was stored, the client retries. */
  temporaryFailure: () => new SmtpReply(451, '4.3.0', 'Temporary failure, nothing was stored: try again', 'temporary-failure'),
  shuttingDown: '4.3.2 Server shutting down, try again',
  tooManyConnections: (max: number) =>
    new SmtpReply(421, '4.7.0', `Too many connections from this address (at most ${max}), try again later`),
  authTimedOut: (ms: number) =>
    new SmtpReply(421, '4.7.0', `Not authenticated within ${Math.ceil(ms / 1000)} seconds of connecting, closing`),
  tooManyAuthBeforeTls: () => new SmtpReply(421, '4.7.0', 'AUTH before STARTTLS again, closing: use STARTTLS or the implicit TLS port'),
  sessionLifetimeReached: () => new SmtpReply(421, '4.3.0', 'Session lifetime reached, reconnect to go on'),
  /** The message would pass this team's or this process's budget of message bytes in flight, or the team has its most messages in flight. */
  overBudget: (why: string) => new SmtpReply(452, '4.3.1', `Insufficient system storage: ${why}, try again later`, 'over-budget'),
  /** From headers other than exactly one, or a bare CR or LF in the header block (headers.ts readClientHeaderBlock). */
  oneFromHeader: () => new SmtpReply(550, '5.6.0', 'The message needs exactly one From header'),
  bareLineBreak: () => new SmtpReply(550, '5.6.0', 'Every header line must end in CRLF: a bare CR or LF is refused'),
  /** A Sender or Return-Path header that does not name one valid address. */
  senderHeaderInvalid: (name: string) => new SmtpReply(550, '5.6.0', `${name} must name one valid address`),
  /** A Sender or Return-Path header at a domain this key may not send from. */
  senderHeaderRefused: (name: string, message: string) => new SmtpReply(550, '5.7.1', `${name}: ${message}`, 'sender-refused'),
};
