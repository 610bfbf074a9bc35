import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { bearerToken, secretMatches } from '@mailrail/platform/crypto/secrets';
import { collectQueueDepths, type Metrics } from '@mailrail/platform/metrics/metrics';
import { createScrapeCache } from '@mailrail/platform/metrics/scrape-cache';
import { queueNames } from '@mailrail/platform/queue/queues';
import type { ApiDeps } from '../deps';

const UNMATCHED = 'unmatched';

interface RouteTemplate {
  /** Lower-case methods, or null for a mounted app or static folder (any method). */
  methods: Set<string> | null;
  /** Lower-case literal segments, or null where the template has a parameter. */
  segments: (string | null)[];
  /** A mount: any deeper path belongs to it. */
  prefix: boolean;
  label: string;
}

interface Layer {
  route?: { path: unknown; methods: Record<string, boolean> };
  rawPath?: unknown;
  handle: { stack?: Layer[] };
}

const splitPath = (path: string) => path.split('/').filter(Boolean);

/**
 * Every route the app serves, as a template ("/api/v1/emails/:emailId"), read once from the
 * router stack (router 2.x keeps each mount's rawPath). A mounted app or static folder that
 * cannot be read into becomes "<mount>/*". Templates with literal segments first, so
 * "/emails/batch" wins over "/emails/:emailId".
 */
function readRouteTemplates(app: unknown): RouteTemplate[] {
  const out: RouteTemplate[] = [];
  const add = (path: string, methods: Set<string> | null, prefix: boolean) => {
    const parts = splitPath(path);
    out.push({
      methods,
      prefix,
      segments: parts.map((p) => (/^[:*{]/.test(p) ? null : p.toLowerCase())),
      label: `/${parts.join('/')}${prefix ? '/*' : ''}`,
    });
  };
  const walk = (stack: Layer[], base: string) => {
    for (const layer of stack) {
      if (layer.route) {
        if (typeof layer.route.path === 'string') add(base + layer.route.path, new Set(Object.keys(layer.route.methods)), false);
        continue;
      }
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      if (layer.handle.stack) walk(layer.handle.stack, base + mount);
      else if (mount) add(base + mount, null, true);
    }
  };
  walk((app as { router?: { stack?: Layer[] } }).router?.stack ?? [], '');
  const literals = (t: RouteTemplate) => t.segments.filter((s) => s !== null).length;
  return out.sort((a, b) => Number(a.prefix) - Number(b.prefix) || literals(b) - literals(a));
}

function matches(t: RouteTemplate, method: string, parts: string[]): boolean {
  if (t.methods && !t.methods.has(method) && !(method === 'head' && t.methods.has('get'))) return false;
  if (t.prefix ? parts.length < t.segments.length : parts.length !== t.segments.length) return false;
  return t.segments.every((seg, i) => seg === null || seg === parts[i].toLowerCase());
}

/** Times one request and counts it when its response is finished, under the label `labelOf` names. */
function observeRequest(metrics: Metrics, method: string, res: ServerResponse, labelOf: (status: number) => string): void {
  const end = metrics.httpDuration.startTimer();
  res.on('finish', () => {
    const labels = { method, route: labelOf(res.statusCode), status: String(res.statusCode) };
    metrics.httpRequests.inc(labels);
    end(labels);
  });
}

/**
 * Counts and times every request by its route template (/api/v1/emails/:emailId), never by the
 * raw URL: labels are bounded by the routes the app has. A 404 that no route answered, or a
 * path no route has, shares the label "unmatched". (Express restores req.baseUrl when a request
 * leaves a router, so the template is found by matching the path against the route table.)
 */
export function recordHttpMetrics(metrics: Metrics): RequestHandler {
  let templates: RouteTemplate[] | undefined;
  const labelOf = (req: Request, status: number): string => {
    if (status === 404 && !req.route) return UNMATCHED;
    templates ??= readRouteTemplates(req.app);
    const parts = splitPath(req.originalUrl.split('?')[0]);
    const method = req.method.toLowerCase();
    return templates.find((t) => matches(t, method, parts))?.label ?? UNMATCHED;
  };
  return (req, res, next) => {
    observeRequest(metrics, req.method, res, (status) => labelOf(req, status));
    next();
  };
}

/** The same count for a handler that serves one route template, on a bare node request (the accept lane). */
export function recordRouteMetrics(metrics: Metrics, route: string): (req: IncomingMessage, res: ServerResponse) => void {
  const labelOf = () => route;
  return (req, res) => observeRequest(metrics, req.method ?? 'GET', res, labelOf);
}

/** Names of the queues whose depth the scrape reports. */
export function observedQueues(deps: ApiDeps): string[] {
  const sends = deps.config.sesRegions.flatMap((r) => [queueNames.send(r, 'transactional'), queueNames.send(r, 'marketing')]);
  return [...sends, queueNames.campaigns, queueNames.sesEvents, queueNames.webhooks, queueNames.domains];
}

/**
 * GET /metrics in Prometheus text format; behind a bearer token when METRICS_TOKEN is set. One
 * render serves every scrape for METRICS_CACHE_MS, so many scrapers cost one render per period.
 */
export function metricsEndpoint(deps: ApiDeps, metrics: Metrics): RequestHandler {
  const scrape = createScrapeCache(
    async () => {
      await collectQueueDepths(metrics, deps.queues, observedQueues(deps)).catch((err) =>
        deps.log.warn({ err }, 'queue depths unavailable'),
      );
      return metrics.registry.metrics();
    },
    { maxAgeMs: deps.config.METRICS_CACHE_MS, now: () => deps.clock.now().getTime() },
  );
  return async (req, res) => {
    const token = deps.config.METRICS_TOKEN;
    if (token && !secretMatches(bearerToken(req.headers.authorization), token)) {
      res.status(401).json({ error: { code: 'UNAUTHORIZED', message: 'Metrics token required' } });
      return;
    }
    const text = await scrape();
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(text);
  };
}
