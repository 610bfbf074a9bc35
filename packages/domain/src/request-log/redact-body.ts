// What the request log keeps of a request body: the shape and the small values a reader needs to
// see what was asked, never a credential, an attachment's content or a whole message body.

export const REDACTED = '[REDACTED]';
/** Strings longer than this are cut (html, text, a long subject): the log shows their start. */
export const LOGGED_STRING_MAX = 300;
/** Items of an array kept (recipients, a batch); the rest are counted, not stored. */
const LOGGED_ARRAY_MAX = 20;
/** Nesting kept; deeper values are replaced by a marker. */
const LOGGED_DEPTH_MAX = 6;
/** The stored body as JSON text at most this long; a larger one is replaced by a note of its size. */
export const LOGGED_BODY_MAX = 8192;

// Field names whose value is a secret. One alternation, tested on the name only: linear.
const SECRET_FIELD = /passw|secret|token|api.?key|authorization|credential|signature|cookie/i;
// Attachment contents (useSend's attachments[].content) and raw MIME are never stored.
const CONTENT_FIELD = /^(content|raw|rawMessage)$/;

// PostgreSQL's text and jsonb refuse NUL and lone surrogates; the body (or the error message) of a
// refused request may hold them, and one such entry would fail its whole batch.
// toWellFormed (Node 20) replaces a lone surrogate with U+FFFD: a native scan, like unsafe-text.ts's check.
// Nearly every string already is: isWellFormed and includes are native scans that allocate nothing.
export const storable = (s: string): string =>
  (s as string & { isWellFormed(): boolean }).isWellFormed() && !s.includes('\u0000')
    ? s
    : (s as string & { toWellFormed(): string }).toWellFormed().replaceAll('\u0000', '\ufffd');
/** Values kept in all: the caps per array, object and depth alone would still allow 100^6. */
const LOGGED_VALUES_MAX = 500;

/** What the walk has left, and the characters of the strings it kept (to skip measuring a small body). */
interface Budget {
  left: number;
  chars: number;
}

function redactValue(value: unknown, depth: number, budget: Budget): unknown {
  if (--budget.left < 0) return '[…]';
  if (typeof value === 'string') {
    const kept = storable(value.length > LOGGED_STRING_MAX ? `${value.slice(0, LOGGED_STRING_MAX)}… (${value.length} chars)` : value);
    budget.chars += kept.length;
    return kept;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= LOGGED_DEPTH_MAX) return '[…]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, LOGGED_ARRAY_MAX).map((v) => redactValue(v, depth + 1, budget));
    if (value.length > LOGGED_ARRAY_MAX) kept.push(`… (${value.length - LOGGED_ARRAY_MAX} more)`);
    return kept;
  }
  const out: Record<string, unknown> = {};
  for (const [rawName, v] of Object.entries(value)) {
    if (budget.left <= 0) {
      out['…'] = 'more fields not kept';
      break;
    }
    const name = storable(rawName.length > LOGGED_STRING_MAX ? rawName.slice(0, LOGGED_STRING_MAX) : rawName);
    budget.chars += name.length;
    if (SECRET_FIELD.test(name)) out[name] = REDACTED;
    else if (CONTENT_FIELD.test(name) && v !== null && v !== undefined)
      out[name] = `[${typeof v === 'string' ? v.length : '?'} chars not kept]`;
    else out[name] = redactValue(v, depth + 1, budget);
  }
  return out;
}

/** The body as the request log stores it (null when there is none). */
export function redactRequestBody(body: unknown): unknown {
  if (body === undefined || body === null) return null;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return null;
  const budget: Budget = { left: LOGGED_VALUES_MAX, chars: 0 };
  const redacted = redactValue(body, 0, budget);
  // A character takes at most 6 in JSON (\u0000), a value at most about 40 more (a number, quotes,
  // separators): a body surely under the cap is not serialized here (it is once, in the batch).
  if (budget.chars * 6 + (LOGGED_VALUES_MAX - budget.left) * 40 <= LOGGED_BODY_MAX) return redacted;
  const size = JSON.stringify(redacted).length;
  return size > LOGGED_BODY_MAX ? { note: `body of ${size} characters after redaction, not kept` } : redacted;
}
