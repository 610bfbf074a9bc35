import type { ServerResponse } from 'node:http';

/**
 * A JSON answer written on the bare node response, so it serves the accept lane (which answers
 * before express dresses the request) and express's handlers alike. Unlike res.json, no ETag: a
 * hash of every answer that no client of this API revalidates.
 */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
