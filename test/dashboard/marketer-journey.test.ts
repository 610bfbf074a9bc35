// The marketer's journey end to end in a real browser (issue 43's acceptance), only through the
// dashboard, against the real API and worker on this file's own database and Redis prefix: a
// contact book, a 50-row CSV with company, plan, country, signup date and lifetime value imported
// with its detected types confirmed (number, date), a segment on a number and a date whose count is
// the expected contacts, a campaign written with blocks (heading, text with a property variable,
// button; saved without the unsubscribe footer it is refused, with it it is kept) whose pre-send
// check first refuses the untouched starter text, then passes; a test to two addresses read back
// from the fake SES; the campaign scheduled on a warm-up ramp, its planned-against-sent table
// advancing window by window while the worker's injected clock moves a minute at a time, until SES
// has every contact of the segment once. Walked at 1280×800, then again at 390×844 with a fresh team
// reached through the collapsible navigation. Every state passes axe; key steps are photographed as
// docs/dashboard/journey-*.png (desktop pass) and docs/dashboard/phone/journey-*.png (phone pass).
import { simpleParser } from 'mailparser';
import type { Page } from 'playwright-core';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { ensureUserInTeam } from '@mailrail/domain/users/users';
import { windowSizeFor } from '@mailrail/domain/campaigns/ramp';
import { waitFor } from '@mailrail/testing/wait-for';
import type { TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { browserPath, chromiumAvailable, expectAccessible, expectPhoneFriendly, PHONE_VIEWPORT, startDashboardStack } from './browser';

const MARKETER = { email: 'noor@acme.example', password: 'a marketer on the move with a long password' };
const ROWS = 50;

// Row i: lifetime value (i × 37) mod 300, with cents on every 4th row; signup on day ((3i) mod 28) + 1
// of month ((5i) mod 12) + 1 of 2025.
const ltv = (i: number) => ((i * 37) % 300) + (i % 4 === 0 ? 0.5 : 0);
const signup = (i: number) => `2025-${String(((i * 5) % 12) + 1).padStart(2, '0')}-${String(((i * 3) % 28) + 1).padStart(2, '0')}`;
const address = (i: number) => `buyer${i}@shop.example`;
function csv(): string {
  const lines = ['email,company,plan,country,signup date,lifetime value'];
  for (let i = 1; i <= ROWS; i++)
    lines.push(`${address(i)},Company ${i},${i % 3 ? 'free' : 'pro'},${['DE', 'FR', 'NL'][i % 3]},${signup(i)},${ltv(i).toFixed(2)}`);
  return `${lines.join('\n')}\n`;
}
const SINCE = '2025-06-30';
const rows = [...Array(ROWS).keys()].map((k) => k + 1);
/** The segment: lifetime value over 100 and signed up after SINCE. */
const segment = rows.filter((i) => ltv(i) > 100 && signup(i) > SINCE).map(address);

// The warm-up: 3 in the first window, twice as many in each next one, at most 20, a minute apart.
const RAMP = { start: 3, factor: 2, batchSize: 20 };
/** The size of window `k` (0-based): what the ramp allows it. */
const capacity = (k: number) => windowSizeFor({ start: RAMP.start, factor: RAMP.factor }, RAMP.batchSize, k);
/** The emails each window sends, until the segment is covered (the last one what is left). */
function plannedWindows(total: number): number[] {
  const out: number[] = [];
  for (let k = 0, left = total; left > 0; k++) {
    out.push(Math.min(left, capacity(k)));
    left -= out[k];
  }
  return out;
}

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser("the marketer's journey in a browser", () => {
  let worker: TestWorkerEnv;
  let page: Page;
  let close: (() => Promise<void>) | undefined;
  let phoneTeamId = 0;
  // The worker's clock runs this far ahead of the wall clock: the test moves it instead of waiting.
  let clockAheadMs = 0;

  const { step, checkAndShoot } = browserPath(() => page);
  const toast = (title: string | RegExp) => page.locator('.toast-title').filter({ hasText: title }).first().waitFor();
  const body = () => page.getByRole('textbox', { name: 'Email body' });
  const options = async (label: string) =>
    page
      .getByLabel(label, { exact: true })
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));

  beforeAll(async () => {
    expect(segment.length).toBeGreaterThan(RAMP.start + RAMP.start * RAMP.factor); // at least three windows
    ({ worker, page, close } = await startDashboardStack({
      user: MARKETER,
      // As audience-campaigns.test.ts: an SES answer the busy machine sends late must not make the
      // worker send again what SES took (the test checks every contact gets one email).
      workerConfig: { SES_TIMEOUT_MS: '5000', SEND_LEASE_SECONDS: '15', CAMPAIGN_SCAN_INTERVAL_MS: '500' },
      prepare: async (w) => {
        await w.deps.db.team.update({ where: { id: w.teamId }, data: { name: 'Acme' } });
        // The phone pass starts afresh in a team of its own, with a verified domain of its own.
        const phoneTeam = await createTeam(w.deps.db, 'Acme mobile');
        phoneTeamId = phoneTeam.id;
        await insertDomain(w.deps.db, w.config.SECRET, {
          teamId: phoneTeam.id,
          name: 'example.com',
          region: w.config.AWS_REGION,
          dkimSelector: w.config.DKIM_SELECTOR,
          verified: true,
        });
        await ensureUserInTeam(w.deps.db, { email: MARKETER.email, teamId: phoneTeam.id, role: 'MEMBER' });
      },
    }));
    // The campaign engine reads the clock at each scan and window (campaign-engine.test.ts does the same).
    worker.deps.clock = { now: () => new Date(Date.now() + clockAheadMs) };
  }, 180_000);

  afterAll(() => close?.(), 120_000);

  for (const size of ['desktop', 'phone'] as const) {
    const onPhone = size === 'phone';
    const SUBJECT = `Spring prices (${size})`;
    const BOOK = `Customers (${size})`;
    const TEST_TO = [`first@${size}.reviewers.example`, `second@${size}.reviewers.example`];

    let startAt = new Date(0);
    let campaign = { id: '' };
    /** The desktop pass photographs at 1280×800 only, the phone pass at 390×844 (browser.ts's screenshot). */
    const shoot = (name: string, what: string, scrollTo?: string) => checkAndShoot(`journey-${name}`, what, { scrollTo, phone: false });
    /** A page of the navigation; on a phone, behind the Menu button. */
    const navigate = async (link: string) => {
      const nav = page.getByRole('navigation', { name: 'Main' });
      if (onPhone) {
        await page.getByRole('button', { name: 'Menu' }).click();
        await nav.waitFor();
      }
      await nav.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: link }).waitFor();
      if (onPhone) await nav.waitFor({ state: 'hidden' });
    };
    const tab = (name: string) => page.getByRole('tab', { name }).click();
    const openDialog = async (button: string) => {
      await page.getByRole('button', { name: button }).first().click();
      return page.getByRole('dialog');
    };
    /** The send dialog's pre-send check, read afresh from the server each time it opens. */
    const openCheck = async () => {
      const dialog = await openDialog('Schedule');
      await dialog.getByTestId('presend-audience').waitFor();
      return dialog;
    };

    describe(`at ${size} size`, () => {
      step(
        onPhone
          ? 'on a phone: the fresh team is picked through the collapsible navigation'
          : 'at desktop size: the signed-in marketer starts on the overview',
        async () => {
          if (!onPhone) {
            await page.getByRole('heading', { name: 'Overview' }).waitFor();
            return;
          }
          await page.setViewportSize(PHONE_VIEWPORT);
          const menu = page.getByRole('button', { name: 'Menu' });
          await menu.click();
          await page.getByRole('button', { name: /Switch team/ }).click();
          await page.getByRole('menuitemradio', { name: /Acme mobile/ }).click();
          await page.waitForURL(new RegExp(`/teams/${phoneTeamId}(/|$)`));
          // The switcher sits in the menu, closed again once the page changed.
          await page.getByRole('button', { name: /Team: Acme mobile/, includeHidden: true }).waitFor({ state: 'attached' });
        },
        60_000,
      );

      step(
        'a CSV of 50 customers: the detected types (number, date) confirmed, every row imported',
        async () => {
          await navigate('Contact books');
          const dialog = await openDialog('Create contact book');
          await dialog.getByLabel('Name').fill(BOOK);
          await dialog.getByRole('button', { name: 'Create book' }).click();
          await page.getByRole('heading', { level: 1, name: BOOK }).waitFor();

          await tab('Import');
          await page
            .getByLabel('CSV file', { exact: true })
            .setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv()) });
          const typeOf = (column: string) => page.getByLabel(`Type of column ${column}`);
          await typeOf('lifetime value').waitFor();
          expect(await typeOf('lifetime value').inputValue()).toBe('number');
          expect(await typeOf('signup date').inputValue()).toBe('date');
          for (const column of ['company', 'plan', 'country']) expect(await typeOf(column).inputValue()).toBe('string');
          await shoot('01-import-types', 'the import mapping with the detected types');
          await page.getByRole('button', { name: 'Import customers.csv' }).click();
          await page.getByText('completed', { exact: true }).first().waitFor({ timeout: 120_000 });
          const figures = (await page.getByTestId('import-figures').innerText()).replace(/\s+/g, ' ');
          expect(figures).toContain(`Created ${ROWS}`);
          expect(figures).toContain('Rejected 0');
          await shoot('02-import-done', 'a finished import');

          // The properties are typed: the list shows them as columns.
          await tab('Contacts');
          await page.getByRole('row', { name: /buyer1@shop\.example/ }).waitFor();
          const headers = await page.locator('thead th').allTextContents();
          expect(headers).toEqual(expect.arrayContaining(['company', 'signup date', 'lifetime value']));
          await checkAndShoot(null, 'the contact list with property columns');
          if (onPhone) await expectPhoneFriendly(page, 'the contact list with property columns');
        },
        240_000,
      );

      step(
        `a segment on a number (lifetime value over 100) and a date (signed up after ${SINCE}) counts the ${segment.length} expected contacts`,
        async () => {
          await tab('Segments');
          await page.getByRole('button', { name: 'New segment' }).click();
          await page.getByLabel('Segment name').fill('Big spenders since July');
          await page.getByLabel('Condition 1: field', { exact: true }).selectOption('properties.lifetime value');
          expect(await options('Condition 1: operator')).toEqual(['gt', 'lt', 'equals', 'notEquals', 'isSet', 'isNotSet']);
          await page.getByLabel('Condition 1: operator', { exact: true }).selectOption('gt');
          await page.getByLabel('Condition 1: value', { exact: true }).fill('100');
          const over100 = rows.filter((i) => ltv(i) > 100).length;
          const count = page.getByTestId('segment-count');
          await count.filter({ hasText: `${over100} contacts match, ${over100} subscribed` }).waitFor();
          await page.getByRole('button', { name: 'Add condition' }).click();
          await page.getByLabel('Condition 2: field', { exact: true }).selectOption('properties.signup date');
          await page.getByLabel('Condition 2: operator', { exact: true }).selectOption('gt');
          expect(await page.getByLabel('Condition 2: value', { exact: true }).getAttribute('type')).toBe('date');
          await page.getByLabel('Condition 2: value', { exact: true }).fill(SINCE);
          await count.filter({ hasText: `${segment.length} contacts match, ${segment.length} subscribed` }).waitFor();
          await shoot('03-segment', 'the segment on a number and a date');
          await page.getByRole('button', { name: 'Save segment' }).click();
          await page.getByRole('row', { name: /Big spenders since July/ }).waitFor();
        },
        120_000,
      );

      step(
        'a campaign for the segment: the untouched starter text is refused by the pre-send check',
        async () => {
          await navigate('Campaigns');
          const dialog = await openDialog('Create campaign');
          await dialog.getByLabel('Name').fill('Spring prices');
          await dialog.getByLabel('From').fill('Acme <news@example.com>');
          await dialog.getByLabel('Subject').fill(SUBJECT);
          await dialog.getByLabel('Contact book').selectOption({ label: BOOK });
          await dialog.getByRole('button', { name: 'Create and edit' }).click();
          await page.getByRole('heading', { level: 1, name: 'Spring prices' }).waitFor();
          await body().getByText('Write your message here.').waitFor();

          await page.getByLabel('Preview text').fill('Our spring prices, for the customers who count');
          await page.getByLabel('Send to').selectOption({ label: 'Segment: Big spenders since July' });
          await page.getByLabel('Batch size').fill(String(RAMP.batchSize));
          await page.getByLabel('Window (minutes)').fill('1');
          await page.getByLabel(/Warm up/).check();
          await page.getByLabel('First window').fill(String(RAMP.start));
          await page.getByLabel('Growth per window').fill(String(RAMP.factor));
          await page.getByRole('button', { name: 'Save campaign' }).click();
          await toast('Campaign saved');

          const check = await openCheck();
          await check
            .getByTestId('presend-audience')
            .filter({ hasText: `${segment.length} people get this campaign (the subscribed contacts of its segment` })
            .waitFor();
          await check.getByTestId('presend-errors').filter({ hasText: 'Write your message here.' }).waitFor();
          expect(await check.getByRole('button', { name: 'Send now' }).isDisabled()).toBe(true);
          await shoot('04-check-starter-text', 'the pre-send check refusing the starter text');
          await page.keyboard.press('Escape');
          await check.waitFor({ state: 'detached' });
        },
        120_000,
      );

      step(
        'the body written with blocks (heading, text with a property variable, button); saving without the unsubscribe footer is refused in words',
        async () => {
          // Everything of the starter goes; the marketer writes their own.
          await body().click();
          await page.keyboard.press('Control+a');
          await page.keyboard.press('Backspace');
          await body().getByText('Write your message here.').waitFor({ state: 'detached' });
          await page.keyboard.type('Spring prices are here');
          await page.getByLabel('Text style').selectOption('h1');
          await body().getByRole('heading', { level: 1, name: 'Spring prices are here' }).waitFor();
          await page.keyboard.press('End');
          await page.keyboard.press('Enter');
          await page.getByLabel('Text style').selectOption('p');
          await page.keyboard.type('Dear ');
          // The variable list offers the book's imported properties.
          expect(await options('Variable')).toEqual(expect.arrayContaining(['company', 'lifetime value', 'signup date']));
          await page.getByLabel('Variable', { exact: true }).selectOption('company');
          await page.getByLabel('Fallback').fill('customer');
          await page.getByRole('button', { name: 'Insert variable' }).click();
          await body().getByText('{{company | customer}}').waitFor();
          await page.keyboard.type(', thank you for a great year with us.');
          await page.getByRole('button', { name: 'Insert button' }).click();
          await page.getByLabel('Button text').fill('See your prices');
          await page.getByLabel('Button link').fill('https://shop.example.com/spring');
          await body().getByText('See your prices').waitFor();
          await shoot('05-blocks', 'the campaign written with blocks', '.email-editor');

          // The starter's footer went with the rest: the server keeps a body without an unsubscribe link out.
          await page.getByRole('button', { name: 'Save campaign' }).click();
          await page.getByRole('alert').filter({ hasText: 'Campaign must include an unsubscribe link' }).waitFor();
          await shoot('06-needs-unsubscribe', 'saving refused without the unsubscribe link', '.email-editor');
          await page.getByRole('button', { name: 'Insert footer with unsubscribe link' }).click();
          await body().getByRole('link', { name: 'Unsubscribe' }).waitFor();
          await page.getByRole('button', { name: 'Save campaign' }).click();
          await toast('Campaign saved');
        },
        120_000,
      );

      step(
        'the pre-send check passes (audience, sender, subject and preview text, unsubscribe link, variables); the preview shows the contact’s company',
        async () => {
          const saved = await worker.deps.db.campaign.findFirstOrThrow({ where: { subject: SUBJECT } });
          const types = new Set<string>();
          const walk = (n: { type: string; content?: { type: string }[] }) => {
            types.add(n.type);
            for (const c of n.content ?? []) walk(c);
          };
          walk(JSON.parse(saved.content!) as { type: string });
          for (const t of ['heading', 'paragraph', 'variable', 'button', 'footer']) expect(types).toContain(t);
          expect(saved.html).toContain('{{company,fallback=customer}}');
          expect(saved.html).toContain('{{usesend_unsubscribe_url}}');
          expect(saved.html).not.toContain('Write your message here.');

          // The preview for the book's first contact: its company in place of the variable.
          const frame = page.frameLocator('iframe[title="HTML part of the email"]');
          await frame.getByText(/^Dear Company \d+, thank you/).waitFor();

          const check = await openCheck();
          await check.getByTestId('presend-ok').waitFor();
          expect(await check.getByTestId('presend-audience').innerText()).toContain(`${segment.length} people get this campaign`);
          expect(await check.getByTestId('presend-errors').count()).toBe(0);
          expect(await check.getByTestId('presend-warnings').count()).toBe(0);
          expect(await check.getByRole('button', { name: 'Send now' }).isDisabled()).toBe(false);
          await shoot('07-check-passes', 'the pre-send check passing');
          await page.keyboard.press('Escape');
          await check.waitFor({ state: 'detached' });
        },
        120_000,
      );

      step(
        'a test to two addresses reaches both, personalized, with the unsubscribe link',
        async () => {
          await page.getByLabel('Send a test to').fill(TEST_TO.join(', '));
          await page.getByRole('button', { name: 'Send test' }).click();
          await toast(`Test sent to ${TEST_TO.join(', ')}`);
          for (const to of TEST_TO) {
            const message = await waitFor(() => worker.ses.messages.find((m) => m.destination.to.some((t) => t.includes(to))), {
              timeoutMs: 30_000,
              what: `the test email to ${to}`,
            });
            const mail = await simpleParser(message.raw);
            expect(mail.subject).toBe(`[Test] ${SUBJECT}`);
            expect(mail.html).toMatch(/Dear Company \d+, thank you/);
            expect(mail.html).toContain('https://shop.example.com/spring');
            expect(mail.html).toMatch(/href="https?:\/\/[^"]+\/unsubscribe\?/);
            for (const line of message.raw.split(/\r?\n/)) expect(line.length).toBeLessThanOrEqual(998);
          }
          await checkAndShoot(null, 'the editor after a test send');
        },
        90_000,
      );

      step(
        'scheduled at a time on a warm-up ramp, after the pre-send check',
        async () => {
          // A few minutes ahead, in the browser's time zone (UTC); the worker's clock is moved past it.
          // (Ahead of the worker's clock too, which an earlier pass moved on.)
          startAt = new Date(Math.ceil((Date.now() + clockAheadMs + 3 * 60_000) / 60_000) * 60_000);
          const check = await openCheck();
          await check.getByTestId('presend-ok').waitFor();
          await check.getByLabel('At a date and time').check();
          await check.getByLabel('Date and time', { exact: true }).fill(startAt.toISOString().slice(0, 16));
          await check.getByRole('button', { name: 'Check the time' }).click();
          await check.getByTestId('resolved-time').waitFor();
          await check.getByRole('button', { name: 'Confirm schedule' }).click();
          await check.waitFor({ state: 'detached' });
          await page.getByText('scheduled', { exact: true }).first().waitFor();
          campaign = await worker.deps.db.campaign.findFirstOrThrow({ where: { subject: SUBJECT } });
          expect(campaign).toMatchObject({ status: 'SCHEDULED', scheduledAt: startAt, rampStart: RAMP.start, rampFactor: RAMP.factor });
          await shoot('08-scheduled', 'the campaign scheduled on a ramp');
        },
        120_000,
      );

      step(
        'warm-up progress: planned against sent advances window by window until every contact of the segment has it once',
        async () => {
          const windows = plannedWindows(segment.length);
          expect(windows.length).toBeGreaterThanOrEqual(3);
          const plan = page.getByTestId('window-plan');
          /** Row `k` (1-based) of the plan as "window planned sent", "(current)" dropped. */
          const planRow = async (k: number) =>
            (await plan.getByRole('row').nth(k).innerText())
              .split(/\t|\n/)
              .map((cell) => cell.trim())
              .filter(Boolean)
              .slice(0, 3)
              .join(' ')
              .replace(' (current)', '');
          const created = () => worker.deps.db.email.count({ where: { campaignId: campaign.id } });

          // The start time comes on the worker's clock: window 1 opens and sends the ramp's first size.
          clockAheadMs = startAt.getTime() - Date.now() + 1000;
          let sent = 0;
          for (const [k, size] of windows.entries()) {
            if (k > 0) clockAheadMs += 61_000; // the next window is a minute later
            sent += size;
            const expected = sent;
            // An opened window is planned at what it can send of what is left, as before it opened.
            await waitFor(async () => (await planRow(k + 1)) === `${k + 1} ${size} ${size}`, {
              timeoutMs: 60_000,
              what: `window ${k + 1}: planned ${size}, sent ${size}`,
            });
            // A window never sends more than its size, and the ones to come wait (planned at what they will send).
            expect(await created()).toBe(expected);
            if (k + 1 < windows.length) expect(await planRow(k + 2)).toBe(`${k + 2} ${windows[k + 1]} to come`);
            if (k === 0) {
              await page.getByText(`Window 1: up to ${size} emails`).waitFor();
              await shoot('09-warm-up-window-1', 'the first warm-up window sent', '#progress-h');
            }
          }

          await page.getByText('sent', { exact: true }).first().waitFor({ timeout: 60_000 });
          await page
            .getByTestId('progress-text')
            .filter({ hasText: `${segment.length} / ${segment.length} (100 %)` })
            .waitFor({ timeout: 60_000 });
          const recipients = worker.ses.messages
            .filter((m) => m.raw.split(/\r?\n\r?\n/)[0].includes(`Subject: ${SUBJECT}`))
            .flatMap((m) => m.destination.to)
            .map((t) => (t.includes('<') ? t.slice(t.lastIndexOf('<') + 1, -1) : t).toLowerCase());
          expect(recipients.sort()).toEqual([...segment].sort());
          await shoot('10-warm-up-done', 'the campaign sent on its ramp', '#progress-h');
          if (onPhone) await expectAccessible(page, 'the sent campaign on a phone');
        },
        180_000,
      );
    });
  }
});

if (!run) test.skip("the marketer's journey (no chromium: see the warning above)", () => undefined);
