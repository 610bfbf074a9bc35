// `{{name}}` and `{{name,fallback=x}}` placeholders, shared by transactional templates and
// campaigns. Whitespace inside the braces is allowed; `contact.` before the name is accepted.
const PLACEHOLDER = /\{\{\s*(?:contact\.)?([A-Za-z0-9_-]+)\s*(?:,\s*fallback\s*=\s*([^}]*?))?\s*\}\}/g;

export type TemplateVariables = Record<string, string | number | boolean | null | undefined>;

export interface RenderOptions {
  /** HTML-escape substituted values (and fallbacks): set for the html part. */
  escapeHtml?: boolean;
  /** What an unknown name without fallback becomes: '' (default) or the placeholder as written. */
  onMissing?: 'empty' | 'keep';
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Looks a name up exactly first, then case-insensitively (contact properties are not case-stable). */
function lookup(vars: TemplateVariables, lowered: Map<string, string>, name: string): string | undefined {
  const direct = vars[name];
  if (direct !== undefined && direct !== null) return String(direct);
  const key = lowered.get(name.toLowerCase());
  const v = key === undefined ? undefined : vars[key];
  return v === undefined || v === null ? undefined : String(v);
}

/** Replaces every placeholder in `source`; an empty or missing value takes the fallback. */
export function renderTemplate(source: string, vars: TemplateVariables = {}, opts: RenderOptions = {}): string {
  if (!source.includes('{{')) return source;
  const lowered = new Map(Object.keys(vars).map((k) => [k.toLowerCase(), k]));
  return source.replace(PLACEHOLDER, (whole, name: string, fallback: string | undefined) => {
    const value = lookup(vars, lowered, name);
    let out: string;
    if (value !== undefined && value !== '') out = value;
    else if (fallback !== undefined) out = fallback;
    else if (opts.onMissing === 'keep' && value === undefined) return whole;
    else out = '';
    return opts.escapeHtml ? escapeHtml(out) : out;
  });
}
