import type { Server } from 'node:http';
import { collectQueueDepths } from '@mailrail/platform/metrics/metrics';
import { queueNames } from '@mailrail/platform/queue/queues';
import { startMetricsServer as serveMetrics } from '@mailrail/platform/metrics/metrics-server';
import type { WorkerDeps } from './deps';

/** Queues the worker consumes, reported as depths on every scrape. */
export function workerQueues(deps: WorkerDeps): string[] {
  const sends = deps.config.sesRegions.flatMap((r) => [queueNames.send(r, 'transactional'), queueNames.send(r, 'marketing')]);
  return [
    ...sends,
    queueNames.campaigns,
    queueNames.campaignPreparation,
    queueNames.contactImports,
    queueNames.sesEvents,
    queueNames.webhooks,
    queueNames.domains,
    queueNames.maintenance,
  ];
}

/**
 * GET /metrics of a worker process on WORKER_METRICS_PORT (core's metrics server: METRICS_TOKEN,
 * 404 elsewhere), with the depths of the queues it consumes read at every scrape. A second worker
 * on the same machine finds the port taken and runs on without metrics.
 */
export function startMetricsServer(deps: WorkerDeps, port: number, host = '0.0.0.0'): Promise<Server | null> {
  return serveMetrics({
    registry: deps.metrics.registry,
    port,
    host,
    token: deps.config.METRICS_TOKEN,
    log: deps.log,
    maxAgeMs: deps.config.METRICS_CACHE_MS,
    beforeScrape: () => collectQueueDepths(deps.metrics, deps.queues, workerQueues(deps)),
  });
}
