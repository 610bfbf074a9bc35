// Typed contact properties in a real browser (issue 43, items 2 and 3), against the real API and
// worker on this file's own database and Redis prefix: a CSV with company, plan, country, signup
// date and lifetime value columns is imported with its detected types confirmed; the properties
// show as columns of the contact list and typed fields of the edit dialog; segments are built on a
// number and on a date, with only the operators that fit each field, "Subscribed" defaulting to
// yes and the server's validation shown at the condition it concerns. Every page passes axe and is
// photographed (desktop and phone); the segment built at phone size is marketer-journey.test.ts's.
import type { Page } from 'playwright-core';
import type { TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { browserPath, chromiumAvailable, expectAccessible, startDashboardStack } from './browser';

const ADMIN = { email: 'lea@acme.example', password: 'a marketer with a long password' };
const ROWS = 20;

// Row i: lifetime value i × 25 (row 5 says "n/a"), signup on the 15th of month ((i - 1) % 12) + 1 of 2025.
const ltv = (i: number) => (i === 5 ? 'n/a' : String(i * 25));
const month = (i: number) => ((i - 1) % 12) + 1;
function csv(): string {
  const lines = ['email,company,plan,country,signup date,lifetime value'];
  for (let i = 1; i <= ROWS; i++)
    lines.push(
      `buyer${i}@shop.example,Company ${i},${i % 3 ? 'free' : 'pro'},${i % 2 ? 'DE' : 'FR'},2025-${String(month(i)).padStart(2, '0')}-15,${ltv(i)}`,
    );
  return `${lines.join('\n')}\n`;
}
const rows = [...Array(ROWS).keys()].map((k) => k + 1);
const ltvOver100 = rows.filter((i) => i !== 5 && i * 25 > 100);
const signedUpAfterJune = rows.filter((i) => month(i) >= 7);
const both = ltvOver100.filter((i) => signedUpAfterJune.includes(i));

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser('typed contact properties in a browser', () => {
  let worker: TestWorkerEnv;
  let page: Page;
  let close: (() => Promise<void>) | undefined;
  let bookPath = '';

  const { step, checkAndShoot } = browserPath(() => page);
  const count = () => page.getByTestId('segment-count');
  const options = async (label: string) =>
    page
      .getByLabel(label, { exact: true })
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));
  /** Nothing of the page is wider than the screen (no sideways scrolling). */
  const fitsWidth = async () =>
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(page.viewportSize()!.width);

  beforeAll(async () => {
    ({ worker, page, close } = await startDashboardStack({
      user: ADMIN,
      prepare: async (w) => {
        const book = await w.deps.db.contactBook.create({ data: { id: 'book-typed', teamId: w.teamId, name: 'Customers' } });
        bookPath = `/teams/${w.teamId}/contact-books/${book.id}`;
      },
    }));
  }, 180_000);

  afterAll(() => close?.(), 120_000);

  const openTab = async (tab: string) => {
    await page.goto(bookPath);
    await page.locator('main h1').first().waitFor();
    await page.getByRole('tab', { name: tab }).click();
  };

  step(
    'importing a CSV: the detected types are shown for confirmation and the properties are registered with them',
    async () => {
      await openTab('Import');
      await page
        .getByLabel('CSV file', { exact: true })
        .setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv()) });
      await page.getByLabel('Type of column lifetime value').waitFor();
      expect(await page.getByLabel('Type of column lifetime value').inputValue()).toBe('number');
      expect(await page.getByLabel('Type of column signup date').inputValue()).toBe('date');
      expect(await page.getByLabel('Type of column company').inputValue()).toBe('string');
      expect(await page.getByLabel('Type of column country').inputValue()).toBe('string');
      // The address column has no type: it is the contact's own field.
      expect(await page.getByLabel('Type of column email').count()).toBe(0);
      await checkAndShoot('contact-book-import-types', 'the import mapping with detected types');
      await page.getByRole('button', { name: 'Import customers.csv' }).click();
      await page.getByText('completed', { exact: true }).first().waitFor({ timeout: 120_000 });
      const registry = await worker.deps.db.contactProperty.findMany({
        where: { contactBookId: 'book-typed' },
        orderBy: { position: 'asc' },
      });
      expect(registry.map((p) => [p.name, p.type])).toEqual([
        ['company', 'STRING'],
        ['plan', 'STRING'],
        ['country', 'STRING'],
        ['signup date', 'DATE'],
        ['lifetime value', 'NUMBER'],
      ]);
    },
    180_000,
  );

  step(
    'the contact list shows a column per property, the edit dialog a field per property by its type, the Properties tab the registry',
    async () => {
      await openTab('Contacts');
      const headers = await page.locator('thead th').allTextContents();
      expect(headers).toEqual(expect.arrayContaining(['company', 'plan', 'country', 'signup date', 'lifetime value']));
      const buyer5 = page.getByRole('row', { name: /buyer5@shop\.example/ });
      await buyer5.getByRole('cell', { name: 'n/a' }).waitFor();
      await checkAndShoot('contact-book-property-columns', 'the contact list with property columns');

      await buyer5.getByRole('button', { name: 'Edit buyer5@shop.example' }).click();
      const dialog = page.getByRole('dialog');
      expect(await dialog.getByLabel('Property: signup date').getAttribute('type')).toBe('date');
      expect(await dialog.getByLabel('Property: signup date').inputValue()).toBe('2025-05-15');
      // A value that does not read as its type is shown as written, never lost.
      expect(await dialog.getByLabel('Property: lifetime value').inputValue()).toBe('n/a');
      await dialog.getByLabel('Property: lifetime value').fill('125');
      await expectAccessible(page, 'the contact edit dialog with typed properties');
      await dialog.getByRole('button', { name: 'Save contact' }).click();
      await dialog.waitFor({ state: 'detached' });
      await buyer5.getByRole('cell', { name: '125' }).waitFor();

      await page.getByRole('tab', { name: 'Properties' }).click();
      await page.getByRole('group', { name: 'Property 5' }).waitFor();
      expect(await page.getByRole('group', { name: 'Property 5' }).getByLabel('Type').inputValue()).toBe('number');
      await page.getByRole('group', { name: 'Property 5' }).getByLabel('Fallback').fill('0');
      await page.getByRole('button', { name: 'Save properties' }).click();
      await page.locator('.toast-title').filter({ hasText: 'Properties saved' }).first().waitFor();
      await checkAndShoot('contact-book-properties', 'the properties tab');
    },
    120_000,
  );

  /** Builds the number-and-date segment; `at` names the screen size in the segment's name. */
  async function buildTypedSegment(at: string) {
    await openTab('Segments');
    await page.getByRole('button', { name: 'New segment' }).click();
    await page.getByLabel('Segment name').fill(`Big spenders since July (${at})`);
    // "Subscribed" is a yes/no field: is / is not, defaulting to yes.
    await page.getByLabel('Condition 1: field', { exact: true }).selectOption('subscribed');
    expect(await options('Condition 1: operator')).toEqual(['equals', 'notEquals']);
    expect(await page.getByLabel('Condition 1: value', { exact: true }).inputValue()).toBe('true');
    await count()
      .filter({ hasText: `${ROWS} contacts match, ${ROWS} subscribed` })
      .waitFor();

    // A number: compared as a number (buyer5 now has 125), with number operators only.
    await page.getByLabel('Condition 1: field', { exact: true }).selectOption('properties.lifetime value');
    expect(await options('Condition 1: operator')).toEqual(['gt', 'lt', 'equals', 'notEquals', 'isSet', 'isNotSet']);
    // No value yet: the server's message shows at the value, not as a raw notice.
    const problem = page.locator('.condition-error').first();
    await problem.filter({ hasText: /must be a number/ }).waitFor();
    expect(await page.getByLabel('Condition 1: value', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Condition 1: value', { exact: true }).fill('100');
    await problem.waitFor({ state: 'detached' });
    const over100 = ltvOver100.length + 1; // buyer5, edited to 125
    await count()
      .filter({ hasText: `${over100} contacts match` })
      .waitFor();

    // A date: after / before, with a date picker.
    await page.getByRole('button', { name: 'Add condition' }).click();
    await page.getByLabel('Condition 2: field', { exact: true }).selectOption('properties.signup date');
    expect(await options('Condition 2: operator')).toEqual(['gt', 'lt', 'isSet', 'isNotSet']);
    expect(await page.getByLabel('Condition 2: value', { exact: true }).getAttribute('type')).toBe('date');
    await page.getByLabel('Condition 2: value', { exact: true }).fill('2025-06-30');
    await count()
      .filter({ hasText: `${both.length} contacts match, ${both.length} subscribed` })
      .waitFor();
    await fitsWidth();
  }

  step(
    'a segment on a number and on a date at desktop size: typed operators, Subscribed defaults to yes, errors at the field',
    async () => {
      await buildTypedSegment('desktop');
      await checkAndShoot('contact-book-segment-typed', 'the segment builder with typed properties');
      await page.getByRole('button', { name: 'Save segment' }).click();
      await page.getByRole('row', { name: /Big spenders since July \(desktop\)/ }).waitFor();
    },
    120_000,
  );
});
