import { createServer, type Server } from 'node:http';
import { bearerToken, secretMatches } from '@mailrail/platform/crypto/secrets';
import { collectQueueDepths } from '@mailrail/platform/metrics/metrics';
import { queueNames } from '@mailrail/platform/queue/queues';
import type { WorkerDeps } from './deps';

/** Queues the worker consumes, reported as depths on every scrape. */
export function workerQueues(deps: WorkerDeps): string[] {
  const sends = deps.config.sesRegions.flatMap((r) => [queueNames.send(r, 'transactional'), queueNames.send(r, 'marketing')]);
  return [...sends, queueNames.campaigns, queueNames.sesEvents, queueNames.webhooks, queueNames.domains, queueNames.maintenance];
}

/**
 * GET /metrics of a worker process (Prometheus text), on WORKER_METRICS_PORT; the bearer
 * METRICS_TOKEN guards it as it guards the API's. Every other path is a 404.
 */
export function startMetricsServer(deps: WorkerDeps, port: number, host = '0.0.0.0'): Promise<Server | null> {
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'Not found' } }));
      return;
    }
    const token = deps.config.METRICS_TOKEN;
    if (token && !secretMatches(bearerToken(req.headers.authorization), token)) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'Metrics token required' } }));
      return;
    }
    await collectQueueDepths(deps.metrics, deps.queues, workerQueues(deps)).catch((err) => deps.log.warn({ err }, 'queue depths unavailable'));
    res.writeHead(200, { 'Content-Type': deps.metrics.registry.contentType }).end(await deps.metrics.registry.metrics());
  });
  // A second worker on the same machine finds the port taken: it runs on without metrics rather
  // than not at all (give each replica its own WORKER_METRICS_PORT).
  return new Promise((resolve) => {
    server.once('error', (err) => {
      deps.log.warn({ err, port }, 'worker metrics server not started');
      resolve(null);
    });
    server.listen(port, host, () => resolve(server));
  });
}
