// The events page in a real browser (issue 45, item 6), against the real API and worker on this
// file's own database and Redis prefix: contacts added through the contacts' upsert (their built-in
// contact.created / contact.subscribed), events sent through the API, and a click and a bounce as
// built-in email events. The list filters by name, contact address and source; an event's page
// shows its properties as JSON, its contact and its email. At desktop size and at phone size
// (390×844); every page passes axe and is photographed.
import type { Page } from 'playwright-core';
import { upsertContactsIntoBook } from '@mailrail/domain/audience/upsert-contacts';
import { insertEventsSql } from '@mailrail/domain/events/insert-events';
import { emailIdPrefixAt } from '@mailrail/platform/ids';
import type { TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { browserPath, chromiumAvailable, startDashboardStack } from './browser';

const USER = { email: 'ines@acme.example', password: 'an operator with a long password' };

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser('the events page in a browser', () => {
  let worker: TestWorkerEnv;
  let page: Page;
  let close: (() => Promise<void>) | undefined;
  let eventsPath = '';
  const { step, checkAndShoot } = browserPath(() => page);
  const rows = () => page.locator('table tbody tr');

  beforeAll(async () => {
    ({ worker, page, close } = await startDashboardStack({
      user: USER,
      prepare: async (w) => {
        const book = await w.deps.db.contactBook.create({ data: { id: 'book-events', teamId: w.teamId, name: 'Customers' } });
        const target = {
          contactBookId: book.id,
          teamId: w.teamId,
          variables: [],
          awaitConfirmation: false,
          onExisting: 'UPDATE' as const,
          emitEvents: false,
        };
        const emails = ['ann@shop.example', 'bob@shop.example', 'cyd@shop.example'];
        await upsertContactsIntoBook(
          w.deps.sql,
          target,
          emails.map((email) => ({ email })),
          new Date(Date.now() - 3_600_000),
        );
        const contacts = await w.deps.db.contact.findMany({ where: { contactBookId: book.id }, orderBy: { email: 'asc' } });
        const now = new Date();
        const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000).toISOString();
        const rowsJson = [
          {
            name: 'user.signed_up',
            c: 0,
            source: 'api',
            properties: { plan: 'pro', seats: 3, referrer: { campaign: 'winter' } },
            at: at(50),
          },
          { name: 'order.paid', c: 1, source: 'api', properties: { orderId: 'A-1042', amount: 129.9, currency: 'EUR' }, at: at(40) },
          {
            name: 'email.clicked',
            c: 0,
            source: 'mailrail',
            properties: { emailId: 'email-welcome-1', link: 'https://shop.example/pricing' },
            at: at(20),
          },
          {
            name: 'email.bounced',
            c: 2,
            source: 'mailrail',
            properties: { emailId: 'email-welcome-3', bounceType: 'Permanent', bounceSubType: 'General' },
            at: at(10),
          },
        ].map((r) => ({
          name: r.name,
          contactId: contacts[r.c].id,
          contactBookId: book.id,
          properties: r.properties,
          source: r.source,
          occurredAt: r.at,
        }));
        await w.deps.sql.execute(
          insertEventsSql(
            `SELECT NULL::text AS id, $2::int AS "teamId", t.name, t."contactId", t."contactBookId", t.properties, NULL::text AS "externalId",
                    t.source, t."occurredAt"
               FROM jsonb_to_recordset($1::jsonb) AS t(name text, "contactId" text, "contactBookId" text, properties jsonb, source text, "occurredAt" timestamptz)`,
            { idPrefixSql: '$3', createdAtSql: '$4' },
          ),
          [JSON.stringify(rowsJson), w.teamId, emailIdPrefixAt(now.getTime()), now],
        );
        eventsPath = `/teams/${w.teamId}/events`;
      },
    }));
  }, 180_000);

  afterAll(() => close?.(), 120_000);

  step(
    'the list shows custom and built-in events newest first, with the contact and a summary',
    async () => {
      await page.goto(`/teams/${worker.teamId}`);
      await page.getByRole('link', { name: 'Events', exact: true }).first().click();
      await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
      await rows().first().waitFor();
      // 3 contact.created + 3 contact.subscribed + 4 seeded.
      expect(await rows().count()).toBe(10);
      expect(await rows().first().innerText()).toContain('email.bounced');
      expect(await rows().first().innerText()).toContain('cyd@shop.example');
      expect(await rows().first().innerText()).toContain('Permanent / General');
      await checkAndShoot('events-list', 'the events list');
    },
    60_000,
  );

  step(
    'filters by name, by contact address and by source, kept in the URL',
    async () => {
      await page.getByLabel('Name').fill('email.clicked');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/name=email.clicked/);
      await page.waitForFunction(
        () =>
          (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(
            'table tbody tr',
          ).length === 1,
      );
      expect(await rows().first().innerText()).toContain('https://shop.example/pricing');

      await page.goto(`${eventsPath}?email=ann%40shop.example&source=api`);
      await rows().first().waitFor();
      expect(await rows().count()).toBe(1);
      expect(await rows().first().innerText()).toContain('user.signed_up');

      await page.goto(`${eventsPath}?source=mailrail&email=bob%40shop.example`);
      await rows().first().waitFor();
      expect((await rows().allInnerTexts()).map((t) => t.split(/\s/)[0]).sort()).toEqual(['contact.created', 'contact.subscribed']);
    },
    60_000,
  );

  step(
    "an event's page: its properties as JSON, the contact and the email it is about",
    async () => {
      await page.goto(`${eventsPath}?name=email.clicked`);
      await page.getByRole('link', { name: 'email.clicked' }).click();
      await page.getByRole('heading', { name: 'email.clicked', level: 1 }).waitFor();
      const json = await page.locator('pre.event-properties').innerText();
      expect(JSON.parse(json)).toEqual({ emailId: 'email-welcome-1', link: 'https://shop.example/pricing' });
      expect(json).toContain('\n  "link"');
      expect(await page.getByRole('link', { name: 'ann@shop.example' }).getAttribute('href')).toBe(
        `/teams/${worker.teamId}/contact-books/book-events?search=ann%40shop.example`,
      );
      expect(await page.getByRole('link', { name: 'email-welcome-1' }).getAttribute('href')).toBe(
        `/teams/${worker.teamId}/emails/email-welcome-1`,
      );
      await checkAndShoot('events-detail', "an event's page");

      // The contact link opens the book's contacts searching for the address.
      await page.getByRole('link', { name: 'ann@shop.example' }).click();
      await page.getByRole('cell', { name: 'ann@shop.example' }).first().waitFor();
      expect(await page.getByRole('cell', { name: 'bob@shop.example' }).count()).toBe(0);
    },
    60_000,
  );
});
