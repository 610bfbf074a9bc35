// Browser-test kit for the dashboard: Debian's chromium driven by playwright-core (never a
// downloaded browser), axe-core checks, and screenshots for docs/dashboard/: 1280×800, and 390×844 under phone/.
import AxeBuilder from '@axe-core/playwright';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { hashPassword } from '@mailrail/domain/users/passwords';
import { ensureUserInTeam } from '@mailrail/domain/users/users';
import type { Db } from '@mailrail/platform/db/client';
import type { TeamRole } from '@mailrail/platform/db/generated/enums';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { listenBeforeApp } from '@mailrail/testing/listen-before-app';
import { startTestApi } from '../../apps/api/src/testing/api-harness';
import { startTestWorkerEnv, type TestWorkerEnv } from '../../apps/worker/src/testing/worker-harness';
import { ensureWebBuilt } from '../../scripts/web-build';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = path.resolve(__dirname, '../../docs/dashboard');
export const VIEWPORT = { width: 1280, height: 800 };
export const PHONE_VIEWPORT = { width: 390, height: 844 };

/**
 * Without chromium the browser tests are skipped with a message on a developer's machine, and
 * fail in CI (`.ci/run` installs it with apt).
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.CI) return false;
  console.warn(
    `Dashboard browser tests skipped: no chromium at ${CHROMIUM_PATH}. Install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH).`,
  );
  return false;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`no chromium at ${CHROMIUM_PATH}: .ci/run installs it with \`apt-get install -y chromium\``);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // Root needs --no-sandbox; the rest keeps chromium from reaching out to the network.
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A fresh browser profile (its own cookies) at 1280×800, clipboard readable for the copy checks. */
export async function newContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, viewport: VIEWPORT, timezoneId: 'UTC', locale: 'en-GB', colorScheme: 'light' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  return context;
}

/** Chromium, a fresh profile and one page signed in as `user`, landed on the team's overview. */
export async function signedInPage(
  baseURL: string,
  user: { email: string; password: string },
  teamId: number,
): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  const browser = await launchChromium();
  const context = await newContext(browser, baseURL);
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`/teams/${teamId}/?$`));
  return { browser, context, page };
}

/** What a dashboard browser test runs against: a worker, the API serving the dashboard, one signed-in page. */
export interface DashboardStack {
  worker: TestWorkerEnv;
  /** The API's own URL (its PUBLIC_URL). */
  url: string;
  teamId: number;
  page: Page;
  close: () => Promise<void>;
}

/**
 * The stack of a dashboard browser test file: the API listens before it exists (it is built with
 * its own URL as PUBLIC_URL) and shares the worker's database and Redis prefix; `user` becomes a
 * MEMBER of the worker's team; `prepare` seeds what the file needs; then `user` is signed in.
 */
export async function startDashboardStack(opts: {
  user: { email: string; password: string };
  workerConfig?: Record<string, string>;
  prepare?: (worker: TestWorkerEnv) => Promise<unknown>;
}): Promise<DashboardStack> {
  if (!chromiumAvailable())
    throw new Error('no chromium at /usr/bin/chromium: in CI, .ci/run installs it with `apt-get install -y chromium`');
  ensureWebBuilt();
  const early = await listenBeforeApp();
  const worker = await startTestWorkerEnv(opts.workerConfig);
  const api = await startTestApi(
    { PUBLIC_URL: early.url },
    { databaseUrl: worker.config.DATABASE_URL, redisPrefix: worker.config.REDIS_PREFIX },
  );
  await worker.start();
  early.serve(api.app);
  await addUserWithPassword(worker.deps.db, opts.user, worker.teamId, 'MEMBER');
  await opts.prepare?.(worker);
  const { browser, context, page } = await signedInPage(early.url, opts.user, worker.teamId);
  const close = async () => {
    await context.close().catch(() => undefined);
    await browser.close().catch(() => undefined);
    await new Promise((r) => early.server.close(r));
    await api.close();
    await worker.close();
  };
  return { worker, url: early.url, teamId: worker.teamId, page, close };
}

/**
 * axe-core on the page as it is now: no serious or critical violation. The frame showing an
 * email's own HTML (sandboxed, scripts off) is left out: its content is the sender's, not the
 * dashboard's, and axe cannot run in a frame without scripts (it waits for it forever).
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).exclude('iframe[sandbox]').analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = bad.map(
    (v) =>
      `${v.impact} ${v.id}: ${v.help}\n    ${v.nodes
        .slice(0, 5)
        .map((n) => n.target.join(' '))
        .join('\n    ')}`,
  );
  if (bad.length) throw new Error(`axe found ${bad.length} serious accessibility problem(s) on ${what}:\n  ${report.join('\n  ')}`);
}

/** A control smaller than this, in CSS pixels, is hard to hit with a finger (WCAG 2.5.5, Apple's and Android's guides). */
export const MIN_TOUCH_TARGET = 44;

/**
 * At phone size (the page as it is now): the page does not scroll sideways, and every visible
 * control (link, button, field, select, tab, switch, menu item, summary, focusable element) is at
 * least MIN_TOUCH_TARGET × MIN_TOUCH_TARGET CSS px. A checkbox or radio counts with its label
 * (tapping the label toggles it). The one exemption is WCAG 2.5.8's "inline" one: a link inside a
 * sentence, whose height is the line's; no spacing exemption is taken (docs/dashboard.md, "Touch
 * targets"). The frame with an email's own HTML is the sender's content and is left out.
 */
