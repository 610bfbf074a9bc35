import { useLowMemoryV8Flags } from '@mailrail/platform/process/memory-flags';
import { createLogger } from '@mailrail/platform/log/logger';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit } from '@mailrail/platform/config/load';
import { listenPortOf } from '@mailrail/platform/config/schema';
import { logListening } from '@mailrail/platform/log/listening';
import { startMetricsServer } from '@mailrail/platform/metrics/metrics-server';
import { closeSmtpDeps, createSmtpDeps } from './deps';
import { startSmtpRelay } from './relay';
import { readTlsFiles, relayTls } from './tls';

// The SMTP relay process (`npm run start:smtp`): STARTTLS on SMTP_PORT, implicit TLS on
// SMTPS_PORT, GET /metrics on SMTP_METRICS_PORT. SIGHUP reads the certificate files again;
// SIGTERM/SIGINT stop taking connections, answer 421 to new commands, let the messages in flight
// finish and get their answer, then exit 0. Stateless: run as many as needed behind a TCP balancer.
async function main(): Promise<void> {
  useLowMemoryV8Flags('smtp');
  const config = loadConfigOrExit();
  const log = createLogger(config.LOG_LEVEL, 'mailrail-smtp');
  const [starttlsPort, tlsPort, metricsPort] = [config.SMTP_PORT, config.SMTPS_PORT, config.SMTP_METRICS_PORT].map(listenPortOf);
  if (starttlsPort === null && tlsPort === null) {
    log.fatal('SMTP_PORT and SMTPS_PORT are both 0: nothing to listen on');
    process.exit(1);
  }
  const tls = await relayTls(config).catch((err: Error) => {
    log.fatal({ err }, `SMTP TLS: ${err.message}`);
    process.exit(1);
  });
  const deps = createSmtpDeps(config, { log });
  const relay = await startSmtpRelay(deps, {
    host: config.SMTP_HOST,
    starttlsPort,
    tlsPort,
    tls: tls.tls,
    serverName: config.SMTP_SERVER_NAME,
  }).catch((err) => {
    log.fatal({ err }, 'SMTP relay failed to start');
    process.exit(1);
  });
  const metricsServer =
    metricsPort !== null
      ? await startMetricsServer({
          registry: deps.metrics.registry,
          port: metricsPort,
          token: config.METRICS_TOKEN,
          log,
          maxAgeMs: config.METRICS_CACHE_MS,
        })
      : null;
  // The bound ports: a port set to `any` is known only from this line.
  logListening(
    log,
    {
      ports: relay.ports,
      tls: tls.source,
      fingerprint256: tls.fingerprint256,
      metricsPort: metricsServer ? (metricsServer.address() as AddressInfo).port : null,
    },
    'mailrail SMTP relay listening',
    [starttlsPort, tlsPort, metricsPort].includes(0),
  );

  process.on('SIGHUP', () => {
    if (tls.source !== 'files') return log.info('SIGHUP: no certificate files to read again (self-signed certificate)');
    try {
      const next = readTlsFiles(config);
      relay.reloadTls(next.tls);
      log.info({ fingerprint256: next.fingerprint256 }, 'SIGHUP: certificate read again; new TLS sessions use it');
    } catch (err) {
      log.error({ err }, 'SIGHUP: certificate not read, the previous one stays');
    }
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, inFlight: relay.busySessions() }, 'stopping: finishing the messages in flight');
    try {
      await relay.stop(config.SMTP_SHUTDOWN_GRACE_MS);
      metricsServer?.close();
      await closeSmtpDeps(deps);
      log.info('mailrail SMTP relay stopped');
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
