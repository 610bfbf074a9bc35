import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import {
  addSuppression,
  addSuppressionBody,
  listSuppressions,
  listSuppressionsQuery,
  removeSuppression,
  suppressionEmailParam,
} from './suppressions';

export function suppressionRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.get('/', async (req, res) => {
    res.json(await listSuppressions(deps, req.auth, parseOrThrow(listSuppressionsQuery, req.query, 'query')));
  });
  r.post('/', async (req, res) => {
    res.json(await addSuppression(deps, req.auth, parseOrThrow(addSuppressionBody, req.body)));
  });
  r.delete('/:email', async (req, res) => {
    const { email } = parseOrThrow(suppressionEmailParam, req.params, 'path');
    res.json(await removeSuppression(deps, req.auth, email));
  });
  return r;
}
