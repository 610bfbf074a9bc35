// The dashboard end to end in a real browser (issue 18): Debian's chromium driven by
// playwright-core against the real API (serving apps/web/dist at `/` and the dashboard routes)
// and the real worker sending to the fake SES, on this file's own database and Redis prefix.
// A person's path through it: sign in, add a domain and publish its records from the clipboard,
// create a key, send through the public API and watch the email reach SENT, cancel a scheduled
// one, add suppressions, create a webhook and see its test delivery, invite a member and sign in
// as them, and find the keys page closed to a MEMBER. Every page passes axe-core with no serious
// violation, and each is photographed at 1280×800 into docs/dashboard/.
//
// The steps share one browser session and build on each other, so they run in order.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureUserInTeam } from '@mailrail/domain/users/users';
import { createTeam } from '@mailrail/domain/teams/api-keys';
import { insertDomain } from '@mailrail/domain/domains/add-domain';
import { startTestDnsServer, type TestDnsServer, type TestZoneEntry } from '@mailrail/testing/dns-server';
import { listenBeforeApp } from '@mailrail/testing/listen-before-app';
import { startReceiver, type Receiver } from '@mailrail/testing/webhook-receiver';
import { waitFor } from '@mailrail/testing/wait-for';
import { generateDevCertificate } from '@mailrail/platform/tls/self-signed';
import { startTestApi, type TestApi } from '../../apps/api/src/testing/api-harness';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { ensureWebBuilt } from '../../scripts/web-build';
import {
  addUserWithPassword,
  browserPath,
  chromiumAvailable,
  expectAccessible,
  launchChromium,
  newContext,
  PHONE_VIEWPORT,
  screenshot,
  SCREENSHOT_DIR,
  VIEWPORT,
} from './browser';

const ADMIN = { email: 'ada@acme.example', password: 'correct horse battery staple' };
const MEMBER = { email: 'bob@acme.example', password: 'bob-has-a-long-password' };
const NEW_DOMAIN = 'news.example.net';
// The zone the customer publishes in: record names are given relative to it, as DNS providers take them.
const ZONE = 'example.net';

const run = chromiumAvailable() || !!process.env.CI;
const describeInBrowser = run ? describe : describe.skip;

