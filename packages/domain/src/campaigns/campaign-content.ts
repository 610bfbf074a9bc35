import { renderEditorDocument, toEditorDocument, type EditorNode } from '../audience/editor-document';
import { htmlToPlainText } from '../render/html-to-text';
import { renderTemplate, type TemplateVariables } from '../render/template';

// A campaign body is rendered in two steps: once per campaign (editor JSON to an HTML template,
// the preheader, the text part) and once per contact (placeholders only: cheap at 100,000 contacts).

const UNSUBSCRIBE_PLACEHOLDER = /\{\{\s*(?:usesend|unsend)_unsubscribe_url\s*\}\}/i;

export const UNSUBSCRIBE_REQUIRED =
  'Campaign must include an unsubscribe link before sending: add a footer block in the visual editor, or {{usesend_unsubscribe_url}} to the HTML';

export function hasUnsubscribePlaceholder(body: string | null | undefined): boolean {
  return !!body && UNSUBSCRIBE_PLACEHOLDER.test(body);
}

/** Collects the ids of `variable` nodes, so they can become `{{id,fallback=x}}` placeholders. */
function variablePlaceholders(node: EditorNode, out: Record<string, string>): Record<string, string> {
  if (node.type === 'variable' && typeof node.attrs?.id === 'string') {
    const id = node.attrs.id.replace(/[^A-Za-z0-9_.-]/g, '');
    const fallback =
      typeof node.attrs.fallback === 'string' && node.attrs.fallback ? `,fallback=${node.attrs.fallback.replace(/[{}]/g, '')}` : '';
    out[node.attrs.id] = `{{${id}${fallback}}}`;
  }
  for (const child of node.content ?? []) variablePlaceholders(child, out);
  return out;
}

/**
 * Editor JSON (paragraphs, headings, links, buttons, images, lists, variables) to an HTML
 * template whose variables are still `{{...}}` placeholders. Null when it is not editor JSON.
 */
export function renderCampaignContent(content: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as EditorNode).type !== 'string') return null;
  const doc = toEditorDocument(content)!;
  return renderEditorDocument(doc, { variables: variablePlaceholders(doc, {}) });
}

/** The hidden preheader: the line mail clients show beside the subject. */
function withPreheader(html: string, previewText: string | null | undefined): string {
  if (!previewText) return html;
  const escaped = previewText.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const preheader = `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${escaped}</div>`;
  const bodyEnd = bodyTagEnd(html);
  return bodyEnd === -1 ? preheader + html : html.slice(0, bodyEnd) + preheader + html.slice(bodyEnd);
}

/**
 * Where the first `<body ...>` tag ends, or -1: what /<body[^>]*>/i found, without its search from
 * every `<body` (quadratic: 120 KB of `<BODY` blocked the worker 17 s). If the first `<body` has no
 * `>` after it, no later one has either.
 */
function bodyTagEnd(html: string): number {
  const open = html.search(/<body/i);
  if (open === -1) return -1;
  const close = html.indexOf('>', open + '<body'.length);
  return close === -1 ? -1 : close + 1;
}

export interface CampaignBody {
  subject: string;
  html: string;
  text: string;
}

/** Once per campaign: the HTML template with its preheader and the text template derived from it. */
export function prepareCampaignBody(c: { subject: string; html: string; previewText?: string | null }): CampaignBody {
  const html = withPreheader(c.html, c.previewText);
  // Converted from the body without the preheader: the hidden line would otherwise lead the text.
  const text = htmlToPlainText(c.html);
  return { subject: c.subject, html, text };
}

export interface CampaignContact {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: unknown;
}

/**
 * The variables of one contact: its fields, its properties (looked up case-insensitively by the
 * renderer), the book's declared variables (empty when the contact has no value, so the fallback
 * applies) and the unsubscribe URL under both names.
 */
export function contactVariables(contact: CampaignContact, bookVariables: string[], unsubscribeUrl: string): TemplateVariables {
  const vars: TemplateVariables = {};
  const props = contact.properties;
  if (props && typeof props === 'object' && !Array.isArray(props)) {
    for (const [k, v] of Object.entries(props as Record<string, unknown>)) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') vars[k] = v;
    }
  }
  const known = new Set(Object.keys(vars).map((k) => k.toLowerCase()));
  for (const name of bookVariables) if (!known.has(name.toLowerCase())) vars[name] = '';
  vars.email = contact.email;
  vars.firstName = contact.firstName ?? '';
  vars.lastName = contact.lastName ?? '';
  vars.usesend_unsubscribe_url = unsubscribeUrl;
  vars.unsend_unsubscribe_url = unsubscribeUrl;
  return vars;
}

/**
 * Once per contact. Unknown names stay as written (as useSend does); known empty ones take the
 * fallback: the placeholder's own, else the book's registry fallback (`propertyFallbacks`, by name).
 */
export function personalizeCampaignBody(
  body: CampaignBody,
  vars: TemplateVariables,
  propertyFallbacks: Record<string, string> = {},
): CampaignBody {
  const defaultFallbacks = propertyFallbacks;
  return {
    subject: renderTemplate(body.subject, vars, { onMissing: 'keep', defaultFallbacks }),
    html: renderTemplate(body.html, vars, { escapeHtml: true, onMissing: 'keep', defaultFallbacks }),
    text: renderTemplate(body.text, vars, { onMissing: 'keep', defaultFallbacks }),
  };
}
