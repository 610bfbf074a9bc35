import { parseDocument } from 'htmlparser2';
import { findAll, getAttributeValue, textContent } from 'domutils';
import { renderPreview } from '../campaigns/render-preview';
import { renderCampaignContent, type CampaignContact } from '../campaigns/campaign-content';
import { foldLongLines } from './fold-long-lines';
import { renderEmailDocument, type EmailNode } from './render-email-document';

// The editor's documents rendered on the campaign path (renderPreview runs what the worker sends:
// the JSON rendered once, then personalised per contact) and parsed back.

const config = { PUBLIC_URL: 'https://mail.example.test', SECRET: 'x'.repeat(32) };
const contact: CampaignContact = {
  id: 'contact-1',
  email: 'ann@example.test',
  firstName: 'Ann',
  lastName: null,
  properties: { plan: 'Pro' },
};

function renderForContact(
  doc: EmailNode,
  who: CampaignContact = contact,
  bookVariables = ['plan', 'company'],
  propertyFallbacks: Record<string, string> = {},
) {
  const outcome = renderPreview({
    config,
    content: JSON.stringify(doc),
    subject: 'Hi {{firstName,fallback=there}}',
    campaign: { id: 'campaign-1', bookVariables, propertyFallbacks },
    contact: who,
    maxHtmlBytes: 5 * 1024 * 1024,
  });
  if (!('rendered' in outcome)) throw new Error(`refused: ${JSON.stringify(outcome.refused)}`);
  return outcome.rendered;
}

function parsed(html: string) {
  const dom = parseDocument(html);
  const all = findAll(() => true, dom.children);
  return {
    text: textContent(dom).replace(/\s+/g, ' '),
    tags: (name: string) => all.filter((e) => e.name === name),
    links: all
      .filter((e) => e.name === 'a')
      .map((a) => ({ href: getAttributeValue(a, 'href'), text: textContent(a).replace(/\s+/g, ' ').trim() })),
  };
}

const text = (t: string, marks?: EmailNode['marks']): EmailNode => ({ type: 'text', text: t, ...(marks ? { marks } : {}) });
const paragraph = (...content: EmailNode[]): EmailNode => ({ type: 'paragraph', content });

/** A document with every block the editor inserts, as the editor writes it. */
const blockEmail: EmailNode = {
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 1, textAlign: 'center' }, content: [text('Spring news')] },
    paragraph(
      text('Hello '),
      { type: 'variable', attrs: { id: 'firstName', fallback: 'friend' } },
      text(', your plan: '),
      { type: 'variable', attrs: { id: 'plan', fallback: 'Free' } },
      text('. '),
      text('Bold', [{ type: 'bold' }]),
      text(' and '),
      text('italic', [{ type: 'italic' }]),
      text(' and '),
      text('our blog', [{ type: 'link', attrs: { href: 'https://blog.example.test/post?a=1&b=2' } }]),
      text('.'),
    ),
    { type: 'button', attrs: { text: 'Read more', url: 'https://example.test/read', alignment: 'center' } },
    { type: 'image', attrs: { src: 'https://cdn.example.test/hero.png', alt: 'Hero picture', width: '480' } },
    { type: 'horizontalRule' },
    { type: 'spacer', attrs: { height: 'lg' } },
    {
      type: 'columns',
      content: [
        { type: 'column', content: [paragraph(text('Left column'))] },
        { type: 'column', content: [paragraph(text('Right column'))] },
      ],
    },
    {
      type: 'footer',
      content: [text('You subscribed. '), text('Unsubscribe', [{ type: 'link', attrs: { href: '{{usesend_unsubscribe_url}}' } }])],
    },
  ],
};

