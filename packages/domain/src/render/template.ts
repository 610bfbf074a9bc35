// `{{name}}` and `{{name,fallback=x}}` placeholders, shared by transactional templates and
// campaigns. Whitespace inside the braces is allowed; `contact.` before the name is accepted.
//
// The placeholders are found by one left-to-right scan: a linear regex for the head and a cached
// search for the closing `}}`. The former single regex
// /\{\{\s*(?:contact\.)?([A-Za-z0-9_-]+)\s*(?:,\s*fallback\s*=\s*([^}]*?))?\s*\}\}/g backtracked
// cubically on `{{a,fallback=` followed by spaces (2,500 spaces: 6 s of blocked event loop).
// The scan accepts exactly what that regex matched, with the same captures:
//   - `{{`, optional whitespace, optional `contact.`, a name of [A-Za-z0-9_-]+, optional whitespace;
//   - then either `}}`, or `,` ws `fallback` ws `=` ws, then the fallback: everything up to the
//     first `}`, which must be followed by a second `}`; the fallback is trimmed of whitespace;
//   - where no placeholder starts at a `{{`, the search resumes one character later (`{{{a}}`
//     renders as `{` + a), as the global regex did.
// Every character is read a bounded number of times, so rendering is linear in the template's length.

export type TemplateVariables = Record<string, string | number | boolean | null | undefined>;

export interface RenderOptions {
  /** HTML-escape substituted values (and fallbacks): set for the html part. */
  escapeHtml?: boolean;
  /** What an unknown name without fallback becomes: '' (default) or the placeholder as written. */
  onMissing?: 'empty' | 'keep';
  /**
   * The fallback of a name whose placeholder has none of its own (`{{company}}`, not
   * `{{company,fallback=x}}`) and whose value is missing or empty: a contact book's property
   * registry (GET/PUT /contactBooks/{id}/properties). Names are matched case-insensitively.
   */
  defaultFallbacks?: Record<string, string>;
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

// The head of a placeholder, up to its closing `}}` or to the `=` (and spaces) before a fallback.
// Linear: it starts with a literal `{{`, and each quantifier is followed by a character it cannot
// match (`\s` by a name character, `c` or `,`/`}`; the name by `\s`, `,` or `}`), so a match attempt
// never backtracks more than one step, and an attempt at one `{{` reads no further than the next `{`.
const PLACEHOLDER_HEAD = /\{\{\s*(?:contact\.)?([\w-]+)\s*(?:(\}\})|,\s*fallback\s*=\s*)/g;

interface Placeholder {
  start: number;
  end: number;
  name: string;
  fallback: string | undefined;
}

/** Every placeholder of `source`, left to right, by the linear scan described above. */
function* scanPlaceholders(source: string): Generator<Placeholder> {
  const head = new RegExp(PLACEHOLDER_HEAD);
  // The first `}` at or after a fallback's start. Cached: fallback starts only move right, so each
  // stretch of the source is searched once even when many heads share one far-away `}`.
  let closeAt = -1;
  const nextClose = (from: number): number => {
    if (closeAt < from) {
      const found = source.indexOf('}', from);
      closeAt = found === -1 ? source.length : found;
    }
    return closeAt;
  };
  for (let m = head.exec(source); m !== null; m = head.exec(source)) {
    if (m[2] !== undefined) {
      yield { start: m.index, end: head.lastIndex, name: m[1], fallback: undefined };
      continue;
    }
    // The fallback runs to the first `}`, which must be doubled; otherwise no placeholder starts
    // at this `{{` and the search resumes one character later, as the former global regex did.
    const fallbackStart = head.lastIndex;
    const close = nextClose(fallbackStart);
    if (source.charCodeAt(close + 1) !== 0x7d) {
      head.lastIndex = m.index + 1;
      continue;
    }
    const end = close + 2;
    head.lastIndex = end;
    // trimEnd strips exactly the \s set
    yield { start: m.index, end, name: m[1], fallback: source.slice(fallbackStart, close).trimEnd() };
  }
}

/** The names `source` uses, each once (first spelling), and whether every use of it has a fallback. */
export function templatePlaceholders(source: string): { name: string; hasFallback: boolean }[] {
  const byName = new Map<string, { name: string; hasFallback: boolean }>();
  if (!source.includes('{{')) return [];
  for (const p of scanPlaceholders(source)) {
    const key = p.name.toLowerCase();
    const seen = byName.get(key);
    const hasFallback = p.fallback !== undefined && p.fallback !== '';
    if (seen) seen.hasFallback &&= hasFallback;
    else byName.set(key, { name: p.name, hasFallback });
  }
  return [...byName.values()];
}

/**
 * Replaces every placeholder in `source`; an empty or missing value takes the placeholder's own
 * fallback, else the registry's (`defaultFallbacks`).
 */
export function renderTemplate(source: string, vars: TemplateVariables = {}, opts: RenderOptions = {}): string {
  if (!source.includes('{{')) return source;
  const lowered = new Map(Object.keys(vars).map((k) => [k.toLowerCase(), k]));
  const defaults = opts.defaultFallbacks ? new Map(Object.entries(opts.defaultFallbacks).map(([k, v]) => [k.toLowerCase(), v])) : undefined;
  const parts: string[] = [];
  let copied = 0; // source[0, copied) is already in parts
  for (const p of scanPlaceholders(source)) {
    parts.push(
      source.slice(copied, p.start),
      substitute(source.slice(p.start, p.end), p.name, p.fallback ?? defaults?.get(p.name.toLowerCase()), vars, lowered, opts),
    );
    copied = p.end;
  }
  parts.push(source.slice(copied));
  return parts.join('');
}

function substitute(
  whole: string,
  name: string,
  fallback: string | undefined,
  vars: TemplateVariables,
  lowered: Map<string, string>,
  opts: RenderOptions,
): string {
  const value = lookup(vars, lowered, name);
  let out: string;
  if (value !== undefined && value !== '') out = value;
  else if (fallback !== undefined) out = fallback;
  else if (opts.onMissing === 'keep' && value === undefined) return whole;
  else out = '';
  return opts.escapeHtml ? escapeHtml(out) : out;
}
