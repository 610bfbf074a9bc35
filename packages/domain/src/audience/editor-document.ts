// The editor document: the rich-text JSON (a ProseMirror/TipTap-style tree, as useSend's editor
// stores) that contact books answer for `doubleOptInContent`, and its rendering to simple HTML.
import { escapeHtml } from '../render/template';

export interface EditorNode {
  type: string;
  attrs?: Record<string, unknown>;
  content?: EditorNode[];
  text?: string;
  marks?: { type: string; attrs?: Record<string, unknown> }[];
}

export interface EditorDocument extends EditorNode {
  type: 'doc';
}

const isNode = (v: unknown): v is EditorNode =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as EditorNode).type === 'string';

/**
 * Stored content (a string) as a document. Editor JSON of a document is answered as is, editor
 * JSON of a single node is wrapped in a document, and anything else (plain text or HTML) becomes a
 * document holding one `html` node whose `attrs.html` is the string unchanged.
 */
export function toEditorDocument(content: string | null): EditorDocument | null {
  if (content === null) return null;
  const trimmed = content.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (isNode(parsed)) return parsed.type === 'doc' ? (parsed as EditorDocument) : { type: 'doc', content: [parsed] };
    } catch {
      // Not JSON: it is text or HTML.
    }
  }
  return { type: 'doc', content: [{ type: 'html', attrs: { html: content } }] };
}

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

export interface EditorRenderOptions {
  /** Values of `variable` nodes, looked up case-insensitively (then the node's fallback). */
  variables?: Record<string, string>;
}

function renderMarks(html: string, marks: EditorNode['marks']): string {
  let out = html;
  for (const m of marks ?? []) {
    if (m.type === 'bold') out = `<strong>${out}</strong>`;
    else if (m.type === 'italic') out = `<em>${out}</em>`;
    else if (m.type === 'underline') out = `<u>${out}</u>`;
    else if (m.type === 'strike') out = `<s>${out}</s>`;
    else if (m.type === 'code') out = `<code>${out}</code>`;
    else if (m.type === 'link') out = `<a href="${escapeHtml(str(m.attrs?.href))}">${out}</a>`;
  }
  return out;
}

function renderNode(node: EditorNode, opts: EditorRenderOptions): string {
  const inner = () =>
    (node.content ?? [])
      .filter(isNode)
      .map((n) => renderNode(n, opts))
      .join('');
  const a = node.attrs ?? {};
  switch (node.type) {
    case 'doc':
      return inner();
    case 'text':
      return renderMarks(escapeHtml(str(node.text)), node.marks);
    case 'paragraph':
      return `<p style="margin:0 0 16px 0;line-height:1.5">${inner()}</p>`;
    case 'heading': {
      const level = Math.min(6, Math.max(1, Number(a.level) || 1));
      return `<h${level}>${inner()}</h${level}>`;
    }
    case 'hardBreak':
      return '<br>';
    case 'horizontalRule':
      return '<hr>';
    case 'bulletList':
      return `<ul>${inner()}</ul>`;
    case 'orderedList':
      return `<ol>${inner()}</ol>`;
    case 'listItem':
      return `<li>${inner()}</li>`;
    case 'blockquote':
      return `<blockquote>${inner()}</blockquote>`;
    case 'codeBlock':
      return `<pre>${inner()}</pre>`;
    case 'image':
      return `<img src="${escapeHtml(str(a.src))}" alt="${escapeHtml(str(a.alt))}" style="max-width:100%">`;
    case 'button':
      return (
        `<p style="margin:24px 0"><a href="${escapeHtml(str(a.url ?? a.href))}" style="display:inline-block;padding:10px 20px;` +
        `background:#111827;color:#ffffff;border-radius:6px;text-decoration:none">${escapeHtml(str(a.text ?? a.label) || 'Confirm')}</a></p>`
      );
    case 'variable': {
      const id = str(a.id).toLowerCase();
      const hit = Object.entries(opts.variables ?? {}).find(([k]) => k.toLowerCase() === id)?.[1];
      return escapeHtml(hit || str(a.fallback));
    }
    case 'html':
      // Raw HTML the book owner wrote (see toEditorDocument): kept as is.
      return str(a.html);
    default:
      return inner();
  }
}

/** Simple, email-safe HTML of a document. */
export function renderEditorDocument(doc: EditorNode, opts: EditorRenderOptions = {}): string {
  return (
    '<!doctype html><html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#111827">' +
    `<div style="max-width:560px;margin:0 auto;padding:24px">${renderNode(doc, opts)}</div></body></html>`
  );
}
