// The dashboard's starter body for a new campaign (it carries the unsubscribe link), as an editor
// document and as HTML (the editor's HTML mode). Sending it unchanged is never meant: the pre-send
// check (pre-send-check.ts) refuses its sentence. A file of its own so the dashboard imports it
// without the renderers.

const STARTER_LINE = 'Write your message here.';

export const STARTER_HTML = `<p>Hello {{firstName,fallback=there}},</p>
<p>${STARTER_LINE}</p>
<p style="font-size:12px;color:#6b7280"><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p>`;

/** The starter's sentence, lower-cased as the check compares it. */
export const STARTER_SENTENCE = STARTER_LINE.slice(0, -1).toLowerCase();

const FOOTER = {
  type: 'footer',
  content: [
    { type: 'text', text: 'You receive this email because you subscribed. ' },
    { type: 'text', text: 'Unsubscribe', marks: [{ type: 'link', attrs: { href: '{{usesend_unsubscribe_url}}' } }] },
  ],
};

/** A new campaign's body: a greeting with a variable, the starter line and the unsubscribe footer. */
export const STARTER_DOCUMENT = JSON.stringify({
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'Hello' }] },
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Hi ' },
        { type: 'variable', attrs: { id: 'firstName', fallback: 'there' } },
        { type: 'text', text: ',' },
      ],
    },
    { type: 'paragraph', content: [{ type: 'text', text: STARTER_LINE }] },
    FOOTER,
  ],
});
