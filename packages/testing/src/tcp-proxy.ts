import net, { type AddressInfo } from 'node:net';

// A TCP proxy on loopback that a test controls, to take PostgreSQL or Redis away from one process
// without stopping the shared servers other tests use: `cut()` drops every connection and refuses
// new ones (as a server that went down), `restore()` takes connections again.

export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  route(url: string): string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_PORTS: Record<string, number> = { 'redis:': 6379, 'postgres:': 5432, 'postgresql:': 5432 };

/** A proxy in front of the server a redis:// or postgresql:// URL names. */
export function startTcpProxyFor(url: string): Promise<TcpProxy> {
  const u = new URL(url);
  const port = u.port ? Number(u.port) : DEFAULT_PORTS[u.protocol];
  if (!port) throw new Error(`no default port for ${u.protocol}`);
  return startTcpProxy({ host: u.hostname, port });
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;

  const listen = async () => {
    if (server) return; // already taking connections
    server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', resolve);
    });
    port = (server!.address() as AddressInfo).port;
  };
  const stop = async () => {
    const s = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise((resolve) => s.close(resolve));
  };

  await listen();
  return {
    port,
    route: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut: stop,
    restore: listen,
    close: stop,
  };
}
