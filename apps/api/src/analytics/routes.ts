import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { emailTimeSeries, reputationMetrics, reputationQuery, timeSeriesQuery } from './analytics';

export function analyticsRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.get('/email-time-series', async (req, res) => {
    res.json(await emailTimeSeries(deps, req.auth, parseOrThrow(timeSeriesQuery, req.query, 'query')));
  });
  r.get('/reputation-metrics', async (req, res) => {
    res.json(await reputationMetrics(deps, req.auth, parseOrThrow(reputationQuery, req.query, 'query')));
  });
  return r;
}
