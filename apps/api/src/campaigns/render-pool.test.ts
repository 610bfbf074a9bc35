import { renderPreview, type PreviewInput } from '@mailrail/domain/campaigns/render-preview';
import { createPreviewRenderer } from './render-pool';

// Previews render on a thread of their own: while one renders, the event loop that answers every
// team's requests keeps turning. Counted in turns of the loop, not in milliseconds.

const input = (html: string): PreviewInput => ({
  config: { PUBLIC_URL: 'https://mail.example.com', SECRET: 'x'.repeat(32) },
  html: `<div>${html}</div><p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a></p>`,
  subject: 'Hello {{firstName,fallback=you}}',
  previewText: 'Inside',
  campaign: { id: 'cmp_1', bookVariables: ['city'] },
  contact: { id: 'ct_1', email: 'ada@example.com', firstName: 'Ada', lastName: null, properties: { city: 'Oslo' } },
  maxHtmlBytes: 2 * 1024 * 1024,
});
// About 1.8 MB: hundreds of milliseconds of html-to-text on one core.
const big = input('<p>Lorem <b>ipsum</b> dolor <a href="https://example.com/x">sit</a> amet {{city}}.</p>'.repeat(24_000));

/** Turns of the event loop while `work` runs. */
async function turnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work;
  done = true;
  return turns;
}

it('renders what the renderer renders, on a thread: the event loop keeps turning meanwhile', async () => {
  const renderer = createPreviewRenderer(1);
  try {
    // A first render starts the thread; the one measured finds it running.
    await renderer.render(input('<p>warm</p>'));
    const rendering = renderer.render(big);
    const turns = await turnsDuring(rendering);
    const outcome = await rendering;
    expect(outcome).toEqual(renderPreview(big));
    expect('rendered' in outcome && outcome.rendered.subject).toBe('Hello Ada');
    // On the event loop the render is one synchronous stretch: no turn at all while it runs.
    expect(turns).toBeGreaterThan(10);
  } finally {
    await renderer.close();
  }
});

it('with 0 threads renders on the event loop, which does not turn meanwhile', async () => {
  const renderer = createPreviewRenderer(0);
  const turns = await turnsDuring(renderer.render(big));
  expect(turns).toBeLessThanOrEqual(1);
});

it('refuses, on the thread, a body whose editor JSON renders over the cap, and editor JSON that is not', async () => {
  const renderer = createPreviewRenderer(1);
  try {
    expect(await renderer.render({ ...input(''), html: undefined, content: '{not json' })).toEqual({
      refused: { kind: 'invalid-content' },
    });
    expect(await renderer.render({ ...big, maxHtmlBytes: 1024 })).toMatchObject({ refused: { kind: 'too-large', field: 'html' } });
  } finally {
    await renderer.close();
  }
});

it("renders a template's preview on the same thread, by the function a send fills templates with", async () => {
  const renderer = createPreviewRenderer(1);
  try {
    const outcome = await renderer.renderTemplate({
      subject: 'Hi {{name,fallback=you}}',
      html: '<p>{{name}}</p>',
      variables: { name: 'Ada & co' },
      maxHtmlBytes: 1024,
    });
    expect(outcome).toEqual({ rendered: { subject: 'Hi Ada & co', html: '<p>Ada &amp; co</p>', text: 'Ada & co', textDerived: true } });
    expect(await renderer.renderTemplate({ subject: 's', content: '{not json', variables: {}, maxHtmlBytes: 1024 })).toEqual({
      refused: { kind: 'invalid-content' },
    });
  } finally {
    await renderer.close();
  }
});
