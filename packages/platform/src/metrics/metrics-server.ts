import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { bearerToken, secretMatches } from '../crypto/secrets';
import type { Logger } from '../log/logger';
import { createScrapeCache } from './scrape-cache';

/**
 * GET /metrics (Prometheus text) of a process without an HTTP API of its own (worker, SMTP
 * relay), on its own port; the bearer METRICS_TOKEN guards it as it guards the API's. Every
 * other path is a 404. `beforeScrape` refreshes gauges read at scrape time (queue depths); one
 * render serves every scrape for `maxAgeMs` (METRICS_CACHE_MS).
 */
export function startMetricsServer(opts: {
  registry: Registry;
  port: number;
  host?: string;
  token: string | undefined;
  log: Logger;
  maxAgeMs: number;
  beforeScrape?: () => Promise<void>;
}): Promise<Server | null> {
  const scrape = createScrapeCache(
    async () => {
      await opts.beforeScrape?.().catch((err) => opts.log.warn({ err }, 'metrics refresh failed'));
      return opts.registry.metrics();
    },
    { maxAgeMs: opts.maxAgeMs },
  );
  const json = (code: string, message: string) => JSON.stringify({ error: { code, message } });
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(json('NOT_FOUND', 'Not found'));
      return;
    }
    if (opts.token && !secretMatches(bearerToken(req.headers.authorization), opts.token)) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(json('UNAUTHORIZED', 'Metrics token required'));
      return;
    }
    try {
      const text = await scrape();
      res.writeHead(200, { 'Content-Type': opts.registry.contentType }).end(text);
    } catch (err) {
      opts.log.warn({ err }, 'metrics not rendered');
      res.writeHead(500, { 'Content-Type': 'application/json' }).end(json('INTERNAL_SERVER_ERROR', 'Metrics not rendered'));
    }
  });
  // A second process on the same machine finds the port taken: it runs on without metrics rather
  // than not at all (give each replica its own port).
  return new Promise((resolve) => {
    server.once('error', (err) => {
      opts.log.warn({ err, port: opts.port }, 'metrics server not started');
      resolve(null);
    });
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve(server));
  });
}
