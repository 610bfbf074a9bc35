import type { RequestHandler } from 'express';
import { collectQueueDepths, queueNames, type Metrics } from '@mailrail/core';
import type { ApiDeps } from '../deps';

// Ids, emails and other per-resource segments become ":id" so the label set stays small.
function routeLabel(path: string): string {
  return path
    .split('/')
    .map((seg) => (/^\d+$|@|%/.test(seg) || (seg.length >= 8 && /\d/.test(seg)) || seg.length >= 24 ? ':id' : seg))
    .join('/');
}

/**
 * Counts and times every request by its route shape, never the raw URL. (Express restores
 * req.baseUrl when an error leaves a router, so the label comes from the URL, once a route matched.)
 */
export function recordHttpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const end = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = req.route ? routeLabel(req.originalUrl.split('?')[0].replace(/\/+$/, '') || '/') : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      end(labels);
    });
    next();
  };
}

/** Names of the queues whose depth the scrape reports. */
export function observedQueues(deps: ApiDeps): string[] {
  const sends = deps.config.sesRegions.flatMap((r) => [queueNames.send(r, 'transactional'), queueNames.send(r, 'marketing')]);
  return [...sends, queueNames.campaigns, queueNames.sesEvents, queueNames.webhooks, queueNames.domains];
}

/** GET /metrics in Prometheus text format; behind a bearer token when METRICS_TOKEN is set. */
export function metricsEndpoint(deps: ApiDeps, metrics: Metrics): RequestHandler {
  return async (req, res) => {
    const token = deps.config.METRICS_TOKEN;
    if (token && req.headers.authorization !== `Bearer ${token}`) {
      res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'Metrics token required' } });
      return;
    }
    await collectQueueDepths(metrics, deps.queues, observedQueues(deps)).catch((err) => req.log.warn({ err }, 'queue depths unavailable'));
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  };
}
