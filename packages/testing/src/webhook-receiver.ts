import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A webhook endpoint on 127.0.0.1 for tests: records every call and answers as told.

export interface ReceivedCall {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; createdAt: string; teamId: number; data: unknown; attempt: number; version: string };
}

export interface Receiver {
  url: string;
  calls: ReceivedCall[];
  /** Decides the status of each call (n counts from 0); 200 by default. */
  respond: (call: ReceivedCall, n: number) => number | 'hang';
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', calls: [], respond: () => 200, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const call: ReceivedCall = { headers: req.headers, body, json: JSON.parse(body) };
      const status = receiver.respond(call, receiver.calls.length);
      receiver.calls.push(call);
      if (status === 'hang') return;
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return receiver;
}
