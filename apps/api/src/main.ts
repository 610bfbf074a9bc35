import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logListening } from '@mailrail/platform/log/listening';
import { useLowMemoryV8Flags } from '@mailrail/platform/process/memory-flags';
import { loadConfigOrExit } from '@mailrail/platform/config/load';
import { createApp } from './app';
import { closeApiDeps, createApiDeps } from './deps';

useLowMemoryV8Flags('api');
const config = loadConfigOrExit();
const deps = createApiDeps(config);
const { app, close, drain } = createApp(deps);

// Graceful stop: refuse new connections, let in-flight requests finish, then close pools.
let stopping = false;
const server = createServer(app).listen(config.PORT, config.HOST, () => {
  // The bound port, not config.PORT: with PORT=0 the OS picks it and the starter reads it here.
  logListening(deps.log, { port: (server.address() as AddressInfo).port }, 'mailrail API listening', config.PORT === 0);
});
server.keepAliveTimeout = 65_000;
// Once stopping, every answer closes its connection so keep-alive clients reconnect elsewhere.
server.on('request', (_req, res) => {
  if (stopping) res.setHeader('Connection', 'close');
});

async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  deps.log.info({ signal }, 'API shutting down');
  const force = setTimeout(() => process.exit(1), 25_000);
  force.unref();
  server.close(async () => {
    close();
    // A send whose client went away may still be pending in the committer: write it before its pool closes.
    await drain();
    await closeApiDeps(deps).catch(() => undefined);
    process.exit(0);
  });
  server.closeIdleConnections();
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
