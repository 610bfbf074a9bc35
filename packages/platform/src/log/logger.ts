import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Credentials a log line must never carry, whichever object (a request, an error with its
 * request options) brings them along. The request log also redacts secrets in URLs.
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
];

/** A JSON logger; `destination` (default stdout) lets tests read what is written. */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    name,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
