// The segment builder's "Email activity" field in a real browser (issue 45, item 4), against the
// real API and worker: the activity operators only, a look-back in days starting at 30, the
// server's refusal of a look-back over a year shown at the days box, and "opened campaign" with the
// campaign chosen from the team's campaigns. The activity is seeded in its tables (the SES event
// path that writes it is tested in test/e2e/engagement-segments.test.ts). Photographed at desktop
// and phone size (docs/dashboard/contact-book-segment-engagement.png and phone/).
import type { Page } from 'playwright-core';
import type { TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { browserPath, chromiumAvailable, startDashboardStack } from './browser';

const ADMIN = { email: 'max@acme.example', password: 'a marketer with a long password' };
const DAY = 86_400_000;
// reader<i>@news.example: i = 1..4 opened i × 5 days ago (5, 10, 15, 20); 5..8 were only delivered
// to, yesterday; readers 1 and 2 opened the "November news" campaign.
const READERS = 8;

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser('engagement segments in the builder', () => {
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

  beforeAll(async () => {
    ({ worker, page, close } = await startDashboardStack({
      user: ADMIN,
      prepare: async (w) => {
        const book = await w.deps.db.contactBook.create({ data: { id: 'book-engaged', teamId: w.teamId, name: 'Readers' } });
        bookPath = `/teams/${w.teamId}/contact-books/${book.id}`;
        const now = Date.now();
        const address = (i: number) => `reader${i}@news.example`;
        await w.deps.db.contact.createMany({
          data: Array.from({ length: READERS }, (_, k) => ({ id: `reader-${k + 1}`, contactBookId: book.id, email: address(k + 1) })),
        });
        await w.deps.db.emailActivity.createMany({
          data: Array.from({ length: READERS }, (_, k) => {
            const i = k + 1;
            return i <= 4
              ? {
                  teamId: w.teamId,
                  address: address(i),
                  lastDeliveredAt: new Date(now - i * 5 * DAY),
                  lastOpenedAt: new Date(now - i * 5 * DAY),
                }
              : { teamId: w.teamId, address: address(i), lastDeliveredAt: new Date(now - DAY) };
          }),
        });
        const campaign = await w.deps.db.campaign.create({
          data: {
            id: 'campaign-november',
            teamId: w.teamId,
            name: 'November news',
            from: 'news@news.example',
            subject: 'News',
            status: 'SENT',
          },
        });
        await w.deps.db.campaignEmail.createMany({
          data: Array.from({ length: READERS }, (_, k) => ({
            campaignId: campaign.id,
            contactId: `reader-${k + 1}`,
            email: address(k + 1),
            status: 'SENT' as const,
            openedAt: k < 2 ? new Date(now - 20 * DAY) : null,
          })),
        });
      },
    }));
  }, 180_000);

  afterAll(() => close?.(), 120_000);

  step(
    'an "Email activity" condition: its operators, days from 30, an out-of-range look-back refused at the field, a campaign from a list',
    async () => {
      await page.goto(bookPath);
      await page.locator('main h1').first().waitFor();
      await page.getByRole('tab', { name: 'Segments' }).click();
      await page.getByRole('button', { name: 'New segment' }).click();
      await page.getByLabel('Segment name').fill('Engaged readers');
      await page.getByLabel('Condition 1: field', { exact: true }).selectOption('emailActivity');
      expect(await options('Condition 1: operator')).toEqual([
        'openedWithin',
        'clickedWithin',
        'deliveredWithin',
        'notOpenedWithin',
        'notClickedWithin',
        'notDeliveredWithin',
        'openedCampaign',
        'clickedCampaign',
        'notOpenedCampaign',
        'notClickedCampaign',
      ]);
      const days = page.getByLabel('Condition 1: value', { exact: true });
      expect(await days.inputValue()).toBe('30');
      // Opened within 30 days: readers 1 to 4 (5, 10, 15 and 20 days ago).
      await count().filter({ hasText: '4 contacts match' }).waitFor();
      await days.fill('12');
      await count().filter({ hasText: '2 contacts match' }).waitFor();

      // Over a year: the server's message at the days box.
      await days.fill('400');
      const problem = page.locator('.condition-error').first();
      await problem.filter({ hasText: /whole number of days from 1 to 365/ }).waitFor();
      expect(await days.getAttribute('aria-invalid')).toBe('true');
      await days.fill('12');
      await problem.waitFor({ state: 'detached' });

      // A second condition on a campaign, chosen by name.
      await page.getByRole('button', { name: 'Add condition' }).click();
      await page.getByLabel('Condition 2: field', { exact: true }).selectOption('emailActivity');
      await page.getByLabel('Condition 2: operator', { exact: true }).selectOption('notOpenedCampaign');
      const campaign = page.getByLabel('Condition 2: value', { exact: true });
      await campaign.locator('option', { hasText: 'November news' }).waitFor({ state: 'attached' });
      await campaign.selectOption({ label: 'November news' });
      // Opened within 12 days (readers 1 and 2) and did not open November news (readers 3 to 8): nobody.
      await count().filter({ hasText: '0 contacts match' }).waitFor();
      await page.getByLabel('Condition 2: operator', { exact: true }).selectOption('openedCampaign');
      await count().filter({ hasText: '2 contacts match, 2 subscribed' }).waitFor();
      await checkAndShoot('contact-book-segment-engagement', 'the segment builder with email activity conditions');
      await page.getByRole('button', { name: 'Save segment' }).click();
      await page.getByRole('row', { name: /Engaged readers/ }).waitFor();
      const saved = await worker.deps.db.segment.findFirstOrThrow({ where: { name: 'Engaged readers' } });
      expect(saved.filter).toEqual({
        match: 'all',
        conditions: [
          { field: 'emailActivity', operator: 'openedWithin', value: 12 },
          { field: 'emailActivity', operator: 'openedCampaign', value: 'campaign-november' },
        ],
      });
    },
    180_000,
  );
});
