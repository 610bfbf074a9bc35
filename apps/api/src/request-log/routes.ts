import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { listLogs, listLogsQuery } from './list-logs';

export function requestLogRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.get('/', async (req, res) => {
    res.json(await listLogs(deps, req.auth, parseOrThrow(listLogsQuery, req.query, 'query')));
  });
  return r;
}
