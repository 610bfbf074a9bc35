// The entry of a preview render thread (render-pool.ts): piscina calls the default export with
// each task. Only the pure renderer is loaded here, not the API.
import { renderPreview, type PreviewInput, type PreviewOutcome } from '@mailrail/domain/campaigns/render-preview';

export default function renderTask(input: PreviewInput): PreviewOutcome {
  return renderPreview(input);
}
