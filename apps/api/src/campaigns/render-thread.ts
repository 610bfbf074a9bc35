// The entry of a preview render thread (render-pool.ts): piscina calls the default export with
// each task. Only the pure renderer is loaded here, not the API.
import { renderPreview, type PreviewInput, type PreviewOutcome } from '@mailrail/domain/campaigns/render-preview';
import { renderTemplatePreview, type TemplatePreviewInput, type TemplatePreviewOutcome } from '@mailrail/domain/templates/render-template';

export default function renderTask(input: PreviewInput): PreviewOutcome {
  return renderPreview(input);
}

/** A transactional template's preview (piscina's `name: 'renderTemplateTask'`). */
export function renderTemplateTask(input: TemplatePreviewInput): TemplatePreviewOutcome {
  return renderTemplatePreview(input);
}
