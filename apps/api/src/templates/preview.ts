import { z } from 'zod';
import { ApiError, badRequest } from '@mailrail/domain/errors/api-error';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { MAX_BODY_LENGTH, MAX_SHORT_TEXT_LENGTH, MAX_SUBJECT_LENGTH } from '../http/limits';
import { getTemplate } from './templates';

// The dashboard editor's preview of a template: the stored template, or the editor's unsaved
// subject and body, filled with sample variables by the function POST /api/v1/emails sends with
// (fillTemplate), rendered on the campaigns' render threads within the team's preview budget.

const MAX_PREVIEW_VARIABLES = 100;

export const previewTemplateBody = z.object({
  subject: z.string().min(1).max(MAX_SUBJECT_LENGTH).optional(),
  content: z.string().min(1).max(MAX_BODY_LENGTH).optional().describe('Editor JSON to render instead of the stored body'),
  html: z.string().min(1).max(MAX_BODY_LENGTH).optional().describe('HTML to render instead of the stored body'),
  text: z.string().min(1).max(MAX_BODY_LENGTH).optional(),
  variables: z
    .record(z.string().min(1).max(MAX_SHORT_TEXT_LENGTH), z.string().max(MAX_SHORT_TEXT_LENGTH))
    .refine((v) => Object.keys(v).length <= MAX_PREVIEW_VARIABLES, `at most ${MAX_PREVIEW_VARIABLES} variables`)
    .optional()
    .describe("Sample values, as a send's `variables`; a name without one shows its fallback or nothing, as a send does"),
});
export type PreviewTemplateBody = z.infer<typeof previewTemplateBody>;

/**
 * Takes its place in the team's preview budget before `readBody` reads the request, as a campaign
 * preview does: a team over its budget is refused without the cost of parsing a large body.
 */
export function previewTemplate(deps: ApiDeps, auth: AuthContext, id: string, readBody: () => Promise<PreviewTemplateBody>) {
  return deps.budgets.run('preview', auth.teamId, async () => {
    const body = await readBody();
    const t = await getTemplate(deps, auth, id);
    const maxBytes = deps.config.CAMPAIGN_PREVIEW_MAX_MB * 1024 * 1024;
    const outcome = await deps.previews.renderTemplate({
      subject: body.subject ?? t.subject,
      ...(body.content !== undefined ? { content: body.content } : body.html !== undefined ? { html: body.html } : { html: t.html }),
      text: body.text ?? t.text,
      variables: body.variables ?? {},
      maxHtmlBytes: maxBytes,
    });
    if ('rendered' in outcome) return outcome.rendered;
    const refusal = outcome.refused;
    if (refusal.kind === 'invalid-content')
      throw badRequest('Invalid content JSON', [{ path: ['content'], message: 'Invalid content JSON' }]);
    if (refusal.kind === 'no-content')
      throw badRequest('The template has neither html nor text', [{ path: ['html'], message: 'No content to preview' }]);
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      `The template's ${refusal.field} is ${(refusal.bytes / 1048576).toFixed(1)} MB; previews render at most ${deps.config.CAMPAIGN_PREVIEW_MAX_MB} MB (CAMPAIGN_PREVIEW_MAX_MB)`,
      [{ path: [refusal.field], message: 'too large to preview' }],
    );
  });
}
