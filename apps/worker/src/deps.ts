import { closeBaseDeps, createBaseDeps, createMetrics, type BaseDeps, type Config, type Metrics } from '@mailrail/core';
import { Pool } from 'pg';
import type { SendSettings } from './send/send-email';
import { createSesV2Sender, type SesSender } from './send/ses-sender';

/** Everything the worker's jobs may touch; built once per process (or per test). */
export interface WorkerDeps extends BaseDeps {
  /** node-postgres pool for the send hot path (claim and record), beside Prisma's own pool. */
  sql: Pool;
  ses: SesSender;
  send: SendSettings;
  metrics: Metrics;
}

export class WorkerConfigError extends Error {}

export function sendSettings(config: Config): SendSettings {
  // A send that outlives its lease may be taken over and sent twice: keep the call well inside it.
  if (config.SES_TIMEOUT_MS * 3 > config.SEND_LEASE_SECONDS * 1000) {
    throw new WorkerConfigError(
      `SES_TIMEOUT_MS (${config.SES_TIMEOUT_MS}) must be at most a third of SEND_LEASE_SECONDS (${config.SEND_LEASE_SECONDS} s)`,
    );
  }
  return {
    leaseSeconds: config.SEND_LEASE_SECONDS,
    maxAttempts: config.SEND_MAX_ATTEMPTS,
    retryBaseMs: config.SEND_RETRY_BASE_MS,
    retryMaxMs: Math.max(config.SEND_RETRY_BASE_MS, config.SEND_RETRY_MAX_MS),
    defaultRegion: config.AWS_REGION,
    configurationSetPrefix: config.SES_CONFIGURATION_SET_PREFIX,
  };
}

export function createWorkerDeps(config: Config, overrides: Partial<WorkerDeps> = {}): WorkerDeps {
  const base = createBaseDeps(config, overrides, { service: 'mailrail-worker', forWorker: true });
  let sql = overrides.sql;
  if (!sql) {
    sql = new Pool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE });
    // An idle connection closed by the server (restart, failover) must not crash the process;
    // the pool opens a new one on the next query.
    sql.on('error', (err) => base.log.warn({ err }, 'idle PostgreSQL connection lost'));
  }
  return {
    ...base,
    sql,
    ses: overrides.ses ?? createSesV2Sender(config),
    send: overrides.send ?? sendSettings(config),
    metrics: overrides.metrics ?? createMetrics('worker'),
  };
}

export async function closeWorkerDeps(deps: WorkerDeps): Promise<void> {
  deps.ses.close();
  await deps.sql.end();
  await closeBaseDeps(deps);
}
