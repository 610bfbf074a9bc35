import type { Logger } from './logger';

/**
 * Writes a process's "listening" line. When a port was asked as 0 or `any`, the bound port is
 * known only from this line and whoever started the process (the test harness: spawnListening)
 * reads it there, so the line is then written whatever LOG_LEVEL says.
 */
export function logListening(log: Logger, fields: Record<string, unknown>, msg: string, portPickedByOs: boolean): void {
  const out = portPickedByOs && !log.isLevelEnabled('info') ? log.child({}, { level: 'info' }) : log;
  out.info(fields, msg);
}
