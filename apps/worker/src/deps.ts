import { closeBaseDeps, createBaseDeps, type BaseDeps } from '@mailrail/platform/process/base-deps';
import { createMetrics, type Metrics } from '@mailrail/platform/metrics/metrics';
import { createSqlPool, type SqlPool } from '@mailrail/platform/db/sql/executor';
import { queueNames } from '@mailrail/platform/queue/queues';
import { type Config } from '@mailrail/platform/config/schema';
import { createBudgetGate, type BudgetGate } from '@mailrail/platform/budgets/budget-gate';
import { createHeavySql } from '@mailrail/platform/budgets/heavy-work';
import type { SendSettings } from './send/send-email';
import { createSesV2Sender, type SesSender } from './send/ses-sender';
import { withSimulatedSesEvents } from './send/simulated-ses-events';
import { createEmailIntake } from '@mailrail/domain/emails/email-intake';
import { createSystemMailer, type SystemMailer } from '@mailrail/domain/system-mail/system-mail';

/** Everything the worker's jobs may touch; built once per process (or per test). */
export interface WorkerDeps extends BaseDeps {
  /** node-postgres pool for the hot paths (send, campaign window, sweep), beside Prisma's own pool. */
  sql: SqlPool;
  ses: SesSender;
  send: SendSettings;
  metrics: Metrics;
  /** The small pool of heavy operations (campaign recipient preparation), apart from `sql`. */
  heavySql: SqlPool;
  /** Per-team and global concurrency of heavy operations (packages/platform/src/budgets). */
  budgets: BudgetGate;
  /** Mail to dashboard users (reputation alerts), through the same intake as the API's; null when not configured. */
  systemMail: SystemMailer | null;
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
    callTimeoutMs: config.SES_TIMEOUT_MS,
    inDoubtWaitSeconds: {
      marketing: config.SES_IN_DOUBT_CAMPAIGN === 'wait' ? config.SES_IN_DOUBT_WAIT_SECONDS : 0,
      transactional: config.SES_IN_DOUBT_TRANSACTIONAL === 'wait' ? config.SES_IN_DOUBT_WAIT_SECONDS : 0,
    },
    maxAttempts: config.SEND_MAX_ATTEMPTS,
    retryBaseMs: config.SEND_RETRY_BASE_MS,
    retryMaxMs: Math.max(config.SEND_RETRY_BASE_MS, config.SEND_RETRY_MAX_MS),
    defaultRegion: config.AWS_REGION,
    configurationSetPrefix: config.SES_CONFIGURATION_SET_PREFIX,
  };
}

export function createWorkerDeps(config: Config, overrides: Partial<WorkerDeps> = {}): WorkerDeps {
  const base = createBaseDeps(config, overrides, { service: 'mailrail-worker', forWorker: true });
  // An idle connection closed by the server (restart, failover) must not crash the process.
  const sql =
    overrides.sql ??
    // Planned at each run: the send path's named statements write the partitioned email log.
    createSqlPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE, (err) => base.log.warn({ err }, 'idle PostgreSQL connection lost'), {
      planEachRun: true,
    });
  let ses = overrides.ses ?? createSesV2Sender(config);
  // Only ever true against a loopback SES emulator outside production (config/load.ts).
  if (config.sesEventSimulator) {
    ses = withSimulatedSesEvents(ses, {
      sesEventsQueue: base.queues.get(queueNames.sesEvents),
      delayMs: config.SES_EVENT_SIMULATOR_DELAY_MS,
      log: base.log,
      now: () => base.clock.now(),
    });
    base.log.info({ delayMs: config.SES_EVENT_SIMULATOR_DELAY_MS }, 'SES event simulator on: accepted messages get simulated SES events');
  }
  // The worker's own intake for system mail: the API's path (sender rule, suppressions, group
  // committer) on the worker's pool; used a few times a day, so no pool of its own.
  const systemMail =
    overrides.systemMail !== undefined ? overrides.systemMail : createSystemMailer(createEmailIntake({ ...base, sql }), config);
  return {
    ...base,
    sql,
    ses,
    systemMail,
    send: overrides.send ?? sendSettings(config),
    metrics: overrides.metrics ?? createMetrics('worker'),
    heavySql: overrides.heavySql ?? createHeavySql(config, (err) => base.log.warn({ err }, 'heavy pool connection lost')),
    budgets: overrides.budgets ?? createBudgetGate(base.redis, { prefix: config.REDIS_PREFIX, config, log: base.log }),
  };
}

export async function closeWorkerDeps(deps: WorkerDeps): Promise<void> {
  deps.ses.close();
  await deps.sql.end();
  await deps.heavySql.end();
  await closeBaseDeps(deps);
}
