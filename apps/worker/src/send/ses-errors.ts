// What a failed SES call means for the email: try again later, slow the whole lane down, or give up.

export type SesFailureKind = 'throttled' | 'transient' | 'permanent';

export interface SesFailure {
  kind: SesFailureKind;
  /** The SES error name (e.g. MessageRejected) or the network error code. */
  name: string;
  message: string;
}

/** Our own limiter could not book a message's extra recipients soon enough (send-worker.ts): wait like a throttle. */
export const SEND_RATE_LIMIT_WAIT = 'SendRateLimitWait';
const THROTTLING = new Set(['ThrottlingException', 'TooManyRequestsException', 'Throttling', 'RequestThrottled', SEND_RATE_LIMIT_WAIT]);
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
  if (TRANSIENT_NAMES.has(name) || (e.code && NETWORK_CODES.has(e.code))) return { kind: 'transient', name, message };
  if ((status !== undefined && status >= 500) || e.$fault === 'server') return { kind: 'transient', name, message };
  // No HTTP answer at all (socket closed, unparseable response): the request may not have reached SES.
  if (status === undefined) return { kind: 'transient', name, message };
  // MessageRejected, MailFromDomainNotVerifiedException, AccountSuspendedException,
  // BadRequestException, NotFoundException and any other 4xx: retrying cannot help.
  return { kind: 'permanent', name, message };
}
