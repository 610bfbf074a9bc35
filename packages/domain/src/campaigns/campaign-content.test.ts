import {
  contactVariables,
  hasUnsubscribePlaceholder,
  personalizeCampaignBody,
  prepareCampaignBody,
  renderCampaignContent,
} from './campaign-content';
import { parseDocument } from 'htmlparser2';
import { findAll, getAttributeValue, textContent } from 'domutils';

describe('campaign content', () => {
  it('puts the preheader after the first <body> tag, also after 24,000 unclosed <BODY (issue 15)', () => {
    const prep = (html: string) => prepareCampaignBody({ subject: 's', html, previewText: 'P' }).html;
    expect(prep('<html><BODY class="x"><p>a</p></body></html>')).toMatch(
      /^<html><BODY class="x"><div style="display:none;[^"]*">P<\/div><p>a<\/p>/,
    );
    expect(prep('<p>no body</p>').startsWith('<div style="display:none;')).toBe(true);
    const preheader = '<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">P</div>';
    expect(prep('<p>a<body</p>')).toBe(`<p>a<body</p>${preheader}`);
    expect(prep('<p>a<body x')).toBe(`${preheader}<p>a<body x`);
    // '<BODY' repeated with no '>': the former regex searched from each one (17 s for 120 KB). The
    // answer here; the time in bench/hostile-input/run.ts.
    const html = '<BODY'.repeat(24_000);
    expect(prep(html).startsWith('<div style="display:none;')).toBe(true);
  });

  it('finds the unsubscribe placeholder case-insensitively, with whitespace, under both names', () => {
    expect(hasUnsubscribePlaceholder('<a href="{{ USESEND_unsubscribe_url }}">x</a>')).toBe(true);
    expect(hasUnsubscribePlaceholder('{{unsend_unsubscribe_url}}')).toBe(true);
    expect(hasUnsubscribePlaceholder('{{unsubscribe}}')).toBe(false);
  });

  it('renders editor JSON with variables, links and buttons, then personalises per contact', () => {
    const doc = {
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'News' }] },
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Hi ' },
            { type: 'variable', attrs: { id: 'firstName', fallback: 'friend' } },
          ],
        },
        { type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'one' }] }] }] },
        { type: 'button', attrs: { url: 'https://example.com/a?b=1', text: 'Go' } },
        {
          type: 'paragraph',
          content: [{ type: 'text', text: 'Unsubscribe', marks: [{ type: 'link', attrs: { href: '{{usesend_unsubscribe_url}}' } }] }],
        },
      ],
    };
    const template = renderCampaignContent(JSON.stringify(doc))!;
    expect(hasUnsubscribePlaceholder(template)).toBe(true);
    const body = prepareCampaignBody({
      subject: 'Hello {{firstName,fallback=there}} from {{company,fallback=us}}',
      html: template,
      previewText: 'Preview line',
    });
    const contact = { id: 'c1', email: 'a@b.test', firstName: '', lastName: null, properties: { Company: 'Acme & Co' } };
    const out = personalizeCampaignBody(body, contactVariables(contact, ['company'], 'https://u.test/unsubscribe?c=1&s=2'));
    expect(out.subject).toBe('Hello there from Acme & Co');
    const dom = parseDocument(out.html);
    const elements = findAll(() => true, dom.children);
    expect(textContent(dom).replace(/\s+/g, ' ')).toContain('Hi friend');
    expect(elements.filter((e) => e.name === 'h1').map(textContent)).toEqual(['News']);
    expect(elements.filter((e) => e.name === 'li').map(textContent)).toEqual(['one']);
    expect(out.html).toContain('href="https://u.test/unsubscribe?c=1&amp;s=2"');
    expect(elements.filter((e) => e.name === 'a').map((a) => getAttributeValue(a, 'href'))).toContain('https://example.com/a?b=1');
    expect(out.html).toMatch(/display:none[^>]*>Preview line</);
    // The text part comes from the HTML, not from previewText.
    expect(out.text).toContain('Hi friend');
    expect(out.text).toContain('https://u.test/unsubscribe?c=1&s=2');
    expect(out.text).not.toContain('Preview line');
  });

  it('leaves unknown names as written and gives declared, empty variables their fallback', () => {
    const body = prepareCampaignBody({ subject: '{{ contact.email }} {{plan,fallback=free}} {{unknown}}', html: '<p>x</p>' });
    const out = personalizeCampaignBody(
      body,
      contactVariables({ id: 'c', email: 'e@x.test', firstName: null, lastName: null, properties: {} }, ['plan'], 'u'),
    );
    expect(out.subject).toBe('e@x.test free {{unknown}}');
  });

  it('is null for content that is not editor JSON', () => {
    expect(renderCampaignContent('not json')).toBeNull();
  });
});
