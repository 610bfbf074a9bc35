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

/**
 * The page at 1280×800 as docs/dashboard/<name>.png (overwritten every run); `scrollTo`: a selector
 * of what the picture is about, scrolled to the top of the picture (else the page's top).
 */
export async function screenshot(page: Page, name: string, opts: { scrollTo?: string } = {}): Promise<void> {
  const scroll = opts.scrollTo
    ? `document.querySelector(${JSON.stringify(opts.scrollTo)}).scrollIntoView({ block: 'start' })`
    : 'window.scrollTo(0, 0)';
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // The top of the page, with no blinking caret, half-finished transition or passing toast.
  await page
    .locator('.toast')
    .first()
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => undefined);
  await page.evaluate(scroll);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), animations: 'disabled', caret: 'hide' });
  // The same page on a phone (docs/dashboard/phone/), then back to the desktop size the tests use.
  mkdirSync(path.join(SCREENSHOT_DIR, 'phone'), { recursive: true });
  await page.setViewportSize(PHONE_VIEWPORT);
  try {
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    await page.evaluate(scroll);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'phone', `${name}.png`), animations: 'disabled', caret: 'hide' });
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
  const checkAndShoot = async (name: string | null, what: string) => {
    const page = getPage()!;
    await page
      .getByRole('status')
      .filter({ hasText: /^Loading/ })
      .first()
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
    await expectAccessible(page, what);
    if (name) await screenshot(page, name);
  };
  return { step, checkAndShoot };
}

/** A dashboard user of the team with a password to sign in with; answers the user's id. */
export async function addUserWithPassword(db: Db, user: { email: string; password: string }, teamId: number, role: TeamRole) {
  const { userId } = await ensureUserInTeam(db, { email: user.email, teamId, role });
  await db.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(user.password) } });
  return userId;
}
