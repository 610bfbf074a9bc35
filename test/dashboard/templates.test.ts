// The templates page in a real browser (issue 43): a template created from the list, written with
// the visual editor's blocks (heading, text, a variable, button, two columns), previewed with
// sample variables at desktop and phone widths and as plain text, saved, reopened with its blocks,
// switched to raw HTML and deleted. Columns stack at phone width in the editor. Every state passes
// axe-core; the pages are photographed into docs/dashboard/templates-*.png (and phone/).
import type { Page } from 'playwright-core';
import { PHONE_VIEWPORT, VIEWPORT, browserPath, chromiumAvailable, screenshot, startDashboardStack } from './browser';
import type { TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';

const ADMIN = { email: 'tara@acme.example', password: 'a template writer with a long password' };

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser('the templates page in a browser', () => {
  let worker: TestWorkerEnv;
  let page: Page;
  let close: (() => Promise<void>) | undefined;
  let teamId: number;
  let templatePath = '';

  const { step, checkAndShoot } = browserPath(() => page);
  const toast = (title: string) => page.locator('.toast-title').filter({ hasText: title }).first().waitFor();
  const body = () => page.getByRole('textbox', { name: 'Template body' });
  const toEnd = async () => {
    await body().click();
    await page.keyboard.press('Control+End');
  };

  beforeAll(async () => {
    ({ worker, teamId, page, close } = await startDashboardStack({ user: ADMIN }));
  }, 180_000);

  afterAll(() => close?.(), 120_000);

  step(
    'an empty list, then a template created from it opens in the visual editor',
    async () => {
      await page.goto(`/teams/${teamId}`);
      await page.getByRole('link', { name: 'Templates' }).first().click();
      await page.getByRole('heading', { name: 'No templates yet' }).waitFor();
      await page.getByRole('button', { name: 'Create template' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name').fill('Welcome');
      await dialog.getByLabel('Subject').fill('Welcome, {{name,fallback=friend}}');
      await dialog.getByRole('button', { name: 'Create and edit' }).click();
      await page.getByRole('heading', { name: 'Welcome', exact: true }).waitFor();
      templatePath = new URL(page.url()).pathname;
      expect(await page.getByRole('radio', { name: 'Visual editor' }).isChecked()).toBe(true);
      await body().getByText('{{name | there}}').waitFor();
    },
    90_000,
  );

  step(
    'blocks added, previewed with sample variables at desktop and phone widths and as text, then saved',
    async () => {
      await toEnd();
      await page.keyboard.type('Thanks for joining ');
      await page.keyboard.press('Control+b');
      await page.keyboard.type('Acme');
      await page.keyboard.press('Control+b');
      await page.keyboard.type('.');
      await page.keyboard.press('Enter');
      await page.keyboard.type('Getting started');
      await page.getByLabel('Text style').selectOption('h2');
      await body().getByRole('heading', { level: 2, name: 'Getting started' }).waitFor();
      await page.getByRole('button', { name: 'Insert button' }).click();
      await page.getByLabel('Button text').fill('Open your account');
      await page.getByLabel('Button link').fill('https://app.acme.example/start');
      await page.getByRole('button', { name: 'Insert two columns' }).click();
      await body().getByText('Left column').click();
      await page.keyboard.press('End');
      await page.keyboard.type(': guides');
      await toEnd();

      await page.getByLabel('Sample variables').fill('name=Ada');
      const frame = page.frameLocator('.preview-desktop iframe');
      await frame.getByText('Hi Ada,').waitFor();
      await page.getByTestId('preview-subject').filter({ hasText: 'Welcome, Ada' }).waitFor();
      // The button's link, once the preview has caught up with the last edit.
      await frame.locator('a[href="https://app.acme.example/start"]').filter({ hasText: 'Open your account' }).waitFor();
      await checkAndShoot(null, 'the template editor');
      await screenshot(page, 'templates-editor', { scrollTo: '.email-editor' });

      await page.getByRole('tab', { name: 'Phone' }).click();
      const phoneFrame = page.locator('.preview-phone iframe');
      await phoneFrame.waitFor();
      expect((await phoneFrame.boundingBox())!.width).toBeLessThanOrEqual(390);
      await screenshot(page, 'templates-preview-phone', { scrollTo: '#preview-h' });

      await page.getByLabel('Sample variables').fill('');
      await page.getByRole('tab', { name: 'Plain text' }).click();
      await page.getByTestId('preview-text').filter({ hasText: 'Hi there,' }).waitFor();
      expect(await page.getByTestId('preview-text').innerText()).toContain('https://app.acme.example/start');
      await checkAndShoot(null, 'the plain-text preview');

      await page.getByRole('button', { name: 'Save template' }).click();
      await toast('Template saved');
      const row = await worker.deps.db.template.findFirstOrThrow({ where: { teamId, name: 'Welcome' } });
      const types = new Set<string>();
      const walk = (n: { type: string; content?: { type: string }[] }) => {
        types.add(n.type);
        for (const c of n.content ?? []) walk(c);
      };
      walk(JSON.parse(row.content!) as { type: string });
      for (const t of ['heading', 'paragraph', 'variable', 'button', 'columns', 'column']) expect(types).toContain(t);
      expect(row.html).toContain('{{name,fallback=there}}');
      expect(row.html).toContain('https://app.acme.example/start');
      expect(row.html).toContain('mr-column');
    },
    180_000,
  );

  step(
    'reopened from the list with its blocks; columns stack at phone width in the editor',
    async () => {
      await page.goto(`/teams/${teamId}/templates`);
      await page.getByRole('link', { name: 'Welcome' }).waitFor();
      await checkAndShoot(null, 'the templates list');
      await screenshot(page, 'templates');
      await page.getByRole('link', { name: 'Welcome' }).click();
      await page.waitForURL(`**${templatePath}`);
      await body().getByText('Open your account').waitFor();
      await body().getByText('Left column: guides').waitFor();

      await page.setViewportSize(PHONE_VIEWPORT);
      try {
        const left = await body().locator('.ee-column').nth(0).boundingBox();
        const right = await body().locator('.ee-column').nth(1).boundingBox();
        // Stacked: the second column starts below the first, at the same left edge.
        expect(right!.y).toBeGreaterThanOrEqual(left!.y + left!.height - 1);
        expect(Math.abs(right!.x - left!.x)).toBeLessThan(2);
      } finally {
        await page.setViewportSize(VIEWPORT);
      }
    },
    90_000,
  );

  step(
    'raw HTML stays a mode; the template is deleted from its page',
    async () => {
      await page.getByRole('radio', { name: 'HTML' }).click();
      await page.getByRole('textbox', { name: 'HTML', exact: true }).fill('<p>Hello {{name}}</p>');
      const frame = page.frameLocator('.preview-desktop iframe');
      await page.getByRole('tab', { name: 'Desktop' }).click();
      await page.getByLabel('Sample variables').fill('name=Bo');
      await frame.getByText('Hello Bo').waitFor();
      await page.getByRole('button', { name: 'Save template' }).click();
      await toast('Template saved');
      const row = await worker.deps.db.template.findFirstOrThrow({ where: { teamId, name: 'Welcome' } });
      expect(row).toMatchObject({ html: '<p>Hello {{name}}</p>', content: null });

      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Delete template' }).click();
      await page.getByRole('heading', { name: 'No templates yet' }).waitFor();
      expect(await worker.deps.db.template.count({ where: { teamId } })).toBe(0);
    },
    90_000,
  );
});
