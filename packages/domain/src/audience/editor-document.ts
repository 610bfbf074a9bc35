// The editor document: the rich-text JSON (a ProseMirror/TipTap-style tree, as useSend's editor
// stores) that contact books answer for `doubleOptInContent` and campaigns store in `content`.
import { renderEmailDocument } from '../email-editor/render-email-document';

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

export interface EditorRenderOptions {
  /** Values of `variable` nodes, looked up case-insensitively (then the node's fallback). */
  variables?: Record<string, string>;
}

/** Email-safe HTML of a document (React Email's tables and inline styles: email-editor/). */
export function renderEditorDocument(doc: EditorNode, opts: EditorRenderOptions = {}): string {
  const values = new Map(Object.entries(opts.variables ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return renderEmailDocument(doc, { variable: (id, fallback) => values.get(id.toLowerCase()) || fallback });
}
