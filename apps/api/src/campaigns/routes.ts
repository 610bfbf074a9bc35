import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { readJsonBody } from '../http/json-body';
import { parseOrThrow } from '../http/validate';
import type { SendContext } from '../emails/send-emails';
import { previewCampaign, sendCampaignTest } from './preview';
import { listCampaignRecipients } from './recipients';
import {
  campaignIdParams,
  createCampaignBody,
  listCampaignRecipientsQuery,
  listCampaignsQuery,
  previewCampaignBody,
  scheduleCampaignBody,
  testCampaignBody,
  updateCampaignBody,
} from './schemas';
import {
  createCampaign,
  deleteCampaign,
  getCampaign,
  listCampaigns,
  pauseCampaign,
  resumeCampaign,
  scheduleCampaign,
  updateCampaign,
} from './service';

/** `send` is the process's email intake: test sends take the path of POST /api/v1/emails. */
export function campaignRoutes(deps: ApiDeps, send: SendContext): Router {
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
  r.get('/:campaignId/recipients', async (req, res) => {
    const id = idOf(req.params);
    res.json(await listCampaignRecipients(deps, req.auth, id, parseOrThrow(listCampaignRecipientsQuery, req.query, 'query')));
  });
  r.patch('/:campaignId', async (req, res) => {
    const id = idOf(req.params);
    res.json(await updateCampaign(deps, req.auth, id, parseOrThrow(updateCampaignBody, req.body ?? {})));
  });
  r.post('/:campaignId/preview', async (req, res) => {
    const id = idOf(req.params);
    const readBody = async () => {
      await readJsonBody(req, res, deps.config.BODY_LIMIT);
      return parseOrThrow(previewCampaignBody, req.body ?? {});
    };
    res.json(await previewCampaign(deps, req.auth, id, readBody));
  });
  r.post('/:campaignId/test', async (req, res) => {
    const id = idOf(req.params);
    res.json(await sendCampaignTest(send, req.auth, id, parseOrThrow(testCampaignBody, req.body ?? {})));
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
