import { createLogger, loadConfigOrExit } from '@mailrail/core';

// Placeholder until the send pipeline lands: proves configuration and lifecycle.
const config = loadConfigOrExit();
const log = createLogger(config.LOG_LEVEL, 'mailrail-worker');
log.info('mailrail worker started');
const keepAlive = setInterval(() => undefined, 60_000);
const stop = () => {
  clearInterval(keepAlive);
  log.info('mailrail worker stopped');
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