describeInBrowser('the dashboard in a browser', () => {
  let worker: TestWorkerEnv;
  let api: TestApi;
  let dns: TestDnsServer;
  let receiver: Receiver;
  let pixel: { url: string; hits: () => number; close: () => Promise<void> };
  let server: http.Server;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let teamId: number;
  let apiKey = '';
  // The SMTP relay's certificate as the operator configured it: the SMTP page shows its fingerprint.
  let smtpTlsDir = '';
  let smtpFingerprint = '';

  const { step, checkAndShoot } = browserPath(() => page);

  /** One of the team's pages, by its path under /teams/<id>. */
  const open = async (path: string) => {
    await page.goto(`/teams/${teamId}${path}`);
    await page.locator('main h1').first().waitFor();
  };
  // (A string: the root tsconfig has no DOM types.)
  const clipboard = () => page.evaluate<string>('navigator.clipboard.readText()');
  const sendWithKey = async (body: Record<string, unknown>) => {
    const res = await fetch(`${base}/api/v1/emails`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { emailId: string }).emailId;
  };

  beforeAll(async () => {
    if (!chromiumAvailable())
      throw new Error('no chromium at /usr/bin/chromium: in CI, .ci/run installs it with `apt-get install -y chromium`');
    ensureWebBuilt();
    dns = await startTestDnsServer();
    receiver = await startReceiver();
    pixel = await startPixelServer();
    // Listening before the API exists: the API is built with its own URL (PUBLIC_URL).
    const early = await listenBeforeApp();
    server = early.server;
    base = early.url;
    // The worker's team (with its verified domain example.com) is the team the admin signs in to;
    // the dashboard's own mail (invitations) leaves as a team of its own with example.com too.
    // The SES event simulator (docs/events.md) answers every message with SES's events, Delivery
    // 20 s after Send: long enough to watch an email sit at SENT, short enough for the overview.
    worker = await startTestWorkerEnv({
      DNS_RESOLVER: dns.address,
      DNS_TIMEOUT_MS: '500',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      SES_EVENT_SIMULATOR: 'on',
      SES_EVENT_SIMULATOR_DELAY_MS: '20000',
    });
    teamId = worker.teamId;
    await worker.deps.db.team.update({ where: { id: teamId }, data: { name: 'Acme' } });
    const mailTeam = await createTeam(worker.deps.db, 'Dashboard mail');
    const { SECRET, AWS_REGION, DKIM_SELECTOR } = worker.config;
    await insertDomain(worker.deps.db, SECRET, {
      teamId: mailTeam.id,
      name: 'example.com',
      region: AWS_REGION,
      dkimSelector: DKIM_SELECTOR,
      verified: true,
    });
    smtpTlsDir = mkdtempSync(path.join(os.tmpdir(), 'mailrail-dashboard-smtp-'));
    const cert = await generateDevCertificate('smtp.acme.example');
    writeFileSync(path.join(smtpTlsDir, 'cert.pem'), cert.cert);
    writeFileSync(path.join(smtpTlsDir, 'key.pem'), cert.key);
    smtpFingerprint = cert.fingerprint256;
    api = await startTestApi(
      {
        PUBLIC_URL: base,
        // Ada runs this instance: she may create teams in the dashboard.
        DASHBOARD_OPERATORS: ADMIN.email,
        SMTP_SERVER_NAME: 'smtp.acme.example',
        SMTP_TLS_CERT: path.join(smtpTlsDir, 'cert.pem'),
        SMTP_TLS_KEY: path.join(smtpTlsDir, 'key.pem'),
        DNS_RESOLVER: dns.address,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        DASHBOARD_MAIL_FROM: 'mailrail <dashboard@example.com>',
        DASHBOARD_MAIL_TEAM_ID: String(mailTeam.id),
      },
      { databaseUrl: worker.config.DATABASE_URL, redisPrefix: worker.config.REDIS_PREFIX },
    );
    await worker.start();
    early.serve(api.app);

    // The admin: ADMIN of Acme, and MEMBER of the API harness's own team (for the team switcher).
    await addUserWithPassword(worker.deps.db, ADMIN, teamId, 'ADMIN');
    await ensureUserInTeam(worker.deps.db, { email: ADMIN.email, teamId: api.team.teamId, role: 'MEMBER' });

    browser = await launchChromium();
    context = await newContext(browser, base);
    page = await context.newPage();
    // Generous: CI runs this beside other suites on two cores.
    page.setDefaultTimeout(30_000);
  }, 180_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await new Promise((r) => (server ? server.close(r) : r(null)));
    await api?.close();
    await worker?.close();
    await receiver?.close();
    await pixel?.close();
    await dns?.close();
    if (smtpTlsDir) rmSync(smtpTlsDir, { recursive: true, force: true });
  }, 120_000);

  step(
    'signing in: a wrong password is refused in words, the right one opens the team',
    async () => {
      await page.goto('/');
      await page.waitForURL(/\/sign-in/);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
      await checkAndShoot('sign-in', 'the sign-in page');

      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(new RegExp(`/teams/${teamId}/?$`));
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      // Nothing sent yet: the overview says how to start.
      await page.getByRole('heading', { name: 'Send your first email' }).waitFor();
      await checkAndShoot(null, 'the empty overview');
    },
    120_000,
  );

  step(
    'the team switcher lists every team of the user and moves between them',
    async () => {
      await page.getByRole('button', { name: /Switch team/ }).click();
      await page.getByRole('menuitemradio', { name: /Test team/ }).click();
      await page.waitForURL(new RegExp(`/teams/${api.team.teamId}/?$`));
      // A MEMBER there: no API keys in the navigation.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Emails' }).waitFor();
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).count()).toBe(0);
      await page.getByRole('button', { name: /Switch team/ }).click();
      await page.getByRole('menuitemradio', { name: /Acme/ }).click();
      await page.waitForURL(new RegExp(`/teams/${teamId}/?$`));
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).waitFor();
    },
    120_000,
  );

  step(
    'adding a domain, copying its records, publishing them and checking it to verified',
    async () => {
      await open('/domains');
      await page.getByRole('button', { name: 'Add domain' }).first().click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Domain name').fill(NEW_DOMAIN);
      await checkAndShoot(null, 'the add-domain dialog');
      await dialog.getByRole('button', { name: 'Add domain' }).click();
      await page.getByRole('heading', { name: NEW_DOMAIN }).waitFor();
      await page.getByRole('heading', { name: 'DNS records' }).waitFor();
      const domain = await api.deps.db.domain.findFirstOrThrow({ where: { teamId, name: NEW_DOMAIN } });
      // A new domain gets mailrail's DKIM selector, and each record says what it is for and its zone.
      expect(domain.dkimSelector).toBe('mailrail');
      const dkimRow = page.getByTestId('dns-record-DKIM');
      await dkimRow.getByText('Signs your mail').waitFor();
      expect(await dkimRow.locator('code').first().innerText()).toBe('mailrail._domainkey.news');
      expect(await dkimRow.getByText(/in the zone/).innerText()).toContain(ZONE);

      // Before the records are published a check does not alarm: pending, what is not seen yet, and when it looks again.
      const state = page.getByTestId('verification-state');
      await state.getByText('Waiting for DNS.').waitFor();
      await page.getByRole('button', { name: 'Check now' }).click();
      await state.getByTestId('not-seen-yet').waitFor({ timeout: 30_000 });
      expect(await state.innerText()).toMatch(/up to 72 hours[\s\S]*Next check in \d+ (hours?|minutes?)/);
      expect((await api.deps.db.domain.findUniqueOrThrow({ where: { id: domain.id } })).status).toBe('PENDING');
      await page.getByText('Cloudflare', { exact: true }).click();
      await page.getByText('Paste the whole DKIM value as it is').waitFor();
      await checkAndShoot('domain-pending', 'a new domain waiting for DNS');
      await screenshot(page, 'domain-records', { scrollTo: '#dns-h' });
      await page.setViewportSize(PHONE_VIEWPORT);
      try {
        await expectAccessible(page, 'a new domain waiting for DNS, on a phone');
      } finally {
        await page.setViewportSize(VIEWPORT);
      }

      // Publish what the copy buttons put on the clipboard, as a customer pasting into their DNS provider would.
      const rows = page.locator('table.dns tbody tr');
      const zone: Record<string, TestZoneEntry> = {};
      for (let i = 0; i < (await rows.count()); i++) {
        const row = rows.nth(i);
        const type = (await row.locator('td').nth(1).innerText()).split('\n')[0].trim();
        await row.getByRole('button', { name: /^Copy the name/ }).click();
        const name = `${await clipboard()}.${ZONE}`;
        await row.getByRole('button', { name: /^Copy the full name/ }).click();
        expect(await clipboard()).toBe(name);
        await row.getByRole('button', { name: /^Copy the value/ }).click();
        const value = await clipboard();
        const entry = (zone[name] ??= {});
        if (type === 'MX') (entry.mx ??= []).push({ exchange: value, priority: 10 });
        else (entry.txt ??= []).push(pieces(value));
      }
      // The long DKIM value came through whole.
      expect(Object.values(zone).some((e) => e.txt?.some((t) => t.join('') === `p=${domain.publicKey}`))).toBe(true);
      dns.setZone(zone);

      await page.getByRole('button', { name: 'Check now' }).click();
      await page.getByText('Verified: mail can be sent from this domain.').waitFor({ timeout: 30_000 });
      await page.getByRole('switch', { name: 'Track opens' }).click();
      await waitFor(async () => (await api.deps.db.domain.findUniqueOrThrow({ where: { id: domain.id } })).openTracking, {
        timeoutMs: 10_000,
      });
      await page.getByRole('switch', { name: 'Track opens' }).click();
      await waitFor(async () => !(await api.deps.db.domain.findUniqueOrThrow({ where: { id: domain.id } })).openTracking, {
        timeoutMs: 10_000,
      });
      await checkAndShoot('domain', 'a domain page');

      await open('/domains');
      await page.getByRole('link', { name: NEW_DOMAIN }).waitFor();
      await checkAndShoot('domains', 'the domains page');

      // The server's refusal, in its words: the team has this domain already.
      await page.getByRole('button', { name: 'Add domain' }).first().click();
      await page.getByRole('dialog').getByLabel('Domain name').fill(NEW_DOMAIN);
      await page.getByRole('dialog').getByRole('button', { name: 'Add domain' }).click();
      await page.getByRole('dialog').getByRole('alert').waitFor();
      await page.keyboard.press('Escape');
    },
    120_000,
  );

  step(
    'creating an API key shows it once, with a copy button',
    async () => {
      await open('/api-keys');
      await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
      await checkAndShoot(null, 'the empty API keys page');
      await page.getByRole('button', { name: 'Create API key' }).first().click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Name').fill('shop');
      await dialog.getByLabel(/SENDING/).check();
      await dialog.getByRole('button', { name: 'Create key' }).click();
      apiKey = (await dialog.getByTestId('new-api-key').innerText()).trim();
      expect(apiKey).toMatch(/^us_[a-z0-9]+_[a-f0-9]+$/);
      await dialog.getByRole('button', { name: 'Copy the API key' }).click();
      expect(await clipboard()).toBe(apiKey);
      // The first-email examples carry the new key, in every language offered.
      for (const [tab, words] of [
        ['curl', 'Authorization: Bearer'],
        ['usesend-js', "from 'usesend-js'"],
        ['Python', 'requests.post('],
        ['SMTP', '--auth-password'],
      ]) {
        await dialog.getByRole('tab', { name: tab }).click();
        const code = dialog.getByRole('tabpanel').locator('pre');
        await code.filter({ hasText: apiKey }).filter({ hasText: words }).waitFor();
      }
      await dialog.getByRole('tab', { name: 'usesend-js' }).click();
      await checkAndShoot('api-key-created', 'the new-key dialog');
      await dialog.getByRole('button', { name: 'Done' }).click();
      const row = page.getByRole('row', { name: /shop/ });
      await row.waitFor();
      // The list never shows the key itself again.
      expect(await page.getByText(apiKey).count()).toBe(0);
      await checkAndShoot(null, 'the API keys page');
    },
    120_000,
  );

  step(
    'an email sent through the public API with that key reaches SENT in the log and opens with its parts',
    async () => {
      // A month's worth in miniature, enough for two pages of the log: the SES event simulator
      // delivers these, and bounces the one to bounce@ (a hard bounce, which also suppresses it).
      const newsletters = Array.from({ length: 54 }, (_, i) => ({
        from: 'orders@example.com',
        to: `customer${i + 1}@example.org`,
        subject: `Newsletter ${i + 1}`,
        text: 'News',
      }));
      const batch = await fetch(`${base}/api/v1/emails/batch`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(newsletters),
        signal: AbortSignal.timeout(15_000),
      });
      expect(batch.status).toBe(200);
      const html = `<h1>Order 1042</h1><p>Thanks for your order, Ada.</p><img src="${pixel.url}" alt="logo" width="1" height="1">`;
      const emailId = await sendWithKey({
        from: 'Acme Shop <orders@example.com>',
        to: 'ada@example.org',
        subject: 'Order 1042',
        html,
        text: 'Thanks for your order, Ada.',
        attachments: [{ filename: 'invoice-1042.pdf', content: Buffer.from('%PDF-1.4 invoice 1042').toString('base64') }],
      });
      await sendWithKey({ from: 'orders@example.com', to: 'bounce@example.org', subject: 'Newsletter to a dead address', text: 'News' });

      await open('/emails');
      const row = page.getByRole('row', { name: /Order 1042/ });
      await row.getByText('sent', { exact: true }).waitFor({ timeout: 30_000 });
      // Search by recipient.
      await page.getByLabel('Recipient or subject').fill('customer17@');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByRole('row', { name: /Newsletter 17 / }).waitFor();
      await waitFor(async () => (await page.getByRole('row', { name: /Order 1042/ }).count()) === 0, { timeoutMs: 10_000 });
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByRole('row', { name: /Order 1042/ }).waitFor();
      // By source: these came through the API, none through the SMTP relay. The total is an estimate, said so.
      await page.getByLabel('Source').selectOption('SMTP');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByRole('heading', { name: 'No email matches these filters' }).waitFor();
      await page.getByLabel('Source').selectOption('API');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page
        .getByRole('row', { name: /Order 1042/ })
        .getByText('API', { exact: true })
        .waitFor();
      await page.getByText(/Matching: about [\d,]+ emails? \(an estimate/).waitFor();
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByText(/In total: about [\d,]+ emails? \(an estimate/).waitFor();
      await page.getByRole('row', { name: /Order 1042/ }).waitFor();
      await checkAndShoot(null, 'the emails page');
      // 56 emails, 50 a page: the 6 oldest (newsletters of the batch) are on the second page, and Previous comes back.
      await page.getByRole('navigation', { name: 'Email pages' }).getByRole('button', { name: 'Next' }).click();
      await page.getByText('Page 2').waitFor();
      const rows = page.locator('table.list tbody tr');
      await waitFor(async () => (await rows.count()) === 6, { timeoutMs: 10_000, what: 'the second page of 6 emails' });
      expect(await rows.filter({ hasText: /Newsletter \d/ }).count()).toBe(6);
      await page.getByRole('navigation', { name: 'Email pages' }).getByRole('button', { name: 'Previous' }).click();
      await page.getByRole('row', { name: /Order 1042/ }).waitFor();

      await page.getByRole('link', { name: 'Order 1042' }).click();
      await page.waitForURL(new RegExp(`/emails/${emailId}$`));
      await page.getByRole('heading', { name: 'Order 1042' }).waitFor();
      await page.getByText('ada@example.org').first().waitFor();
      await page.getByText('Thanks for your order, Ada.').first().waitFor();
      // The HTML is shown in a sandboxed frame without scripts, and loads nothing remote until asked.
      const frame = page.getByTitle('HTML part of the email');
      expect(await frame.getAttribute('sandbox')).toBe('');
      await page.frameLocator('iframe[title="HTML part of the email"]').getByRole('heading', { name: 'Order 1042' }).waitFor();
      expect(pixel.hits()).toBe(0);
      // Its attachment by name, type and size (the content is never shown).
      await page
        .getByRole('table', { name: 'Attachments' })
        .getByRole('row', { name: /invoice-1042\.pdf application\/pdf 21 B/ })
        .waitFor();
      await checkAndShoot('email', 'an email page');
      await page.getByRole('button', { name: 'Load remote content' }).click();
      await waitFor(() => pixel.hits() > 0, { timeoutMs: 10_000 });
    },
    120_000,
  );

  step(
    'a scheduled email is rescheduled, then cancelled after a confirmation',
    async () => {
      const at = new Date(Date.now() + 24 * 3600_000);
      const emailId = await sendWithKey({
        from: 'orders@example.com',
        to: 'later@example.org',
        subject: 'Your reminder',
        text: 'Later',
        scheduledAt: at.toISOString(),
      });

      await open('/emails');
      await page.getByLabel('Status').selectOption('SCHEDULED');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByRole('link', { name: 'Your reminder' }).click();
      await page.getByRole('heading', { name: 'Scheduled' }).waitFor();

      await page.getByLabel('Send at (your time)').fill('2040-01-02T09:30');
      await page.getByRole('button', { name: 'Reschedule' }).click();
      await waitFor(
        async () => (await worker.email(emailId)).scheduledAt?.toISOString() === new Date('2040-01-02T09:30:00Z').toISOString(),
        { timeoutMs: 10_000 },
      );

      await page.getByRole('button', { name: 'Cancel email' }).click();
      const confirm = page.getByRole('alertdialog');
      await confirm.getByText('It will not be sent.').waitFor();
      await checkAndShoot(null, 'the cancel confirmation');
      await confirm.getByRole('button', { name: 'Cancel email' }).click();
      await page.getByText('cancelled', { exact: true }).first().waitFor();
      expect((await worker.email(emailId)).latestStatus).toBe('CANCELLED');
    },
    120_000,
  );

  step(
    'suppressions: add two addresses, search, remove one',
    async () => {
      await open('/suppressions');
      for (const [email, reason] of [
        ['left-the-company@example.org', 'MANUAL'],
        ['unhappy@example.org', 'COMPLAINT'],
      ]) {
        await page.getByRole('button', { name: 'Add address' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.getByLabel('Email address').fill(email);
        await dialog.getByLabel('Reason').selectOption(reason);
        await dialog.getByRole('button', { name: 'Suppress' }).click();
        await page.getByRole('row', { name: new RegExp(email) }).waitFor();
      }
      await page.getByLabel('Search addresses').fill('unhappy');
      await page.getByRole('button', { name: 'Search' }).click();
      await waitFor(async () => (await page.getByRole('row', { name: /left-the-company/ }).count()) === 0, { timeoutMs: 10_000 });
      await page.getByRole('button', { name: 'Remove unhappy@example.org' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('heading', { name: /No suppressed address matches/ }).waitFor();
      await page.goto(`/teams/${teamId}/suppressions`);
      await page.getByRole('row', { name: /left-the-company@example.org/ }).waitFor();
      const listed = (await api.deps.db.suppression.findMany({ where: { teamId } })).map((s) => s.email);
      expect(listed).toContain('left-the-company@example.org');
      expect(listed).not.toContain('unhappy@example.org');
      await checkAndShoot(null, 'the suppressions page');
    },
    120_000,
  );

  step(
    'a webhook: created with its secret shown once, its test event delivered and logged',
    async () => {
      await open('/webhooks');
      await page.getByRole('heading', { name: 'No webhooks yet' }).waitFor();
      await page.getByRole('button', { name: 'Add webhook' }).first().click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Endpoint URL').fill(receiver.url);
      await dialog.getByLabel('Description (optional)').fill('CRM sync');
      await dialog.getByLabel('email.complained').check();
      await dialog.getByLabel('email.bounced').check();
      await checkAndShoot(null, 'the add-webhook dialog');
      await dialog.getByRole('button', { name: 'Create webhook' }).click();
      expect(await dialog.getByTestId('webhook-secret').innerText()).toMatch(/^whsec_/);
      await dialog.getByRole('link', { name: 'Open the webhook' }).click();

      await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
      await page.getByRole('button', { name: 'Send test event' }).click();
      const delivery = page.getByRole('row', { name: /webhook\.test/ });
      await delivery.getByText('200').waitFor({ timeout: 30_000 });
      await delivery.getByText(/^\d+ ms$/).waitFor();
      expect(receiver.calls.map((c) => c.json.type)).toContain('webhook.test');
      expect(receiver.calls[0].headers['x-usesend-signature']).toMatch(/^v1=/);

      await page.getByRole('switch', { name: 'Enabled' }).click();
      await waitFor(async () => (await api.deps.db.webhook.findFirstOrThrow({ where: { teamId } })).status === 'PAUSED', {
        timeoutMs: 10_000,
      });
      await page.getByRole('switch', { name: 'Enabled' }).click();
      await waitFor(async () => (await api.deps.db.webhook.findFirstOrThrow({ where: { teamId } })).status === 'ACTIVE', {
        timeoutMs: 10_000,
      });
      await checkAndShoot('webhook', 'a webhook page');

      await open('/webhooks');
      await page.getByRole('link', { name: receiver.url }).waitFor();
      await checkAndShoot('webhooks', 'the webhooks page');
    },
    150_000,
  );

  step(
    'once SES has answered: the overview with figures, chart and reputation, the last use of the key, delivered and bounced emails, the automatic suppression',
    async () => {
      // The simulated deliveries and the bounce have been counted.
      await waitFor(
        async () => {
          const usage = await api.deps.db.dailyEmailUsage.aggregate({ where: { teamId }, _sum: { delivered: true, hardBounced: true } });
          return (usage._sum.delivered ?? 0) >= 55 && (usage._sum.hardBounced ?? 0) >= 1;
        },
        { timeoutMs: 90_000, what: 'the simulated deliveries and bounce to be counted' },
      );
      await open('');
      await page.getByRole('heading', { name: 'Reputation' }).waitFor();
      await page.locator('.chart canvas').first().waitFor();
      await page.getByRole('meter', { name: 'Bounce rate' }).waitFor();
      // Rates beside the counts, and reputation over the recent window with all time after it.
      await page.getByTestId('rate-delivered').first().filter({ hasText: '% of sent' }).waitFor();
      await page.getByText(/Over the last 7 days/).waitFor();
      await page.getByTestId('reputation-all-time').waitFor();
      await checkAndShoot('overview', 'the overview');

      // The key has been used by now: the list says when.
      await open('/api-keys');
      const row = page.getByRole('row', { name: /shop/ });
      await row.waitFor();
      expect(await row.innerText()).not.toContain('never');
      await checkAndShoot('api-keys', 'the API keys page');

      // The log and the suppression list now show what SES said: deliveries, and the hard bounce
      // that put bounce@example.org on the list by itself.
      await open('/emails');
      await page
        .getByRole('row', { name: /Newsletter to a dead address/ })
        .getByText('bounced', { exact: true })
        .waitFor();
      await page
        .getByRole('row', { name: /Order 1042/ })
        .getByText('delivered', { exact: true })
        .waitFor();
      await checkAndShoot('emails', 'the emails page');
      await open('/suppressions');
      await page
        .getByRole('row', { name: /bounce@example.org/ })
        .getByText('hard bounce')
        .waitFor();
      await checkAndShoot('suppressions', 'the suppressions page');
      // The suppression leads to the email that bounced, whose timeline tells why.
      await page
        .getByRole('row', { name: /bounce@example.org/ })
        .getByRole('link', { name: 'the email that caused it' })
        .click();
      await page.getByRole('heading', { name: 'Newsletter to a dead address' }).waitFor();
      // Explained in words, with what mailrail did; the raw SES event stays one click away.
      await page.getByText('Hard bounce.').first().waitFor();
      await page
        .getByText(/mailrail added the address to the suppression list/)
        .first()
        .waitFor();
      await checkAndShoot(null, 'a bounced email');

      // The next email to that address and another: the suppressed one is not sent to, and the
      // email's recipients say so, and why, instead of dropping it without a trace.
      const followUp = await sendWithKey({
        from: 'orders@example.com',
        to: ['bounce@example.org', 'ada@example.org'],
        subject: 'Order 1043',
        text: 'Your order shipped.',
      });
      await page.goto(`/teams/${teamId}/emails/${followUp}`);
      const recipients = page.getByRole('table', { name: 'Recipients and what happened to each' });
      await recipients
        .getByRole('row', { name: /bounce@example\.org/ })
        .getByText('suppressed', { exact: true })
        .waitFor();
      await recipients
        .getByRole('row', { name: /bounce@example\.org/ })
        .getByText(/bounced permanently/)
        .waitFor();
      await recipients.getByRole('row', { name: /ada@example\.org/ }).waitFor();
      await checkAndShoot('email-recipients', 'an email with a suppressed recipient');
      // The suppressed event was mailrail's decision: SES never saw it, so no "Details from SES".
      const queuedEvent = page.locator('.timeline li').first();
      await queuedEvent.getByText(/Not sent to bounce@example\.org/).waitFor();
      expect(await queuedEvent.getByText('Details from SES').count()).toBe(0);

      // "Why didn't this arrive?": from the recipient to everything about the address.
      await recipients
        .getByRole('row', { name: /bounce@example\.org/ })
        .getByRole('link', { name: 'Everything about bounce@example.org' })
        .click();
      await page.getByRole('heading', { name: "Why didn't this arrive?" }).waitFor();
      await page.getByText('mailrail does not send to bounce@example.org.').waitFor();
      const messages = page.getByRole('table', { name: /Emails to bounce@example\.org/ });
      await messages
        .getByRole('row', { name: /Newsletter to a dead address/ })
        .getByText('Hard bounce.')
        .waitFor();
      await messages
        .getByRole('row', { name: /Order 1043/ })
        .getByText('Suppressed after a hard bounce.')
        .waitFor();
      await checkAndShoot('address', 'the address page of a suppressed address');

      // Reached from the navigation too, for any address.
      await page.getByRole('navigation').getByRole('link', { name: "Why didn't this arrive?" }).click();
      await page.getByLabel('Recipient address').fill('ada@example.org');
      await page.getByRole('button', { name: 'Look up' }).click();
      await page.getByText('mailrail sends to ada@example.org.').waitFor();
      await page
        .getByRole('table', { name: /Emails to ada@example\.org/ })
        .getByRole('row', { name: /Order 1042/ })
        .getByText('Delivered.')
        .waitFor();
      await checkAndShoot('address-delivered', 'the address page of a deliverable address');
    },
    180_000,
  );

  step(
    "the request log: the key's sends and a refused one with its error, and an email page's link to the requests around it",
    async () => {
      const refused = await fetch(`${base}/api/v1/emails`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ from: 'orders@example.com', to: 'ada@example.org', subject: 'No body' }),
        signal: AbortSignal.timeout(15_000),
      });
      expect(refused.status).toBe(400);
      await page.getByRole('navigation').getByRole('link', { name: 'Request log' }).click();
      await page.getByRole('heading', { name: 'Request log' }).waitFor();
      const log = page.getByRole('table', { name: 'Requests, newest first' });
      /** The log's rows answered `status` (its badge) that show every one of `texts`. */
      const rows = (status: number | null, ...texts: string[]) =>
        texts.reduce(
          (found, text) => found.filter({ hasText: text }),
          status === null
            ? log.getByRole('row')
            : log.getByRole('row').filter({ has: page.locator('.badge', { hasText: new RegExp(`^${status}$`) }) }),
        );
      // Written a second or so after the request; the first page refreshes itself.
      await rows(400, 'POST /api/v1/emails', 'shop', 'BAD_REQUEST').first().waitFor({ timeout: 30_000 });
      await rows(200, 'POST /api/v1/emails', 'shop').first().waitFor();
      await checkAndShoot('request-log', 'the request log');
      // The body, redacted, one click away.
      await rows(null, 'BAD_REQUEST').first().getByText('POST /api/v1/emails').click();
      await log.getByText('"subject": "No body"').waitFor();
      await page.getByLabel('Status').selectOption('4xx');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/status=4xx/);
      // The URL changes at once; the rows of the unfiltered page stay until the filtered answer comes.
      await log.locator('tbody .badge-good').first().waitFor({ state: 'detached', timeout: 30_000 });
      await rows(null, 'BAD_REQUEST').first().waitFor();
      expect(await log.locator('tbody .badge-good').count()).toBe(0);
      await checkAndShoot(null, 'the request log filtered to refusals');

      await open('/emails');
      await page
        .getByRole('row', { name: /Order 1042/ })
        .getByRole('link')
        .click();
      await page.getByRole('link', { name: 'requests around then' }).click();
      await page.getByRole('heading', { name: 'Request log' }).waitFor();
      await rows(200, 'POST /api/v1/emails').first().waitFor();
    },
    90_000,
  );

  step(
    'inviting a member, who signs up from the emailed link and cannot open the keys page',
    async () => {
      await open('/settings');
      await page.getByRole('heading', { name: 'Members' }).waitFor();
      await page.getByRole('button', { name: 'Invite member' }).click();
      const dialog = page.getByRole('dialog');
      // An address the dashboard mail may not reach: the dialog says so, and nothing is kept.
      await worker.deps.db.suppression.create({
        data: { id: 'sup-invitee', teamId: api.config.DASHBOARD_MAIL_TEAM_ID!, email: 'gone@example.org', reason: 'HARD_BOUNCE' },
      });
      await dialog.getByLabel('Email address').fill('gone@example.org');
      await dialog.getByRole('button', { name: 'Send invitation' }).click();
      await dialog
        .getByRole('alert')
        .filter({
          hasText:
            /invitation email was not sent: gone@example\.org is on the dashboard mail's suppression list \(an earlier email to it bounced permanently\)/,
        })
        .waitFor();
      await checkAndShoot('settings-invitation-suppressed', 'an invitation to a suppressed address');
      expect(await worker.deps.db.invitation.count({ where: { email: 'gone@example.org' } })).toBe(0);
      await dialog.getByLabel('Email address').fill(MEMBER.email);
      await dialog.getByLabel('Role').selectOption('MEMBER');
      await dialog.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByRole('row', { name: new RegExp(MEMBER.email.replace('.', '\\.')) }).waitFor();
      await checkAndShoot('settings', 'the settings page');

      // The invitation went out through mailrail's own pipeline to (fake) SES.
      const sent = await waitFor(() => worker.ses.messages.find((m) => m.destination.to.some((to) => to.includes(MEMBER.email))), {
        timeoutMs: 30_000,
        what: 'the invitation email',
      });
      const mail = await simpleParser(sent.raw);
      const link = /https?:\/\/\S+\/invitations\/accept#token=[\w-]+/.exec(mail.text ?? '')?.[0];
      expect(link).toBeDefined();

      const bobContext = await newContext(browser, base);
      const bob = await bobContext.newPage();
      bob.setDefaultTimeout(30_000);
      try {
        await bob.goto(link!);
        await bob.getByRole('heading', { name: 'Join a team' }).waitFor();
        await bob.getByText(/is invited to/).waitFor();
        await bob.getByLabel('Choose a password').fill(MEMBER.password);
        await expectAccessible(bob, 'the invitation page');
        await screenshot(bob, 'invitation');
        await bob.getByRole('button', { name: 'Accept invitation' }).click();
        await bob.waitForURL(new RegExp(`/teams/${teamId}/?$`));
        await bob.getByRole('heading', { name: 'Overview' }).waitFor();

        // A MEMBER: no keys in the navigation, the page itself says so, and the server refuses too.
        expect(await bob.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).count()).toBe(0);
        await bob.goto(`/teams/${teamId}/api-keys`);
        await bob.getByText(/Only admins of Acme can see and manage API keys/).waitFor();
        expect(await bob.getByRole('row', { name: /shop/ }).count()).toBe(0);
        await expectAccessible(bob, 'the API keys page as a MEMBER');
        const status = await bob.evaluate(async (path) => (await fetch(path)).status, `/api/dashboard/teams/${teamId}/api-keys`);
        expect(status).toBe(403);

        // Another team's pages show nothing of it: Bob is not a member of the harness's team.
        await bob.goto(`/teams/${api.team.teamId}/emails`);
        await bob.getByRole('heading', { name: 'Team not found' }).waitFor();
        expect(await bob.getByRole('table').count()).toBe(0);

        // Settings are read-only for a MEMBER.
        await bob.goto(`/teams/${teamId}/settings`);
        await bob.getByText(/only admins change these settings/).waitFor();
        expect(await bob.getByRole('button', { name: 'Invite member' }).count()).toBe(0);

        // And signing in again with the chosen password works.
        await bob.getByRole('button', { name: /Account menu/ }).click();
        await bob.getByRole('menuitem', { name: 'Sign out' }).click();
        await bob.waitForURL(/\/sign-in/);
        await bob.getByLabel('Email').fill(MEMBER.email);
        await bob.getByLabel('Password').fill(MEMBER.password);
        await bob.getByRole('button', { name: 'Sign in' }).click();
        await bob.getByRole('heading', { name: 'Overview' }).waitFor();
      } finally {
        await bobContext.close();
      }
    },
    120_000,
  );

  step(
    'the account page; a session that ends while a page is open leads to sign-in and back',
    async () => {
      await open('/account');
      await page.getByRole('heading', { name: 'Change password' }).waitFor();
      await checkAndShoot(null, 'the account page');

      // The session ends on the server (expired, or signed out elsewhere); the app still shows a page.
      const ada = await api.deps.db.user.findUniqueOrThrow({ where: { email: ADMIN.email } });
      await api.deps.db.session.deleteMany({ where: { userId: ada.id } });
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Emails' }).click();
      await page.waitForURL(/\/sign-in\?next=/);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(new RegExp(`/teams/${teamId}/emails$`));
      await page.getByRole('heading', { name: 'Emails' }).waitFor();
    },
    120_000,
  );

  step(
    'self-hosting: the SMTP page, a test email, the API reference, a team created by the operator, and signing in lands on it',
    async () => {
      await open('/smtp');
      await page.getByRole('heading', { name: 'Connection settings' }).waitFor();
      await page.getByText('smtp.acme.example').first().waitFor();
      await page.getByText(smtpFingerprint).waitFor();
      // The test email goes through the normal intake, from the team's verified domain to Ada.
      await page.getByRole('button', { name: 'Send a test email' }).click();
      const queued = page
        .getByRole('status')
        .filter({ hasText: `Test email queued from mailrail test <test@example.com> to ${ADMIN.email}` });
      await queued.waitFor();
      await checkAndShoot('smtp', 'the SMTP page');
      await queued.getByRole('link', { name: 'Follow it in the email log' }).click();
      await page.getByRole('heading', { name: 'Test email from mailrail' }).waitFor();

      // The API reference is one link away, served by the API itself.
      const reference = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /API reference/ });
      expect(await reference.getAttribute('href')).toBe('/api/v1/ui');
      expect((await fetch(`${base}/api/v1/ui`, { signal: AbortSignal.timeout(15_000) })).status).toBe(200);

      // Ada is an operator (DASHBOARD_OPERATORS): she creates a team and lands on its overview.
      await page.getByRole('button', { name: 'Create a team' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Team name').fill('Zeta Labs');
      await checkAndShoot('create-team', 'the create-team dialog');
      await dialog.getByRole('button', { name: 'Create team' }).click();
      await page.waitForURL(/\/teams\/\d+\/?$/);
      const zetaId = Number(new URL(page.url()).pathname.split('/')[2]);
      expect(zetaId).not.toBe(teamId);
      await page.getByRole('button', { name: /Team: Zeta Labs/ }).waitFor();
      // A new team has no domain: the test email says why it cannot be sent.
      await page.getByRole('button', { name: 'Send a test email' }).click();
      await page.getByRole('alert').filter({ hasText: 'No test email was sent: This team has no domain yet' }).waitFor();
      await checkAndShoot('overview-new-team', 'the overview of a new team');

      // Signing in again lands on the team used last, not the first by name (Acme).
      await page.getByRole('button', { name: /Account menu/ }).click();
      await page.getByRole('menuitem', { name: 'Sign out' }).click();
      await page.waitForURL(/\/sign-in/);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(new RegExp(`/teams/${zetaId}/?$`));
      await open('/emails');
    },
    120_000,
  );

  step(
    'on a phone: the menu button opens the navigation, and the page picked from it closes the menu',
    async () => {
      await page.setViewportSize(PHONE_VIEWPORT);
      try {
        const nav = page.getByRole('navigation', { name: 'Main' });
        const menu = page.getByRole('button', { name: 'Menu' });
        // The page comes first: the navigation waits behind the button.
        await menu.waitFor();
        expect(await nav.isVisible()).toBe(false);
        expect(await menu.getAttribute('aria-expanded')).toBe('false');
        await menu.click();
        await nav.waitFor();
        await expectAccessible(page, 'the navigation on a phone');
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'phone', 'navigation.png'), animations: 'disabled', caret: 'hide' });
        await nav.getByRole('link', { name: 'Suppressions' }).click();
        await page.getByRole('heading', { name: 'Suppressions' }).waitFor();
        await nav.waitFor({ state: 'hidden' });
        expect(await page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('false');
      } finally {
        await page.setViewportSize(VIEWPORT);
      }
    },
    60_000,
  );
});

if (!run) test.skip('dashboard browser tests (no chromium: see the warning above)', () => undefined);

/** A TXT value as a DNS provider stores a long one: 255-character strings. */
function pieces(value: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += 255) out.push(value.slice(i, i + 255));
  return out;
}

/** A remote image for the email's HTML: counts how often it is fetched. */
async function startPixelServer() {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'Content-Type': 'image/gif', 'Cache-Control': 'no-store' }).end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logo.gif`,
    hits: () => hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
