import { useLowMemoryV8Flags } from '@mailrail/platform/process/memory-flags';
import { createLogger } from '@mailrail/platform/log/logger';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit } from '@mailrail/platform/config/load';
import { listenPortOf } from '@mailrail/platform/config/schema';
import { logListening } from '@mailrail/platform/log/listening';
import { closeWorkerDeps, createWorkerDeps } from './deps';
import { startMetricsServer } from './metrics-server';
import { startWorker } from './worker';

// The worker process: sends queued and scheduled emails, runs the periodic jobs.
// SIGTERM/SIGINT: stop taking jobs, let the sends in flight finish, close connections, exit 0
// (exit 1 if that takes longer than WORKER_SHUTDOWN_GRACE_MS).
// A SIGKILL loses nothing: leases expire and the sweeper re-enqueues from PostgreSQL.
async function main(): Promise<void> {
  useLowMemoryV8Flags('worker');
  const config = loadConfigOrExit();
  const log = createLogger(config.LOG_LEVEL, 'mailrail-worker');
  let deps;
  try {
    deps = createWorkerDeps(config, { log });
  } catch (err) {
    log.fatal({ err }, 'invalid worker configuration');
    process.exit(1);
  }
  const running = await startWorker(deps).catch((err) => {
    log.fatal({ err }, 'worker failed to start');
    process.exit(1);
  });
  const metricsPort = listenPortOf(config.WORKER_METRICS_PORT);
  const metricsServer = metricsPort !== null ? await startMetricsServer(deps, metricsPort) : null;
  // The bound port: a WORKER_METRICS_PORT of `any` is known only from this line.
  logListening(
    log,
    {
      regions: config.sesRegions,
      rates: Object.fromEntries(running.ratesByRegion),
      metricsPort: metricsServer ? (metricsServer.address() as AddressInfo).port : null,
    },
    'mailrail worker started',
    metricsPort === 0,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping: finishing the sends in flight');
    // A graceful stop needs Redis and PostgreSQL: BullMQ records each finished job and waits for
    // its blocking connection, which cannot reconnect while Redis is away. Past the grace the
    // worker exits like a crash, which loses nothing (leases end, the sweeper re-enqueues).
    setTimeout(() => {
      log.error(
        { graceMs: config.WORKER_SHUTDOWN_GRACE_MS },
        'the sends in flight did not finish within WORKER_SHUTDOWN_GRACE_MS; exiting',
      );
      process.exit(1);
    }, config.WORKER_SHUTDOWN_GRACE_MS).unref();
    try {
      metricsServer?.close();
      await running.close();
      await closeWorkerDeps(deps);
      log.info('mailrail worker stopped');
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'unclean stop');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

void main();
