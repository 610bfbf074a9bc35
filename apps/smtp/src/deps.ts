import { closeBaseDeps, createBaseDeps, type BaseDeps } from '@mailrail/platform/process/base-deps';
import type { Config } from '@mailrail/platform/config/schema';
import { createEmailIntake, createIntakeSql, type EmailIntake } from '@mailrail/domain/emails/email-intake';
import type { SqlPool } from '@mailrail/platform/db/sql/executor';
import { createRequestLogWriter, requestLogOff, type RequestLogWriter } from '@mailrail/domain/request-log/request-log-writer';
import { createApiKeyVerifier, type ApiKeyVerifier } from '@mailrail/domain/teams/api-key-auth';
import { createAuthFailureLimit, type AuthFailureLimit } from '@mailrail/domain/teams/auth-failure-limit';
import { createTeamRateLimit, type TeamRateLimit } from '@mailrail/domain/teams/team-rate-limit';
import { createSmtpMetrics, type SmtpMetrics } from './smtp-metrics';

/** Everything a session may touch; built once per process (or per test file). */
export interface SmtpDeps extends BaseDeps {
  /** The API's key rule: caches, revocations, the per-IP failure limit. */
  verifier: ApiKeyVerifier;
  /** The per-IP failed-authentication count the verifier keeps (same Redis key): AUTH before STARTTLS counts in it too. */
  authFailures: AuthFailureLimit;
  /** The API's email creation path: domain rule, idempotency, group committer. */
  intake: EmailIntake;
  /** The API's per-team rate, one request per message. */
  rate: TeamRateLimit;
  metrics: SmtpMetrics;
  /** The committer's node-postgres pool. */
  sql: SqlPool;
  /** The teams' request log: one entry per message transaction (docs/request-log.md). */
  requestLog: RequestLogWriter;
}

export function createSmtpDeps(config: Config, overrides: Partial<BaseDeps> & { metrics?: SmtpMetrics } = {}): SmtpDeps {
  const base = createBaseDeps(config, overrides, { service: 'mailrail-smtp' });
  const metrics = overrides.metrics ?? createSmtpMetrics();
  const sql = createIntakeSql(config, base.log);
  return {
    ...base,
    sql,
    verifier: createApiKeyVerifier(base, metrics),
    authFailures: createAuthFailureLimit(base.redis, { prefix: config.REDIS_PREFIX, max: config.AUTH_FAILURES_PER_MINUTE, log: base.log }),
    intake: createEmailIntake({ ...base, sql }),
    rate: createTeamRateLimit(base.redis, { prefix: config.REDIS_PREFIX, log: base.log }),
    metrics,
    requestLog: config.REQUEST_LOG_ENABLED
      ? createRequestLogWriter(
          { sql, log: base.log, onDrop: (n) => metrics.requestLogDropped.inc(n) },
          { flushMs: config.REQUEST_LOG_FLUSH_MS, maxBuffered: config.REQUEST_LOG_BUFFER, maxBatch: 1000 },
        )
      : requestLogOff,
  };
}

export async function closeSmtpDeps(deps: SmtpDeps): Promise<void> {
  deps.verifier.close();
  // A message whose client left mid-commit holds no session open: its flush must land before the pool closes.
  await deps.intake.committer.drain();
  await deps.requestLog.flush();
  deps.requestLog.close();
  await deps.sql.end();
  await closeBaseDeps(deps);
}
