import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { parseOrThrow } from '../http/validate';
import {
  createTemplate,
  createTemplateBody,
  deleteTemplate,
  getTemplate,
  listTemplates,
  listTemplatesQuery,
  templateIdParam,
  updateTemplate,
  updateTemplateBody,
} from './templates';

export function templateRoutes(deps: ApiDeps): Router {
  const r = Router();
  r.post('/', async (req, res) => {
    res.json(await createTemplate(deps, req.auth, parseOrThrow(createTemplateBody, req.body ?? {})));
  });
  r.get('/', async (req, res) => {
    res.json(await listTemplates(deps, req.auth, parseOrThrow(listTemplatesQuery, req.query, 'query')));
  });
  r.get('/:templateId', async (req, res) => {
    const { templateId } = parseOrThrow(templateIdParam, req.params, 'path');
    res.json(await getTemplate(deps, req.auth, templateId));
  });
  r.patch('/:templateId', async (req, res) => {
    const { templateId } = parseOrThrow(templateIdParam, req.params, 'path');
    res.json(await updateTemplate(deps, req.auth, templateId, parseOrThrow(updateTemplateBody, req.body ?? {})));
  });
  r.delete('/:templateId', async (req, res) => {
    const { templateId } = parseOrThrow(templateIdParam, req.params, 'path');
    res.json(await deleteTemplate(deps, req.auth, templateId));
  });
  return r;
}
