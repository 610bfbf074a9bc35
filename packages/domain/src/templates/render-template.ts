import { renderCampaignContent } from '../campaigns/campaign-content';
import { bytesOver, type PreviewRefusal } from '../campaigns/render-preview';
import { htmlToPlainText } from '../render/html-to-text';
import { renderTemplate, type TemplateVariables } from '../render/template';

// A transactional template filled with a send's `variables`: POST /api/v1/emails sends what
// fillTemplate returns, and the dashboard's preview shows the same (renderTemplatePreview). A
// template written in the visual editor stores its editor JSON in `content` and, in `html`, that
// document rendered once by the campaigns' renderer (renderCampaignContent), on save.

export interface StoredTemplate {
  subject: string;
  html: string | null;
  text: string | null;
}

/** Subject, html and text of a template with the send's variables (html values escaped). */
export function fillTemplate(t: StoredTemplate, vars: TemplateVariables) {
  return {
    subject: renderTemplate(t.subject, vars),
    html: t.html ? renderTemplate(t.html, vars, { escapeHtml: true }) : null,
    text: t.text ? renderTemplate(t.text, vars) : null,
  };
}

/** The HTML a template's editor JSON renders to, or null when `content` is not editor JSON. */
export function renderTemplateContent(content: string): string | null {
  return renderCampaignContent(content);
}

export interface TemplatePreviewInput {
  subject: string;
  /** The editor JSON to render, else `html`. */
  content?: string;
  html?: string | null;
  text?: string | null;
  variables: Record<string, string>;
  /** The largest HTML rendered (CAMPAIGN_PREVIEW_MAX_MB), checked after the editor JSON became HTML. */
  maxHtmlBytes: number;
}

export interface RenderedTemplatePreview {
  subject: string;
  html: string | null;
  text: string;
  /** True when the template has no text of its own: `text` is the HTML's, which a send does not carry. */
  textDerived: boolean;
}

export type TemplatePreviewOutcome = { rendered: RenderedTemplatePreview } | { refused: PreviewRefusal };

/** The template as a send with `variables` gets it; pure and synchronous (it runs on a render thread). */
export function renderTemplatePreview(input: TemplatePreviewInput): TemplatePreviewOutcome {
  let html = input.html ?? null;
  if (input.content !== undefined) {
    html = renderTemplateContent(input.content);
    if (html === null) return { refused: { kind: 'invalid-content' } };
  }
  if (!html && !input.text) return { refused: { kind: 'no-content' } };
  const bytes = html === null ? null : bytesOver(html, input.maxHtmlBytes);
  if (bytes !== null) return { refused: { kind: 'too-large', field: input.content !== undefined ? 'content' : 'html', bytes } };
  const filled = fillTemplate({ subject: input.subject, html, text: input.text ?? null }, input.variables);
  const text = filled.text ?? htmlToPlainText(filled.html ?? '');
  return { rendered: { subject: filled.subject, html: filled.html, text, textDerived: filled.text === null } };
}
