// The visual email editor in a real browser (issue 43, item 1): a marketer builds a campaign from
// blocks with the keyboard and the mouse (heading, formatted text with a link, a variable with its
// fallback, button, image, divider, spacer, columns, the footer's unsubscribe link), undoes and
// redoes, saves, and previews it at desktop and phone widths and as plain text (the test send to two
// addresses is marketer-journey.test.ts's). Every state passes axe-core; the editor is photographed
// into docs/dashboard/.
import type { Page } from 'playwright-core';
import { newId } from '@mailrail/platform/ids';
import { waitFor } from '@mailrail/testing/wait-for';
import type { TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { browserPath, chromiumAvailable, screenshot, startDashboardStack } from './browser';

const ADMIN = { email: 'lea@acme.example', password: 'an editor with a long password' };
const SUBJECT = 'Spring at Acme';

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser('the visual email editor in a browser', () => {
  let worker: TestWorkerEnv;
  let page: Page;
  let close: (() => Promise<void>) | undefined;
  let teamId: number;
  let campaignPath = '';
  let bookId = '';

  const { step, checkAndShoot } = browserPath(() => page);
  const toast = (title: string) => page.locator('.toast-title').filter({ hasText: title }).first().waitFor();
  const body = () => page.getByRole('textbox', { name: 'Email body' });
  /** Puts the cursor at the end of the document (its trailing empty paragraph). */
  const toEnd = async () => {
    await body().click();
    await page.keyboard.press('Control+End');
  };

  beforeAll(async () => {
    ({ worker, teamId, page, close } = await startDashboardStack({
      user: ADMIN,
      prepare: async (w) => {
        bookId = newId();
        await w.deps.db.contactBook.create({ data: { id: bookId, teamId: w.teamId, name: 'Newsletter', variables: ['plan'] } });
        await w.deps.db.contact.createMany({
          data: [
            { id: newId(), contactBookId: bookId, email: 'ann@readers.example', firstName: 'Ann', properties: { plan: 'Gold' } },
            { id: newId(), contactBookId: bookId, email: 'bob@readers.example', firstName: null, properties: {} },
          ],
        });
      },
    }));
  }, 180_000);

  afterAll(() => close?.(), 120_000);

  step(
    'a new campaign opens in the visual editor with a starter document',
    async () => {
      await page.goto(`/teams/${teamId}/campaigns`);
      await page.getByRole('button', { name: 'Create campaign' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name').fill('Spring sale');
      await dialog.getByLabel('From').fill('News <news@example.com>');
      await dialog.getByLabel('Subject').fill(SUBJECT);
      await dialog.getByLabel('Contact book').selectOption({ label: 'Newsletter' });
      await dialog.getByRole('button', { name: 'Create and edit' }).click();
      await page.getByRole('heading', { name: 'Spring sale' }).waitFor();
      campaignPath = new URL(page.url()).pathname;
      await body().getByText('Write your message here.').waitFor();
      expect(await page.getByRole('radio', { name: 'Visual editor' }).isChecked()).toBe(true);
      const row = await worker.deps.db.campaign.findFirstOrThrow({ where: { teamId, name: 'Spring sale' } });
      expect(JSON.parse(row.content!)).toMatchObject({ type: 'doc' });
      expect(row.html).toContain('{{usesend_unsubscribe_url}}');
    },
    90_000,
  );

  step(
    'blocks built with the keyboard and the mouse, undo and redo, then saved',
    async () => {
      // The starter line, replaced from the keyboard: bold with Ctrl+B, a link from the toolbar.
      await body().getByText('Write your message here.').click();
      await page.keyboard.press('End');
      await page.keyboard.press('Shift+Home');
      await page.keyboard.type('Our spring sale starts today: ');
      await page.keyboard.press('Control+b');
      await page.keyboard.type('everything 20% off');
      await page.keyboard.press('Control+b');
      await page.keyboard.type(' in the shop.');
      // Select "shop" (the last word before the full stop) and link it.
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('Control+Shift+ArrowLeft');
      await page.getByRole('button', { name: 'Link', exact: true }).click();
      await page.getByLabel('Link address').fill('https://shop.example.com/spring?utm=mail&x=1');
      await page.getByLabel('Link address').press('Enter');
      await body().getByRole('link', { name: 'shop' }).waitFor();

      // A heading, typed on a new line and turned into "Heading 2" from the style list.
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.keyboard.type('Our picks for you');
      await page.getByLabel('Text style').selectOption('h2');
      await body().getByRole('heading', { level: 2, name: 'Our picks for you' }).waitFor();

      // A variable from the list, with its fallback, after some text.
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.keyboard.type('Your plan: ');
      await page.getByLabel('Variable', { exact: true }).selectOption('plan');
      await page.getByLabel('Fallback').fill('Basic');
      await page.getByRole('button', { name: 'Insert variable' }).click();
      await body().getByText('{{plan | Basic}}').waitFor();

      // Undo takes the variable out, redo puts it back (keyboard, then the toolbar).
      await page.keyboard.press('Control+z');
      await body().getByText('{{plan | Basic}}').waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Redo' }).click();
      await body().getByText('{{plan | Basic}}').waitFor();

      // A button, selected once inserted: its settings show beside the editor.
      await page.getByRole('button', { name: 'Insert button' }).click();
      await page.getByLabel('Button text').fill('Shop the sale');
      await page.getByLabel('Button link').fill('https://shop.example.com/sale');
      await page.getByLabel('Alignment').selectOption('center');
      await body().getByText('Shop the sale').waitFor();

      // An image by URL, a divider, a spacer and two columns, from the toolbar.
      await page.getByRole('button', { name: 'Insert image' }).click();
      await page.getByLabel('Image address (https://…)').fill('https://cdn.example.com/spring.png');
      await page.getByLabel('Alternative text').fill('Spring flowers');
      await page.getByLabel('Width in pixels (empty: full width)').fill('480');
      await page.getByRole('button', { name: 'Insert divider' }).click();
      await page.getByRole('button', { name: 'Insert spacer' }).click();
      await page.getByLabel('Spacer height').selectOption('lg');
      await page.getByRole('button', { name: 'Insert two columns' }).click();
      await body().getByText('Left column').click();
      await page.keyboard.press('End');
      await page.keyboard.type(': new arrivals');
      await toEnd();

      await checkAndShoot(null, 'the visual email editor');
      await screenshot(page, 'campaign-email-editor', { scrollTo: '.email-editor' });
      await page.getByRole('button', { name: 'Save campaign' }).click();
      await toast('Campaign saved');

      const row = await worker.deps.db.campaign.findFirstOrThrow({ where: { teamId, name: 'Spring sale' } });
      const types = new Set<string>();
      const walk = (n: { type: string; content?: unknown[] }) => {
        types.add(n.type);
        for (const c of (n.content ?? []) as { type: string }[]) walk(c);
      };
      walk(JSON.parse(row.content!) as { type: string });
      for (const t of ['heading', 'paragraph', 'variable', 'button', 'image', 'horizontalRule', 'spacer', 'columns', 'column', 'footer'])
        expect(types).toContain(t);
      expect(row.html).toContain('https://shop.example.com/sale');
      expect(row.html).toContain('https://shop.example.com/spring?utm=mail&amp;x=1');
      expect(row.html).toContain('{{plan,fallback=Basic}}');
      expect(row.html).toContain('{{usesend_unsubscribe_url}}');
    },
    180_000,
  );

  step(
    'the preview at desktop and phone widths and as plain text, for a contact with and without a value',
    async () => {
      await page.goto(campaignPath);
      await body().getByText('Shop the sale').waitFor();
      const frame = page.frameLocator('iframe[title="HTML part of the email"]');
      await page.getByLabel('Preview for').selectOption({ label: 'ann@readers.example' });
      await page.getByTestId('preview-subject').filter({ hasText: 'for ann@readers.example' }).waitFor();
      await frame.getByText('Your plan: Gold').waitFor();
      expect(await frame.getByRole('link', { name: 'Unsubscribe' }).getAttribute('href')).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+\/unsubscribe\?/,
      );
      expect(await frame.getByRole('link', { name: 'Shop the sale' }).getAttribute('href')).toBe('https://shop.example.com/sale');

      await page.getByRole('tab', { name: 'Phone' }).click();
      const phoneFrame = page.locator('.preview-phone iframe');
      await phoneFrame.waitFor();
      expect((await phoneFrame.boundingBox())!.width).toBeLessThanOrEqual(390);
      await checkAndShoot(null, 'the phone preview');
      await screenshot(page, 'campaign-email-preview-phone', { scrollTo: '#preview-h' });

      await page.getByLabel('Preview for').selectOption({ label: 'bob@readers.example' });
      await page.getByRole('tab', { name: 'Plain text' }).click();
      await page.getByTestId('preview-text').filter({ hasText: 'Your plan: Basic' }).waitFor();
      const text = await page.getByTestId('preview-text').innerText();
      expect(text).toContain('https://shop.example.com/sale');
      expect(text).toMatch(/unsubscribe\?/);
      await checkAndShoot(null, 'the plain-text preview');
    },
    120_000,
  );

  step(
    "the contact book's double opt-in message edited with the same editor",
    async () => {
      await page.goto(`/teams/${teamId}/contact-books/${bookId}?tab=settings`);
      // Turned on, the book gets the default message, which then opens in the editor.
      await page.getByText(/The default confirmation email is set when/).waitFor();
      await page.getByRole('switch', { name: 'Ask new contacts to confirm' }).click();
      await page.getByLabel('Confirmation sender').fill('News <news@example.com>');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await toast('Settings saved');
      const confirmation = page.getByRole('textbox', { name: 'Confirmation email body' });
      await confirmation.getByText('Confirm subscription').waitFor();
      // At the start of the first paragraph (Home on its first line).
      await confirmation.getByText(/Thanks for signing up/).click({ position: { x: 5, y: 5 } });
      await page.keyboard.press('Home');
      await page.keyboard.type('We write once a month. ');
      await page.getByRole('button', { name: 'Save settings' }).click();
      const book = await waitFor(
        async () => {
          const b = await worker.deps.db.contactBook.findFirstOrThrow({ where: { id: bookId } });
          return b.doubleOptInContent?.includes('once a month') ? b : undefined;
        },
        { timeoutMs: 15_000, what: 'the edited confirmation email saved' },
      );
      expect(book.doubleOptInContent).toContain('We write once a month.');
      expect(book.doubleOptInContent).toContain('{{doubleOptInUrl}}');
      await checkAndShoot(null, 'the double opt-in editor');
      await screenshot(page, 'contact-book-confirmation-editor', { scrollTo: '.email-editor' });
    },
    90_000,
  );
});
