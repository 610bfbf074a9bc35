import type * as HtmlToText from 'html-to-text';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';

// The one door to html-to-text: its conversion runs on the event loop in time that grows with the
// input (36 MB took 1.4-3.9 s), so every caller converts at most HTML_TO_TEXT_MAX_CHARS.

/** Characters of HTML converted to text at most; what follows is left out of the text part. */
export const HTML_TO_TEXT_MAX_CHARS = 2 * 1024 * 1024;

// html-to-text and its HTML parser (about 350 kB of source) load on the first conversion.
const htmlToText = loadOnFirstUse<typeof HtmlToText>('html-to-text');

/** The text part of an HTML body: wrapped at 100 columns, images skipped, the HTML cut at HTML_TO_TEXT_MAX_CHARS. */
export function htmlToPlainText(html: string): string {
  const input = html.length > HTML_TO_TEXT_MAX_CHARS ? html.slice(0, HTML_TO_TEXT_MAX_CHARS) : html;
  return htmlToText().convert(input, { wordwrap: 100, selectors: [{ selector: 'img', format: 'skip' }] });
}
