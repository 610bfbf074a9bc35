import { z } from 'zod';
import { newId } from '@mailrail/platform/ids';
import { badRequest, notFound } from '@mailrail/domain/errors/api-error';
import { renderTemplateContent } from '@mailrail/domain/templates/render-template';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { MAX_BODY_LENGTH, MAX_ID_LENGTH, MAX_NAME_LENGTH, MAX_SUBJECT_LENGTH } from '../http/limits';
import { pageQuery } from '../http/query';

// Team-owned transactional templates: `{{name}}` / `{{name,fallback=x}}` placeholders in subject,
// html and text are filled from a send's `variables` (packages/domain/src/templates). A template
// written in the dashboard's visual editor keeps the editor JSON in `content`; `html` is then that
// document rendered on save, so a send reads `html` as for any template (useSend's fields unchanged).

const body = z.string().min(1).max(MAX_BODY_LENGTH).nullable();

/** The editor JSON structure, as campaigns store it (docs/campaigns.md, "Content and personalization"). */
const content = z
  .string()
  .min(1)
  .max(MAX_BODY_LENGTH)
  .describe(
    "The body as the visual editor's JSON document (a string, as campaigns' `content`). Rendered on save to email-safe HTML stored in `html`; variables become {{id,fallback=x}} placeholders filled from a send's `variables`. Wins over `html`; setting `html` alone drops it.",
  );

export const createTemplateBody = z.object({
  name: z.string().trim().min(1).max(MAX_NAME_LENGTH),
  subject: z.string().min(1).max(MAX_SUBJECT_LENGTH),
  html: body.optional(),
  text: body.optional(),
  content: content.optional(),
});

export const updateTemplateBody = createTemplateBody.partial().refine((v) => Object.values(v).some((x) => x !== undefined), {
  message: 'Provide at least one of name, subject, html, text, content',
});

export const templateIdParam = z.object({ templateId: z.string().min(1).max(MAX_ID_LENGTH) });

export const listTemplatesQuery = z.object(pageQuery);

const select = { id: true, name: true, subject: true, html: true, text: true, content: true, createdAt: true, updatedAt: true } as const;

/** `html` and `content` as stored: editor JSON rendered to its HTML; HTML given alone drops the document. */
function bodyFields(input: { html?: string | null; content?: string }): { html?: string | null; content?: string | null } {
  if (input.content !== undefined) {
    const html = renderTemplateContent(input.content);
    if (html === null) throw badRequest('Invalid content JSON', [{ path: ['content'], message: 'Invalid content JSON' }]);
    return { html, content: input.content };
  }
  return input.html !== undefined ? { html: input.html, content: null } : {};
}

export async function createTemplate(deps: ApiDeps, auth: AuthContext, input: z.infer<typeof createTemplateBody>) {
  return deps.db.template.create({
    data: {
      id: newId(),
      teamId: auth.teamId,
      name: input.name,
      subject: input.subject,
      html: null,
      text: input.text ?? null,
      ...bodyFields(input),
    },
    select,
  });
}

export async function listTemplates(deps: ApiDeps, auth: AuthContext, q: z.infer<typeof listTemplatesQuery>) {
  const where = { teamId: auth.teamId };
  const [data, count] = await Promise.all([
    deps.db.template.findMany({
      where,
      select,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (q.page - 1) * q.limit,
      take: q.limit,
    }),
    deps.db.template.count({ where }),
  ]);
  return { data, count };
}

export async function getTemplate(deps: ApiDeps, auth: AuthContext, id: string) {
  const t = await deps.db.template.findFirst({ where: { id, teamId: auth.teamId }, select });
  if (!t) throw notFound('Template not found');
  return t;
}

export async function updateTemplate(deps: ApiDeps, auth: AuthContext, id: string, input: z.infer<typeof updateTemplateBody>) {
  const { html: _html, content: _content, ...rest } = input;
  // updateMany scopes the write to the team in the same statement.
  const { count } = await deps.db.template.updateMany({ where: { id, teamId: auth.teamId }, data: { ...rest, ...bodyFields(input) } });
  if (count === 0) throw notFound('Template not found');
  return getTemplate(deps, auth, id);
}

export async function deleteTemplate(deps: ApiDeps, auth: AuthContext, id: string) {
  const { count } = await deps.db.template.deleteMany({ where: { id, teamId: auth.teamId } });
  if (count === 0) throw notFound('Template not found');
  return { id, success: true };
}