describe('the editor document rendered for a contact', () => {
  it('keeps every block, link and the unsubscribe URL, in lines of at most 998 characters', () => {
    const out = renderForContact(blockEmail);
    const email = parsed(out.html);
    expect(email.tags('h1').map(textContent)).toEqual(['Spring news']);
    expect(email.text).toContain('Hello Ann, your plan: Pro.');
    expect(email.tags('strong').map(textContent)).toEqual(['Bold']);
    expect(email.tags('em').map(textContent)).toEqual(['italic']);
    const img = email.tags('img')[0];
    expect([getAttributeValue(img, 'src'), getAttributeValue(img, 'alt'), getAttributeValue(img, 'width')]).toEqual([
      'https://cdn.example.test/hero.png',
      'Hero picture',
      '480',
    ]);
    expect(email.tags('hr')).toHaveLength(1);
    // The spacer: a table of the height asked (lg = 32 px).
    expect(out.html).toMatch(/height:32px/);
    // The columns: one row of two cells, side by side.
    const columnCells = email.tags('td').filter((td) => getAttributeValue(td, 'data-id') === '__react-email-column');
    expect(columnCells.map((td) => textContent(td).trim())).toEqual(['Left column', 'Right column']);
    expect(email.links).toEqual(
      expect.arrayContaining([
        { href: 'https://blog.example.test/post?a=1&b=2', text: 'our blog' },
        { href: 'https://example.test/read', text: 'Read more' },
      ]),
    );
    const unsubscribe = email.links.find((l) => l.text === 'Unsubscribe')!;
    expect(unsubscribe.href).toMatch(/^https:\/\/mail\.example\.test\/unsubscribe\?/);
    expect(unsubscribe.href).toContain('campaign-1');
    // Email-safe: layout in tables of presentation, styles inline; the one <style> stacks the columns.
    expect(email.tags('table').length).toBeGreaterThan(3);
    expect(email.tags('style')).toHaveLength(1);
    expect([...out.html.matchAll(/class="([^"]*)"/g)].map((m) => m[1])).toEqual(['mr-column', 'mr-column']);
    for (const line of out.html.split(/\r?\n/)) expect(line.length).toBeLessThanOrEqual(998);
    expect(out.html.split('\n').length).toBeGreaterThan(1);
    // The text part carries the words and the links' targets.
    expect(out.text).toContain('Hello Ann, your plan: Pro.');
    expect(out.text).toContain('https://example.test/read');
    expect(out.text).toContain(unsubscribe.href);
  });

  it('stacks the columns on a narrow screen (a media query in <head>), with the table row as the fallback, every block kept', () => {
    const out = renderForContact(blockEmail);
    const email = parsed(out.html);
    const [style] = email.tags('style');
    expect(style.parent && (style.parent as { name?: string }).name).toBe('head');
    // The rule: below 480 px each column's cell becomes a full-width block.
    const css = textContent(style);
    const media = /@media only screen and \(max-width:(\d+)px\)\{\.mr-column\{([^}]*)\}\}/.exec(css);
    expect(media).not.toBeNull();
    expect(Number(media![1])).toBeLessThanOrEqual(480);
    expect(media![2]).toContain('display:block!important');
    expect(media![2]).toContain('width:100%!important');
    // The fallback: both columns are cells of one table row, each with a width, and carry the class.
    const cells = email.tags('td').filter((td) => getAttributeValue(td, 'class') === 'mr-column');
    expect(cells.map((td) => textContent(td).trim())).toEqual(['Left column', 'Right column']);
    expect(new Set(cells.map((td) => td.parent))).toHaveProperty('size', 1);
    for (const td of cells) expect(getAttributeValue(td, 'style')).toMatch(/width:50%/);
    // Every block survives alongside it.
    expect(email.tags('h1')).toHaveLength(1);
    expect(email.tags('img')).toHaveLength(1);
    expect(email.tags('hr')).toHaveLength(1);
    expect(email.links.map((l) => l.text)).toEqual(expect.arrayContaining(['our blog', 'Read more', 'Unsubscribe']));
    expect(out.html).toMatch(/height:32px/);
    expect(email.text).toContain('You subscribed.');
    // The stylesheet stays out of the text part.
    expect(out.text).not.toContain('@media');
  });

  it("gives a variable without a fallback of its own the book's registry fallback, in the html, the text and the subject", () => {
    const doc: EmailNode = {
      type: 'doc',
      content: [
        paragraph(text('Team: '), { type: 'variable', attrs: { id: 'company', fallback: '' } }, text(', plan: '), {
          type: 'variable',
          attrs: { id: 'plan', fallback: 'Free' },
        }),
      ],
    };
    const stranger = { id: 'c3', email: 'c@example.test', firstName: null, lastName: null, properties: {} };
    const registry = { Company: 'your team & co', plan: 'Basic' };
    const out = renderForContact(doc, stranger, [], registry);
    expect(parsed(out.html).text).toContain('Team: your team & co, plan: Free');
    expect(out.text).toContain('Team: your team & co, plan: Free');
    // A contact with a value keeps it.
    expect(parsed(renderForContact(doc, { ...stranger, properties: { company: 'Acme' } }, [], registry).html).text).toContain('Team: Acme');
    // Without the registry the variable is left as written (unknown name), as before.
    expect(parsed(renderForContact(doc, stranger, [], {}).html).text).toContain('Team: {{company}}');
  });

  it('gives a variable its fallback when the contact has no value, and the value when it has one', () => {
    const stranger = { id: 'c2', email: 'b@example.test', firstName: null, lastName: null, properties: {} };
    expect(parsed(renderForContact(blockEmail, stranger).html).text).toContain('Hello friend, your plan: Free.');
    expect(renderForContact(blockEmail, stranger).text).toContain('Hello friend, your plan: Free.');
    // A fallback with spaces survives the line folding (its placeholder is never split).
    const long: EmailNode = {
      type: 'doc',
      content: [
        paragraph(text('word '.repeat(400)), { type: 'variable', attrs: { id: 'company', fallback: 'our great team' } }, text(' end')),
      ],
    };
    expect(parsed(renderForContact(long, stranger).html).text).toContain('our great team end');
  });

  it('renders an old useSend (maily) document: sections, logo, named spacers, lists, quotes, unknown nodes', () => {
    const maily: EmailNode = {
      type: 'doc',
      content: [
        { type: 'logo', attrs: { src: 'https://cdn.example.test/logo.png', alt: 'Acme', alignment: 'center', size: 'md' } },
        { type: 'spacer', attrs: { height: 'xl' } },
        {
          type: 'section',
          attrs: { backgroundColor: '#f3f4f6', borderRadius: 8, align: 'left' },
          content: [
            { type: 'heading', attrs: { level: 2, textAlign: 'left' }, content: [text('Welcome aboard')] },
            paragraph(
              text('Hi '),
              { type: 'variable', attrs: { id: 'firstName', fallback: 'there', showIfEmpty: false } },
              { type: 'hardBreak' },
              text('next line'),
            ),
          ],
        },
        { type: 'bulletList', content: [{ type: 'listItem', content: [paragraph(text('first point'))] }] },
        { type: 'orderedList', attrs: { start: 1 }, content: [{ type: 'listItem', content: [paragraph(text('step one'))] }] },
        { type: 'blockquote', content: [paragraph(text('a quote'))] },
        {
          type: 'button',
          attrs: {
            text: 'Get started',
            url: 'https://app.example.test',
            alignment: 'left',
            variant: 'outline',
            borderRadius: 'round',
            buttonColor: '#2563eb',
            textColor: '#2563eb',
          },
        },
        { type: 'repeat', attrs: { each: 'items' }, content: [paragraph(text('repeated content'))] },
        {
          type: 'footer',
          content: [text('Acme Inc. '), text('Unsubscribe', [{ type: 'link', attrs: { href: '{{unsend_unsubscribe_url}}' } }])],
        },
      ],
    };
    const out = renderForContact(maily);
    const email = parsed(out.html);
    expect(getAttributeValue(email.tags('img')[0], 'src')).toBe('https://cdn.example.test/logo.png');
    expect(out.html).toMatch(/height:64px/);
    expect(out.html).toContain('background:#f3f4f6');
    expect(email.tags('h2').map(textContent)).toEqual(['Welcome aboard']);
    expect(email.text).toContain('Hi Ann');
    expect(email.tags('br')).toHaveLength(1);
    expect(email.tags('ul').map((e) => textContent(e).trim())).toEqual(['first point']);
    expect(email.tags('ol').map((e) => textContent(e).trim())).toEqual(['step one']);
    expect(email.tags('blockquote').map((e) => textContent(e).trim())).toEqual(['a quote']);
    expect(email.links).toContainEqual({ href: 'https://app.example.test', text: 'Get started' });
    expect(email.text).toContain('repeated content');
    expect(email.links.find((l) => l.text === 'Unsubscribe')!.href).toMatch(/^https:\/\/mail\.example\.test\/unsubscribe\?/);
  });

  it('drops link targets that are not web, mail or placeholder addresses', () => {
    const html = renderCampaignContent(
      JSON.stringify({
        type: 'doc',
        content: [
          paragraph(text('bad', [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }])),
          { type: 'button', attrs: { text: 'Bad', url: 'javascript:alert(2)' } },
          { type: 'image', attrs: { src: 'javascript:alert(3)' } },
        ],
      }),
    )!;
    expect(html).not.toContain('javascript:');
    expect(parsed(html).text).toContain('bad');
  });

  it('renders raw HTML blocks as written and variable values given directly (the double opt-in path)', () => {
    const html = renderEmailDocument(
      { type: 'doc', content: [{ type: 'html', attrs: { html: '<p class="x">raw {{doubleOptInUrl}}</p>' } }] },
      { variable: (id, fallback) => fallback },
    );
    // (Folded at a space between attributes when the line is long: unfolded here.)
    expect(html.replace(/\n/g, ' ')).toContain('<p class="x">raw {{doubleOptInUrl}}</p>');
  });
});

describe('foldLongLines', () => {
  it('breaks at a space between attributes first, never inside a placeholder, and keeps short lines as they are', () => {
    expect(foldLongLines('<p>short</p>')).toBe('<p>short</p>');
    const html = `<a href="x" title="y">${'a'.repeat(20)}</a>`;
    expect(foldLongLines(html, 40)).toBe(`<a href="x"\ntitle="y">${'a'.repeat(20)}</a>`);
    const folded = foldLongLines(`${'word '.repeat(50)}{{name,fallback=two words here}}`, 40);
    expect(folded).toContain('{{name,fallback=two words here}}');
    for (const line of folded.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    // No space and no tag: a hard cut, still within the limit.
    for (const line of foldLongLines('x'.repeat(100), 30).split('\n')) expect(line.length).toBeLessThanOrEqual(30);
  });
});
