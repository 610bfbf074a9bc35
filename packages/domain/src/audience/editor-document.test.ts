import { parseDocument } from 'htmlparser2';
import { findAll, getAttributeValue, textContent } from 'domutils';
import { renderEditorDocument, toEditorDocument } from './editor-document';

/** The rendered email parsed back: its visible text (whitespace collapsed) and its elements by tag. */
function parsed(html: string) {
  const dom = parseDocument(html);
  const all = findAll(() => true, dom.children);
  return {
    text: textContent(dom).replace(/\s+/g, ' '),
    tags: (name: string) => all.filter((e) => e.name === name),
  };
}

describe('toEditorDocument', () => {
  it('answers editor JSON of a document as is and wraps a single node', () => {
    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'hi' }] }] };
    expect(toEditorDocument(JSON.stringify(doc))).toEqual(doc);
    expect(toEditorDocument(JSON.stringify(doc.content[0]))).toEqual(doc);
  });

  it('wraps text and HTML in one html node, unchanged', () => {
    expect(toEditorDocument('<b>x</b> {{doubleOptInUrl}}')).toEqual({
      type: 'doc',
      content: [{ type: 'html', attrs: { html: '<b>x</b> {{doubleOptInUrl}}' } }],
    });
    expect(toEditorDocument('{not json')).toEqual({ type: 'doc', content: [{ type: 'html', attrs: { html: '{not json' } }] });
    expect(toEditorDocument(null)).toBeNull();
  });
});

describe('renderEditorDocument', () => {
  it('renders the common nodes, escapes text and resolves variables', () => {
    const html = renderEditorDocument(
      {
        type: 'doc',
        content: [
          { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Title <x>' }] },
          {
            type: 'paragraph',
            content: [
              { type: 'text', text: 'Hello ' },
              { type: 'variable', attrs: { id: 'FIRSTNAME', fallback: 'there' } },
              { type: 'text', text: ' link', marks: [{ type: 'bold' }, { type: 'link', attrs: { href: 'https://a.test/?a=1&b=2' } }] },
            ],
          },
          { type: 'button', attrs: { text: 'Go', url: '{{doubleOptInUrl}}' } },
          { type: 'html', attrs: { html: '<i>raw</i>' } },
        ],
      },
      { variables: { firstName: 'Ann' } },
    );
    const email = parsed(html);
    expect(email.tags('h2').map(textContent)).toEqual(['Title <x>']);
    expect(html).toContain('Title &lt;x&gt;');
    expect(email.text).toContain('Hello Ann link');
    const links = email.tags('a').map((a) => [getAttributeValue(a, 'href'), textContent(a)]);
    expect(links).toContainEqual(['https://a.test/?a=1&b=2', ' link']);
    expect(links).toContainEqual(['{{doubleOptInUrl}}', expect.stringContaining('Go')]);
    expect(email.tags('strong').map(textContent)).toEqual([' link']);
    expect(html).toContain('<i>raw</i>');
    expect(renderEditorDocument({ type: 'doc', content: [{ type: 'variable', attrs: { id: 'x', fallback: 'fb' } }] })).toContain('fb');
  });
});
