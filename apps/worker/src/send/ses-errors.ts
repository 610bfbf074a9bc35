// What a failed SES call means for the email: try again later, slow the whole lane down, or give up.

export type SesFailureKind = 'throttled' | 'transient' | 'permanent';

export interface SesFailure {
  kind: SesFailureKind;
  /** The SES error name (e.g. MessageRejected) or the network error code. */
  name: string;
  message: string;
  /**
   * No answer came, but the request may have reached SES (a timeout, a connection cut mid-call): SES
   * may have accepted the message, as when a worker dies mid-call (docs/worker.md, "In doubt").
   */
  outcomeUnknown?: true;
}

const THROTTLING = new Set(['ThrottlingException', 'TooManyRequestsException', 'Throttling', 'RequestThrottled']);
// Account or sending paused, quota resets: an operator or time fixes these, so they are retried
// within the retry budget rather than failing the mail at once.
const TRANSIENT_NAMES = new Set([
  'LimitExceededException',
  'SendingPausedException',
  'InternalFailure',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'AbortError',
]);
// The request never left: nothing can have reached SES.
const NOT_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

interface SdkErrorShape {
  name?: string;
  message?: string;
  code?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

export function classifySesError(err: unknown): SesFailure {
  const e = (err ?? {}) as SdkErrorShape;
  const name = e.name && e.name !== 'Error' ? e.name : (e.code ?? 'Error');
  const message = e.message ?? String(err);
  const status = e.$metadata?.httpStatusCode;
  if (THROTTLING.has(name) || status === 429) return { kind: 'throttled', name, message };
  // No HTTP answer at all (a timeout, a socket closed mid-call, an unparseable response): the
  // request may or may not have reached SES, unless it could not even connect.
  if (status === undefined) {
    const neverConnected = NOT_CONNECTED_CODES.has(e.code ?? name);
    return neverConnected ? { kind: 'transient', name, message } : { kind: 'transient', name, message, outcomeUnknown: true };
  }
  if (TRANSIENT_NAMES.has(name) || (e.code && NETWORK_CODES.has(e.code))) return { kind: 'transient', name, message };
  if (status >= 500 || e.$fault === 'server') return { kind: 'transient', name, message };
  // MessageRejected, MailFromDomainNotVerifiedException, AccountSuspendedException,
  // BadRequestException, NotFoundException and any other 4xx: retrying cannot help.
  return { kind: 'permanent', name, message };
}
