import { HTML_TO_TEXT_MAX_CHARS, htmlToPlainText } from './html-to-text';

it('converts HTML to wrapped text without images', () => {
  expect(htmlToPlainText('<p>Hello <b>there</b></p><img src="x.png" alt="pic"><p>Bye</p>')).toBe('Hello there\n\nBye');
});

it('converts at most HTML_TO_TEXT_MAX_CHARS of a huge HTML: what follows the cap is not in the text', () => {
  const filler = '<p>filler text</p>'.repeat(Math.ceil(HTML_TO_TEXT_MAX_CHARS / 18));
  const text = htmlToPlainText(`<p>first words</p>${filler}<p>after the cap</p>`);
  expect(text.startsWith('first words')).toBe(true);
  expect(text).not.toContain('after the cap');
});
