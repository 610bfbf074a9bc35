import { createServer, type AddressInfo, type Server } from 'node:net';

// For third-party servers only (redis-server, pgbouncer), which cannot report a port-0 bind: our
// own processes bind port 0 and report their port (spawn-listening.ts). A port found free here
// may be taken before the child binds it, so startOnFreePorts draws again when that happens.

/** `count` distinct loopback ports nothing listens on right now (all held open at once, then released). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
    }
    return servers.map((s) => (s.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

/** A loopback port nothing listens on right now, for a bench's child or a client that must find nothing there. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0];
}

/** What a start function throws when its child could not bind a port it was given (taken meanwhile). */
export class PortTakenError extends Error {}

/** Matches a server's own "address in use" report (redis-server, pgbouncer, node's EADDRINUSE). */
export const ADDRESS_IN_USE = /address already in use|EADDRINUSE/i;

/**
 * Starts a third-party server on `count` free ports, drawing new ones when `start` throws
 * PortTakenError (another process bound one after freePorts answered it), up to `attempts` times.
 * `start` stops its child before throwing.
 */
export async function startOnFreePorts<T>(count: number, start: (ports: number[]) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePorts(count));
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= attempts) throw err;
    }
  }
}
