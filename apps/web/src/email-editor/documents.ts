// Editor documents as `content` stores them (a JSON string), without the editor itself: the pages
// that hold a document import this and load the editor (EmailEditor.tsx) only when it is shown.

export interface EmailDocument {
  type: 'doc';
  content: { type: string; [key: string]: unknown }[];
}

const isDoc = (v: unknown): v is EmailDocument =>
  typeof v === 'object' && v !== null && (v as EmailDocument).type === 'doc' && Array.isArray((v as EmailDocument).content);

/** The stored JSON as a document; a single node is wrapped, anything else starts an empty document. */
export function parseEmailDocument(value: string): EmailDocument {
  try {
    const parsed: unknown = JSON.parse(value);
    if (isDoc(parsed)) return parsed;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { type?: unknown }).type === 'string') {
      return { type: 'doc', content: [parsed as EmailDocument['content'][number]] };
    }
  } catch {
    // Not JSON.
  }
  return { type: 'doc', content: [{ type: 'paragraph' }] };
}

/** HTML kept as one raw block of a new document (switching an HTML body to blocks loses nothing). */
export function htmlAsDocument(html: string): string {
  const doc: EmailDocument = { type: 'doc', content: [{ type: 'html', attrs: { html } }, { type: 'paragraph' }] };
  return JSON.stringify(doc);
}

/** The variables every campaign can use, after the book's own (its property names). */
export const BUILT_IN_VARIABLES = ['firstName', 'lastName', 'email', 'usesend_unsubscribe_url'];

/** The picker's list: the given names (a property registry, or the book's variables) then the built-in ones, once each. */
export function variableChoices(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return [...names, ...BUILT_IN_VARIABLES].filter((n) => {
    const key = n.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
