import { createIdentityPort } from '@mailrail/domain/ses-identity/choose-adapter';
import { type IdentityPort } from '@mailrail/domain/ses-identity/port';
import { type Metrics } from '@mailrail/platform/metrics/metrics';
import { Router } from 'express';
import type { ApiKeyCache } from '@mailrail/domain/teams/api-keys';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import {
  addDomain,
  createDomainBody,
  deleteDomain,
  domainIdParam,
  getDomain,
  listDomains,
  startDomainVerification,
  updateDomain,
  updateDomainBody,
} from './domain-service';

export function domainRoutes(deps: ApiDeps, opts: { identities?: IdentityPort; metrics?: Metrics; apiKeyCache: ApiKeyCache }): Router {
  const d = {
    ...deps,
    identities: opts.identities ?? createIdentityPort(deps.config, { db: deps.db }),
    metrics: opts.metrics,
    apiKeyCache: opts.apiKeyCache,
  };
  const r = Router();
  const idOf = (params: unknown) => parseOrThrow(domainIdParam, params, 'path').id;

  r.post('/', async (req, res) => {
    res.json(await addDomain(d, req.auth, parseOrThrow(createDomainBody, req.body ?? {})));
  });
  r.get('/', async (req, res) => {
    res.json(await listDomains(d, req.auth));
  });
  r.get('/:id', async (req, res) => {
    res.json(await getDomain(d, req.auth, idOf(req.params)));
  });
  r.put('/:id/verify', async (req, res) => {
    res.json(await startDomainVerification(d, req.auth, idOf(req.params)));
  });
  r.patch('/:id', async (req, res) => {
    const id = idOf(req.params);
    res.json(await updateDomain(d, req.auth, id, parseOrThrow(updateDomainBody, req.body ?? {})));
  });
  r.delete('/:id', async (req, res) => {
    res.json(await deleteDomain(d, req.auth, idOf(req.params)));
  });
  return r;
}
