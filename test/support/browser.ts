/**
 * Browser-test helpers: Debian's Chromium under playwright-core (no browser download), axe-core run inside the
 * page (zero serious or critical violations wanted), and screenshots written as test artifacts under
 * test-artifacts/ (gitignored): of a failed test's page always, of every checked page with TMS_TEST_SCREENSHOTS=1.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const browserRequired = process.env.REQUIRE_BROWSER === '1';
export const browserAvailable = existsSync(CHROMIUM);

export const ARTIFACTS_DIR = resolve(import.meta.dirname, '../../test-artifacts');

/**
 * Whether every checked page is pictured, not only a failed test's. Off by default: the pictures assert nothing,
 * and a full-page capture made Chromium lay out and paint the whole page again, about half of its renderer's CPU
 * in the browser files (docs/testing.md).
 */
export const everyPagePictured = process.env.TMS_TEST_SCREENSHOTS === '1';

export async function screenshot(page: Page, folder: string, name: string): Promise<void> {
  const dir = resolve(ARTIFACTS_DIR, folder);
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: resolve(dir, `${name}.png`), fullPage: true });
}

const axeSource = readFileSync(
  resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'),
  'utf8',
);

/** What the checks read of a page's animations (the functions run in the page, so only their types are shared). */
interface AnimatedPage {
  document: {
    getAnimations(): { playState: string; effect: { getComputedTiming(): { iterations?: number } } | null }[];
  };
}

/** The page's animations that never end (a spinner, moving stripes), running now. */
export async function endlessAnimations(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      (globalThis as unknown as AnimatedPage).document
        .getAnimations()
        .filter((a) => a.playState === 'running' && a.effect?.getComputedTiming().iterations === Infinity)
        .length,
  );
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * axe-core's WCAG 2.x A/AA rules on the page as it is now; the serious and critical violations. axe is
 * evaluated through the DevTools protocol, which the page's CSP (no inline script) does not apply to.
 */
export async function seriousA11yViolations(
  page: Page,
): Promise<{ id: string; help: string; targets: string[] }[]> {
  // Colours mid-transition (a dialog fading in) are not what a reader sees: wait for them to settle. An endless
  // animation (a running run's striped progress bar) never settles and changes no colour: not waited for.
  await page.mouse.move(0, 0);
  await page.waitForFunction(() =>
    (globalThis as unknown as AnimatedPage).document
      .getAnimations()
      .every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Infinity),
  );
  // Once per document: a single-page app keeps it across its own navigations, and the source is half a megabyte.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: unknown[] }> };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] },
    });
    return result.violations;
  })) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      help: v.help,
      targets: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`),
    }));
}

/** The accessibility check of the page as it is now, and its screenshot under test-artifacts/<folder>/ if wanted. */
export async function checkPage(page: Page, folder: string, name: string): Promise<string[]> {
  if (everyPagePictured) await screenshot(page, folder, name);
  return (await seriousA11yViolations(page)).map((v) => `${name}: ${v.id} ${v.help} ${v.targets.join(' ')}`);
}

/** Signs in through the console's form and waits for the projects page. */
export async function signInThroughForm(
  page: Page,
  base: string,
  email: string,
  password: string,
): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}
