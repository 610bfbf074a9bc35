import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import { createTemplateBody, listTemplatesQuery, templateIdParam, updateTemplateBody } from './templates';

const template = z
  .object({
    id: z.string(),
    name: z.string(),
    subject: z.string(),
    html: z.string().nullable(),
    text: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Template' });

export function documentTemplateRoutes(r: DocRegistry) {
  const tag = 'Templates';
  const params = templateIdParam;
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/templates',
    tag,
    summary: 'Create a template ({{var}} and {{var,fallback=x}} placeholders)',
    body: createTemplateBody,
    response: template,
    example: { name: 'welcome', subject: 'Welcome, {{name,fallback=there}}', html: '<p>Hi {{name}}</p>' },
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/templates',
    tag,
    summary: 'List templates',
    query: listTemplatesQuery,
    response: z.object({ data: z.array(template), count: z.number().int() }),
  });
  documentRoute(r, { method: 'get', path: '/api/v1/templates/:templateId', tag, summary: 'Get a template', params, response: template });
  documentRoute(r, {
    method: 'patch',
    path: '/api/v1/templates/:templateId',
    tag,
    summary: 'Update a template',
    params,
    body: updateTemplateBody,
    response: template,
    example: { subject: 'Hello {{name}}' },
  });
  documentRoute(r, {
    method: 'delete',
    path: '/api/v1/templates/:templateId',
    tag,
    summary: 'Delete a template',
    params,
    response: z.object({ id: z.string(), success: z.literal(true) }),
  });
}
