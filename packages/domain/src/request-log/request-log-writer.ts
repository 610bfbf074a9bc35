import type { SqlExecutor } from '@mailrail/platform/db/sql/executor';
import type { Logger } from '@mailrail/platform/log/logger';
import { storable } from './redact-body';

// The request log is written off the request path: a request only pushes its entry into a bounded
// buffer, and one multi-row INSERT a tick (or as soon as a batch is full) writes what is there. The
// log is a reading aid, not a record the API answers from, so when the database is slow the buffer
// drops entries (counted) instead of growing or slowing requests. Like the email committer
// (emails/email-committer.ts), a batch is one statement, on the committer's own pool (pg directly:
// Prisma's raw queries pass every parameter value through their own serialization first).

/** Free-text columns are cut to these lengths: they come from the request. */
const PATH_MAX = 512;
const METHOD_MAX = 16;
const ERROR_CODE_MAX = 64;
const ERROR_MESSAGE_MAX = 1000;

export interface RequestLogEntry {
  teamId: number;
  apiKeyId: number | null;
  source: 'api' | 'smtp';
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
  /** Already redacted (redactRequestBody). */
  requestBody: unknown;
  createdAt: Date;
}

export interface RequestLogWriterSettings {
  /** How often the buffer is written (REQUEST_LOG_FLUSH_MS). */
  flushMs: number;
  /** Most entries held (REQUEST_LOG_BUFFER); more are dropped. */
  maxBuffered: number;
  /** A batch this large is written at once. */
  maxBatch: number;
}

export interface RequestLogWriter {
  /** Buffers one entry; never waits, never throws. */
  record(entry: RequestLogEntry): void;
  /** Writes everything buffered and waits for writes in flight (shutdown, tests). */
  flush(): Promise<void>;
  /** Stops the timer; call flush() first to keep what is buffered. */
  close(): void;
}

// The batch as one JSON array, one object per entry (short keys): JSON.stringify is native, where
// eleven parameter arrays were each escaped into PostgreSQL's array syntax element by element.
const INSERT = {
  name: 'request-log-insert',
  text: `INSERT INTO "RequestLog" ("teamId", "apiKeyId", "source", "method", "path", "status", "errorCode", "errorMessage", "durationMs", "requestBody", "createdAt")
SELECT t, k, s, m, p, st, ec, em, d, b, c
  FROM json_to_recordset($1::json) AS x(t int, k int, s text, m text, p text, st int, ec text, em text, d int, b jsonb, c timestamptz)`,
};

/** A free-text column as stored: capped, and with nothing PostgreSQL refuses in text. */
const cut = (s: string | null, max: number) => (s === null ? null : storable(s.length > max ? s.slice(0, max) : s));

/** The writer when the log is off (REQUEST_LOG_ENABLED=false): keeps nothing. */
export const requestLogOff: RequestLogWriter = { record: () => undefined, flush: () => Promise.resolve(), close: () => undefined };

export function createRequestLogWriter(
  deps: { sql: SqlExecutor; log: Logger; onDrop: (count: number) => void },
  settings: RequestLogWriterSettings,
): RequestLogWriter {
  let buffer: RequestLogEntry[] = [];
  let inFlight = 0;
  const writing = new Set<Promise<void>>();

  const write = async (batch: RequestLogEntry[]) => {
    try {
      const rows = batch.map((e) => ({
        t: e.teamId,
        k: e.apiKeyId,
        s: e.source,
        m: cut(e.method, METHOD_MAX),
        p: cut(e.path, PATH_MAX),
        st: e.status,
        ec: cut(e.errorCode, ERROR_CODE_MAX),
        em: cut(e.errorMessage, ERROR_MESSAGE_MAX),
        d: Math.max(0, Math.round(e.durationMs)),
        b: e.requestBody ?? null,
        c: e.createdAt.toISOString(),
      }));
      await deps.sql.execute(INSERT, [JSON.stringify(rows)]);
    } catch (err) {
      deps.onDrop(batch.length);
      deps.log.warn({ err, entries: batch.length }, 'request log batch not written');
    }
  };
  const writeBuffered = () => {
    while (buffer.length > 0) {
      const batch = buffer.slice(0, settings.maxBatch);
      buffer = buffer.slice(batch.length);
      inFlight += batch.length;
      const done = write(batch).finally(() => {
        inFlight -= batch.length;
        writing.delete(done);
      });
      writing.add(done);
    }
  };
  const timer = setInterval(writeBuffered, settings.flushMs);
  timer.unref();

  return {
    record(entry) {
      // Entries awaiting a write in flight count too: a stalled database must not grow memory.
      if (buffer.length + inFlight >= settings.maxBuffered) return deps.onDrop(1);
      buffer.push(entry);
      if (buffer.length >= settings.maxBatch) writeBuffered();
    },
    async flush() {
      writeBuffered();
      await Promise.all([...writing]);
    },
    close() {
      clearInterval(timer);
    },
  };
}
