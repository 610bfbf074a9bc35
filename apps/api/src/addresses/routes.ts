import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { addressParam, addressReport, addressReportQuery } from './address-report';

export function addressRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.get('/:address', async (req, res) => {
    const { address } = parseOrThrow(addressParam, req.params, 'path');
    res.json(await addressReport(deps, req.auth, address, parseOrThrow(addressReportQuery, req.query, 'query')));
  });
  return r;
}
