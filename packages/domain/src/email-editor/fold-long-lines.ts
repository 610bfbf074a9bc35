// RFC 5322 caps a line of a message at 998 characters; a rendered email is one long line, and some
// relays break over-long lines wherever they like (inside a URL or a word). We break it ourselves
// where a line break means exactly what it replaces: at a space between a tag's attributes, else at
// a space in text (HTML shows a newline there as the space it was), else just before a tag opens.
// Never inside a `{{name,fallback=two words}}` placeholder: it is filled per contact later.

/** Lines are broken before this length, leaving room for quoted-printable or a relay's additions. */
export const MAX_LINE_CHARS = 900;

/** Which characters of the window lie inside a `{{...}}` (an unclosed one runs to the end): one pass. */
function placeholderMask(window: string): Uint8Array {
  const mask = new Uint8Array(window.length);
  let from = 0;
  for (let open = window.indexOf('{{', from); open !== -1; open = window.indexOf('{{', from)) {
    const close = window.indexOf('}}', open + 2);
    const end = close === -1 ? window.length : close + 2;
    mask.fill(1, open, end);
    from = end;
  }
  return mask;
}

/** The last space inside a tag (between `<` and `>`) of the window, or -1. Each character is looked at once. */
function spaceInTag(window: string, blocked: Uint8Array): number {
  let end = window.length;
  while (end > 0) {
    const lt = window.lastIndexOf('<', end - 1);
    if (lt < 0) return -1;
    const gt = window.indexOf('>', lt);
    const tagEnd = gt === -1 || gt > end ? end : gt;
    for (let i = tagEnd - 1; i > lt; i--) if (window[i] === ' ' && !blocked[i]) return i;
    end = lt;
  }
  return -1;
}

function lastTextSpace(window: string, blocked: Uint8Array): number {
  for (let i = window.lastIndexOf(' '); i > 0; i = window.lastIndexOf(' ', i - 1)) if (!blocked[i]) return i;
  return -1;
}

export function foldLongLines(html: string, max = MAX_LINE_CHARS): string {
  const out: string[] = [];
  for (const line of html.split('\n')) {
    let rest = line;
    while (rest.length > max) {
      const window = rest.slice(0, max);
      const blocked = placeholderMask(window);
      let cut = spaceInTag(window, blocked);
      if (cut <= 0) cut = lastTextSpace(window, blocked);
      if (cut > 0) {
        // The space becomes the line break.
        out.push(rest.slice(0, cut));
        rest = rest.slice(cut + 1);
        continue;
      }
      cut = window.lastIndexOf('<');
      if (cut <= 0) cut = max;
      out.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    out.push(rest);
  }
  return out.join('\n');
}
