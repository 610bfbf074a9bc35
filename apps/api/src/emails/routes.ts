import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { listEmails, listEmailsQuery } from './list-emails';

export function emailRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.get('/', async (req, res) => {
    const q = parseOrThrow(listEmailsQuery, req.query, 'query');
    res.json(await listEmails(deps, req.auth, q));
  });
  return r;
}
