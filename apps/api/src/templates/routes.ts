import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { readJsonBody } from '../http/json-body';
import { parseOrThrow } from '../http/validate';
import { previewTemplate, previewTemplateBody } from './preview';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  updateTemplate,
  createTemplateBody,
  listTemplatesQuery,
  templateIdParam,
  updateTemplateBody,
} from './templates';

const template = z
  .object({
    id: z.string(),
    name: z.string(),
    subject: z.string(),
    html: z.string().nullable(),
    text: z.string().nullable(),
    content: z
      .string()
      .nullable()
      .describe("The visual editor's document (editor JSON) when the template was written with it; `html` is its rendering"),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Template' });

const route = declareRoute<ApiDeps>();
const tag = 'Templates';
const params = templateIdParam;

export const templateRoutes = [
  route({
    method: 'post',
    path: '/api/v1/templates',
    tag,
    summary: 'Create a template ({{var}} and {{var,fallback=x}} placeholders)',
    body: createTemplateBody,
    response: template,
    example: { name: 'welcome', subject: 'Welcome, {{name,fallback=there}}', html: '<p>Hi {{name}}</p>' },
    handle: (deps, { auth, body }) => createTemplate(deps, auth, body),
  }),
  route({
    method: 'get',
    path: '/api/v1/templates',
    tag,
    summary: 'List templates',
    query: listTemplatesQuery,
    response: z.object({ data: z.array(template), count: z.number().int() }),
    handle: (deps, { auth, query }) => listTemplates(deps, auth, query),
  }),
  route({
    method: 'get',
    path: '/api/v1/templates/:templateId',
    tag,
    summary: 'Get a template',
    params,
    response: template,
    handle: (deps, { auth, params }) => getTemplate(deps, auth, params.templateId),
  }),
  route({
    method: 'patch',
    path: '/api/v1/templates/:templateId',
    tag,
    summary: 'Update a template',
    params,
    body: updateTemplateBody,
    response: template,
    example: { subject: 'Hello {{name}}' },
    handle: (deps, { auth, params, body }) => updateTemplate(deps, auth, params.templateId, body),
  }),
  route({
    method: 'delete',
    path: '/api/v1/templates/:templateId',
    tag,
    summary: 'Delete a template',
    params,
    response: z.object({ id: z.string(), success: z.literal(true) }),
    handle: (deps, { auth, params }) => deleteTemplate(deps, auth, params.templateId),
  }),
  route({
    method: 'post',
    path: '/api/v1/templates/:templateId/preview',
    tag,
    summary: 'Render the template as a send with these variables gets it',
    description:
      "Overrides (the editor's unsaved subject, `content` or `html`, `text`) replace the stored ones; `variables` are sample values, filled as POST /api/v1/emails fills a send's. `text` is the template's own text, or (`textDerived: true`) the HTML's text, which a send of a template without text does not carry. Rendered within the team's preview budget (PREVIEW_CONCURRENCY_PER_TEAM); a body over CAMPAIGN_PREVIEW_MAX_MB is a 413.",
    params,
    body: previewTemplateBody,
    example: {
      content:
        '{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hi "},{"type":"variable","attrs":{"id":"name","fallback":"there"}}]}]}',
      variables: { name: 'Ada' },
    },
    response: z.object({ subject: z.string(), html: z.string().nullable(), text: z.string(), textDerived: z.boolean() }),
    errors: [404, 413],
    // The body is read only once the preview has its place in the preview budget (http/json-body.ts).
    ownBody: 'late-json',
    serve: async (deps, { auth, params }, req, res) => {
      const readBody = async () => {
        await readJsonBody(req, res, deps.config.BODY_LIMIT);
        return parseOrThrow(previewTemplateBody, req.body ?? {});
      };
      res.json(await previewTemplate(deps, auth, params.templateId, readBody));
    },
  }),
];
