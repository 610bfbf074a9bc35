import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EarlyServer {
  server: Server;
  /** http://127.0.0.1:<its port> */
  url: string;
  /** Hands every request from now on to `app`. */
  serve(app: RequestListener): void;
}

/**
 * An HTTP server already listening on a port of its own (port 0) before its app exists: for an
 * app that must know its own URL (PUBLIC_URL) when it is built. A port picked beforehand and bound
 * later could be taken in between. Answers 503 until serve(app).
 */
export async function listenBeforeApp(): Promise<EarlyServer> {
  let app: RequestListener = (_req, res) => res.writeHead(503).end('not served yet');
  const server = createServer((req, res) => app(req, res));
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (next) => void (app = next),
  };
}
