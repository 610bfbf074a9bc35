import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import { campaignIdParams, createCampaignBody, listCampaignsQuery, scheduleCampaignBody } from './schemas';
import { createCampaign, deleteCampaign, getCampaign, listCampaigns, pauseCampaign, resumeCampaign, scheduleCampaign } from './service';

export function campaignRoutes(deps: ApiDeps): Router {
  const r = Router();
  const idOf = (params: unknown) => parseOrThrow(campaignIdParams, params, 'path').campaignId;
  r.post('/', async (req, res) => {
    res.json(await createCampaign(deps, req.auth, parseOrThrow(createCampaignBody, req.body)));
  });
  r.get('/', async (req, res) => {
    res.json(await listCampaigns(deps, req.auth, parseOrThrow(listCampaignsQuery, req.query, 'query')));
  });
  r.get('/:campaignId', async (req, res) => {
    res.json(await getCampaign(deps, req.auth, idOf(req.params)));
  });
  r.post('/:campaignId/schedule', async (req, res) => {
    const id = idOf(req.params);
    res.json(await scheduleCampaign(deps, req.auth, id, parseOrThrow(scheduleCampaignBody, req.body ?? {})));
  });
  r.post('/:campaignId/pause', async (req, res) => {
    res.json(await pauseCampaign(deps, req.auth, idOf(req.params)));
  });
  r.post('/:campaignId/resume', async (req, res) => {
    res.json(await resumeCampaign(deps, req.auth, idOf(req.params)));
  });
  r.delete('/:campaignId', async (req, res) => {
    res.json(await deleteCampaign(deps, req.auth, idOf(req.params)));
  });
  return r;
}
