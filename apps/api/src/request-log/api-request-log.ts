import type { Metrics } from '@mailrail/platform/metrics/metrics';
import { createRequestLogWriter, requestLogOff, type RequestLogWriter } from '@mailrail/domain/request-log/request-log-writer';
import type { ApiDeps } from '../deps';
import { recordRequests, type RecordRequest } from './record-requests';

/** Rows of one INSERT: a tick's worth at a few thousand requests a second. */
const MAX_BATCH = 1000;

export interface ApiRequestLog {
  record: RecordRequest;
  writer: RequestLogWriter;
}

/** The API process's request log: one writer (one statement a tick, on the email committer's pool). */
export function createApiRequestLog(deps: Pick<ApiDeps, 'sql' | 'log' | 'config'>, metrics: Metrics): ApiRequestLog {
  // Off: not even a listener per request (bench/request-log measures the difference).
  if (!deps.config.REQUEST_LOG_ENABLED) return { record: (_req, _res, next) => next(), writer: requestLogOff };
  const writer = createRequestLogWriter(
    { sql: deps.sql, log: deps.log, onDrop: (n) => metrics.requestLogDropped.inc(n) },
    { flushMs: deps.config.REQUEST_LOG_FLUSH_MS, maxBuffered: deps.config.REQUEST_LOG_BUFFER, maxBatch: MAX_BATCH },
  );
  return { record: recordRequests(writer), writer };
}
