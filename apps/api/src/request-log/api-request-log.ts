import { prismaExecutor } from '@mailrail/platform/db/sql/executor';
import type { Metrics } from '@mailrail/platform/metrics/metrics';
import { createRequestLogWriter, type RequestLogWriter } from '@mailrail/domain/request-log/request-log-writer';
import type { ApiDeps } from '../deps';
import { recordRequests, type RecordRequest } from './record-requests';

/** Rows of one INSERT: a tick's worth at a few thousand requests a second. */
const MAX_BATCH = 1000;

export interface ApiRequestLog {
  record: RecordRequest;
  writer: RequestLogWriter;
}

/** The API process's request log: one writer (one statement a tick, through Prisma's pool). */
export function createApiRequestLog(deps: Pick<ApiDeps, 'db' | 'log' | 'config'>, metrics: Metrics): ApiRequestLog {
  const writer = createRequestLogWriter(
    { sql: prismaExecutor(deps.db), log: deps.log, onDrop: (n) => metrics.requestLogDropped.inc(n) },
    { flushMs: deps.config.REQUEST_LOG_FLUSH_MS, maxBuffered: deps.config.REQUEST_LOG_BUFFER, maxBatch: MAX_BATCH },
  );
  return { record: recordRequests(writer), writer };
}