export async function expectPhoneFriendly(page: Page, what: string): Promise<void> {
  // Runs in the page: plain JavaScript in a string (the test build has no DOM types).
  const problems = (await page.evaluate(String.raw`((min) => {
    const found = [];
    const doc = document.scrollingElement || document.documentElement;
    if (doc.scrollWidth > window.innerWidth + 1) {
      // Name what sticks out: the outermost elements past the right edge.
      const out = [...document.querySelectorAll('body *')].filter(
        (el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 1),
      );
      const names = out.slice(0, 3).map((el) => el.tagName.toLowerCase() + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : ''));
      found.push('the page scrolls sideways: ' + doc.scrollWidth + ' px wide in ' + window.innerWidth + ' (past the edge: ' + names.join(', ') + ')');
    }
    const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=tab], [role=switch], ' +
      '[role=menuitem], [role=menuitemradio], [tabindex]:not([tabindex="-1"])';
    const display = (el) => getComputedStyle(el).display;
    // WCAG's inline exemption: a link that is part of a sentence (its block holds other text).
    const inSentence = (el) => {
      if (el.tagName !== 'A' || display(el) !== 'inline') return false;
      let block = el.parentElement;
      while (block && display(block) === 'inline') block = block.parentElement;
      const own = (el.textContent || '').trim().length;
      return !!block && (block.textContent || '').replace(/\s+/g, ' ').trim().length > own + 2;
    };
    for (const el of document.querySelectorAll(selector)) {
      if (el.closest('[aria-hidden="true"], [inert]')) continue;
      if (getComputedStyle(el).visibility === 'hidden' || el.getClientRects().length === 0) continue;
      let rect = el.getBoundingClientRect();
      if (rect.right <= 0 || rect.bottom <= 0) continue; // off screen until focused (the skip link)
      if (el.matches('input[type=checkbox], input[type=radio]')) {
        const label = el.closest('label') || (el.id ? document.querySelector('label[for="' + el.id + '"]') : null);
        if (label) rect = label.getBoundingClientRect();
      }
      if (rect.width >= min - 0.5 && rect.height >= min - 0.5) continue;
      if (inSentence(el)) continue;
      const name = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('name') || '').replace(/\s+/g, ' ').trim().slice(0, 40);
      const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '';
      found.push(el.tagName.toLowerCase() + cls + ' "' + name + '": ' + Math.round(rect.width) + '×' + Math.round(rect.height));
    }
    return found;
  })(${MIN_TOUCH_TARGET})`)) as string[];
  if (problems.length)
    throw new Error(
      `${what} at ${PHONE_VIEWPORT.width} px: ${problems.length} problem(s):\n  ${[...new Set(problems)].slice(0, 40).join('\n  ')}`,
    );
}

/**
 * The page at 1280×800 as docs/dashboard/<name>.png (overwritten every run), then at 390×844 as
 * docs/dashboard/phone/<name>.png, checked with expectPhoneFriendly; `scrollTo`: a selector of what
 * the picture is about, scrolled to the top of the picture (else the page's top). A page already at
 * phone size (a path walked on a phone) is photographed and checked at that size only; `phone: false`
 * takes the desktop picture only (for a path whose phone pass takes its own).
 */
export async function screenshot(page: Page, name: string, opts: { scrollTo?: string; phone?: boolean } = {}): Promise<void> {
  const scroll = opts.scrollTo
    ? `document.querySelector(${JSON.stringify(opts.scrollTo)}).scrollIntoView({ block: 'start' })`
    : 'window.scrollTo(0, 0)';
  mkdirSync(path.join(SCREENSHOT_DIR, 'phone'), { recursive: true });
  // The top of the page, with no blinking caret, half-finished transition or passing toast.
  await page
    .locator('.toast')
    .first()
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => undefined);
  const shootPhone = async () => {
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    await page.evaluate(scroll);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'phone', `${name}.png`), animations: 'disabled', caret: 'hide' });
    await expectPhoneFriendly(page, name);
  };
  if (page.viewportSize()?.width === PHONE_VIEWPORT.width) return shootPhone();
  await page.evaluate(scroll);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), animations: 'disabled', caret: 'hide' });
  if (opts.phone === false) return;
  // The same page on a phone, then back to the desktop size the tests use.
  await page.setViewportSize(PHONE_VIEWPORT);
  try {
    await shootPhone();
  } finally {
    await page.setViewportSize(VIEWPORT);
  }
}

/**
 * The two helpers every browser path uses, on its one page: `step`, a test of the path that keeps
 * the page as it was in .cache/dashboard-failures/ when it fails; `checkAndShoot`, which waits
 * until the page has settled (no "Loading…" left), checks it with axe and photographs it.
 */
export function browserPath(getPage: () => Page | undefined) {
  const step = (name: string, fn: () => Promise<void>, timeoutMs: number) =>
    test(
      name,
      async () => {
        try {
          await fn();
        } catch (err) {
          const file = path.resolve(__dirname, '../../.cache/dashboard-failures', `${name.replace(/\W+/g, '-').slice(0, 60)}.png`);
          mkdirSync(path.dirname(file), { recursive: true });
          await getPage()
            ?.screenshot({ path: file, fullPage: true })
            .catch(() => undefined);
          throw err;
        }
      },
      timeoutMs,
    );
  const checkAndShoot = async (name: string | null, what: string, opts: { scrollTo?: string; phone?: boolean } = {}) => {
    const page = getPage()!;
    await page
      .getByRole('status')
      .filter({ hasText: /^Loading/ })
      .first()
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
    await expectAccessible(page, what);
    if (name) await screenshot(page, name, opts);
  };
  return { step, checkAndShoot };
}

/** A dashboard user of the team with a password to sign in with; answers the user's id. */
export async function addUserWithPassword(db: Db, user: { email: string; password: string }, teamId: number, role: TeamRole) {
  const { userId } = await ensureUserInTeam(db, { email: user.email, teamId, role });
  await db.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(user.password) } });
  return userId;
}
