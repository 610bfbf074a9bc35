// The automations pages in a real browser (issue 45, item 6), against the real API and worker on
// this file's own database and Redis prefix. An automation is built through the builder with the
// keyboard (a server validation error shown at its field, then fixed), saved as a new version and
// activated; an event recorded for a contact enrolls it, and the worker's own automation tick takes
// it through the send step into the wait. Then the per-step counts, the runs list, the run log and
// a dry run. Every state passes axe and is photographed at desktop and phone size (390×844, no
// sideways scroll, touch-sized controls: browser.ts's screenshot).
import type { Page } from 'playwright-core';
import { upsertContactsIntoBook } from '@mailrail/domain/audience/upsert-contacts';
import { insertEventsSql } from '@mailrail/domain/events/insert-events';
import { emailIdPrefixAt } from '@mailrail/platform/ids';
import type { TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { browserPath, chromiumAvailable, startDashboardStack } from './browser';

const USER = { email: 'maya@acme.example', password: 'a marketer with a long password' };

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser('automations in a browser', () => {
  let worker: TestWorkerEnv;
  let page: Page;
  let close: (() => Promise<void>) | undefined;
  let automationPath = '';
  const { step, checkAndShoot } = browserPath(() => page);
  const BOOK = 'book-automations';

  beforeAll(async () => {
    ({ worker, page, close } = await startDashboardStack({
      user: USER,
      prepare: async (w) => {
        await w.deps.db.contactBook.create({ data: { id: BOOK, teamId: w.teamId, name: 'Trial users' } });
        await w.deps.db.segment.create({
          data: {
            id: 'seg-pro',
            teamId: w.teamId,
            contactBookId: BOOK,
            name: 'Pro plan',
            filter: { match: 'all', conditions: [{ field: 'properties.plan', operator: 'equals', value: 'pro' }] },
          },
        });
        await upsertContactsIntoBook(
          w.deps.sql,
          { contactBookId: BOOK, teamId: w.teamId, variables: [], awaitConfirmation: false, onExisting: 'UPDATE', emitEvents: false },
          [{ email: 'ann@shop.example', firstName: 'Ann' }],
          new Date(Date.now() - 3_600_000),
        );
      },
    }));
  }, 180_000);

  afterAll(() => close?.(), 120_000);

  /** Focus a control and press a key on it: the keyboard, not the mouse. */
  const press = async (name: string | RegExp, key = 'Enter', role: 'button' | 'link' = 'button') => {
    const control = page.getByRole(role, { name, exact: typeof name === 'string' }).first();
    await control.focus();
    await control.press(key);
  };

  step(
    'creates a draft from the list and builds it with the keyboard; a server error shows at its field',
    async () => {
      await page.goto(`/teams/${worker.teamId}`);
      await page.getByRole('link', { name: 'Automations', exact: true }).first().click();
      await page.getByRole('heading', { name: 'Automations', level: 1 }).waitFor();
      await page.getByText('No automations yet').waitFor();
      await press('Create automation');
      await page.getByLabel('Name').fill('Trial onboarding');
      await page.keyboard.press('Tab');
      await page.keyboard.type('trial.started');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Trial onboarding', level: 1 }).waitFor();
      automationPath = new URL(page.url()).pathname;

      // A send step, a wait and a second send; the starter exit step is removed.
      const add = async (label: string) => {
        await page.getByLabel('New step').selectOption({ label });
        await press('Add the step at the end');
      };
      await add('Send an email');
      await page.getByLabel('Subject').last().fill('Welcome to your trial, {{firstName}}');
      await page.getByLabel('HTML').last().fill('<p>Here is how to start.</p>');
      await page.getByLabel('From').last().fill('Team <hello@not-ours.example>');
      await add('Wait');
      await add('Send an email');
      await page.getByLabel('Subject').last().fill('Two days left');
      await page.getByLabel('HTML').last().fill('<p>Your trial ends soon.</p>');
      await press('Remove step 1');
      expect(await page.locator('.flow > li').count()).toBe(3);
      await press('Save as a new version');
      const fieldError = page.locator('.field-error', { hasText: 'not-ours.example is not a domain of this team' });
      await fieldError.waitFor();
      // The message sits in the From field of the step it is about, tied to the input.
      expect(await page.getByLabel('From').first().getAttribute('aria-invalid')).toBe('true');
      await checkAndShoot('automation-builder-error', 'the builder with a server validation error', { scrollTo: '.flow' });
      await page.getByLabel('From').first().fill('Team <hello@example.com>');
      // Moves: the wait goes up and back down with the buttons.
      await press('Move step 2 up');
      expect(await page.locator('.flow h3').first().innerText()).toContain('Wait');
      await press('Move step 1 down');
      expect(await page.locator('.flow h3').first().innerText()).toContain('Send an email');
      // A branch before the second email: Ann goes on, anyone else's run ends there.
      await add('Branch on a condition');
      await page.getByLabel('Contact field').fill('firstName');
      await page.getByLabel('Value').fill('Ann');
      await page.getByLabel('Otherwise, go to').selectOption({ label: 'end the run' });
      await press('Move step 4 up');
      expect(await page.locator('.flow > li').nth(3).locator('.flow-path').innerText()).toBe('Path: if “check-1” holds');
      await press('Save as a new version');
      await page.getByText('You are editing version 2').waitFor();
      await press('Activate');
      await page.getByText('active', { exact: true }).first().waitFor();
    },
    90_000,
  );

  step(
    'an event enrolls a contact; the worker sends and waits; counts, runs and the run log show it',
    async () => {
      const contact = await worker.deps.db.contact.findFirstOrThrow({ where: { contactBookId: BOOK } });
      const now = new Date();
      await worker.deps.sql.execute(
        insertEventsSql(
          `SELECT NULL::text AS id, $2::int AS "teamId", 'trial.started' AS name, $1::text AS "contactId", $5::text AS "contactBookId",
                  '{"plan":"pro"}'::jsonb AS properties, NULL::text AS "externalId", 'api' AS source, $4::timestamptz AS "occurredAt"`,
          { idPrefixSql: '$3', createdAtSql: '$4' },
        ),
        [contact.id, worker.teamId, emailIdPrefixAt(now.getTime()), now, BOOK],
      );
      await worker.waitFor(async () => (await worker.deps.db.automationRunLog.count({ where: { outcome: 'waited' } })) === 1, 30_000);

      await page.goto(automationPath);
      const sendCounts = page.locator('.flow > li').first().locator('.step-counts');
      await sendCounts.getByText('entered').waitFor();
      expect(await sendCounts.innerText()).toMatch(/entered\s*1\s*here now\s*0\s*done\s*1/);
      expect(await page.locator('.flow > li').nth(1).locator('.step-counts').innerText()).toMatch(/entered\s*1\s*here now\s*1/);
      await page.getByRole('cell', { name: /ann@shop.example/ }).waitFor();
      await checkAndShoot('automation-builder', 'the builder with per-step counts', { scrollTo: '.flow' });
      await checkAndShoot('automation-runs', 'the runs of the automation', { scrollTo: '#runs-h' });

      await page.getByRole('link', { name: /Run log of ann@shop.example/ }).click();
      await page.getByRole('heading', { name: 'Run of ann@shop.example', level: 1 }).waitFor();
      const log = page.locator('.run-log > li');
      expect(await log.count()).toBe(2);
      expect(await log.first().innerText()).toContain('email sent');
      expect(await log.nth(1).innerText()).toContain('started waiting');
      const email = await worker.deps.db.automationRunLog.findFirstOrThrow({ where: { outcome: 'sent' } });
      expect(await page.getByRole('link', { name: 'Open the email it sent' }).getAttribute('href')).toBe(
        `/teams/${worker.teamId}/emails/${email.emailId}`,
      );
      expect(await page.getByRole('link', { name: 'ann@shop.example' }).getAttribute('href')).toBe(
        `/teams/${worker.teamId}/contact-books/${BOOK}?search=ann%40shop.example`,
      );
      await checkAndShoot('automation-run-log', "a contact's run log");
    },
    90_000,
  );

  step(
    'a dry run shows the path a contact would take; the list shows the automation with its trigger in words',
    async () => {
      await page.goto(automationPath);
      await page.getByLabel('Contact email or id').fill('ann@shop.example');
      await press('Show the path');
      await page.getByText('Would enter').waitFor();
      expect(await page.locator('.dry-run-result li').count()).toBe(4);
      await checkAndShoot('automation-dry-run', 'the dry run', { scrollTo: '#dry-run-h' });

      await page.getByRole('link', { name: '← Automations' }).click();
      const row = page.locator('table tbody tr').first();
      await row.waitFor();
      expect(await row.innerText()).toContain('When the event “trial.started” is recorded');
      await checkAndShoot('automations-list', 'the automations list');
    },
    60_000,
  );

  step(
    'a second draft takes a date trigger and a branch on email activity and a segment, saves, and reads back in words',
    async () => {
      await press('Create automation');
      await page.getByLabel('Name').fill('Welcome back');
      await page.getByLabel('Starts when this event is recorded').fill('trial.started');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Welcome back', level: 1 }).waitFor();
      const draftPath = new URL(page.url()).pathname;
      await page.getByLabel('Starts when').selectOption({ label: 'A date in the contact comes round' });
      await page.getByLabel('Contact book').selectOption({ label: 'Trial users' });
      await page.getByLabel('Days from the date').fill('3');
      await page.getByLabel('Time of day').fill('10:30');
      await page.getByLabel('New step').selectOption({ label: 'Branch on a condition' });
      await press('Add the step at the end');
      await press('Remove step 1');
      await page.getByLabel('About').selectOption({ label: 'Email activity' });
      await page.getByLabel('The contact').selectOption({ label: 'did not open an email in the last N days' });
      await page.getByLabel('Days (1 to 365)').fill('7');
      // A second condition: membership of a segment, picked by name from the team's segments.
      await press('Add a condition');
      await page.getByLabel('About').last().selectOption({ label: 'Membership of a segment' });
      await page.getByLabel('Segment').selectOption({ label: 'Pro plan' });
      await press('Save as a new version');
      await page.getByText('You are editing version 2').waitFor();
      await checkAndShoot('automation-builder-triggers', 'the builder with a date trigger and a branch on email activity and a segment', {
        scrollTo: 'section[aria-labelledby="trigger-h"] .two-cols-wrap + .two-cols-wrap',
      });

      // Read back from the server: the fields hold what was saved, the step says it in words.
      await page.goto(draftPath);
      await page.getByText('You are editing version 2').waitFor();
      expect(await page.getByLabel('Time of day').inputValue()).toBe('10:30');
      // The segment is named once the team's segments have loaded (its id until then).
      await page
        .locator('.flow .step-summary', {
          hasText: 'If all of: the contact did not open an email in the last 7 days; the contact is in the segment “Pro plan”',
        })
        .waitFor();
      await page.getByRole('link', { name: '← Automations' }).click();
      await page
        .getByRole('row', { name: /Welcome back/ })
        .getByText(/3 days after the day the contact was created, at 10:30/)
        .waitFor();
    },
    60_000,
  );
});
