/**
 * What the console's browser test files and its bench share: `npm start` itself in a child process (both sandbox
 * trackers with their rate limits off, the demo seed; under vitest on a table of its own in the run's one DynamoDB
 * Local, else with its own), Debian's Chromium with one page, and the waits a loaded machine needs. One harness per
 * file. (Screenshots with the axe check and the sign-in form: test/support/browser.ts.)
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterEach, expect, inject, vi } from 'vitest';
import { LOCAL_TABLE_NAME } from '../../local/table.ts';
import { CHROMIUM, checkPage, screenshot } from './browser.ts';
import { http } from './http.ts';
import { type StartedService, startServiceOnFreePorts } from './local-service.ts';

export interface ConsoleHarness {
  /** The API's and the console's origin. */
  base: string;
  /** The demo logins' password, as `npm start` prints it. */
  password: string;
  service: StartedService;
  browser: Browser;
  page: Page;
  /** Content Security Policy violations the page logged. */
  cspErrors: string[];
  /** The sandbox trackers' base URLs (their control endpoints: /_sandbox/...). */
  adoUrl: string;
  jiraUrl: string;
  /** DynamoDB Local's endpoint and the service's table there, for reading what the service wrote. */
  dynamodbEndpoint: string;
  tableName: string;
  /** The service's DATA_DIR (its mail outbox: `outbox/`). */
  dataDir: string;
  close(): Promise<void>;
}

/** `expect.poll`'s options: its 1 s default is too short for a loaded machine's tracker round trips. */
export const WAIT = { timeout: 30_000, interval: 100 };

export const until = (assertion: () => Promise<void>, timeout = 30_000) =>
  vi.waitFor(assertion, { timeout, interval: 100 });

/**
 * Starts `npm start` with `items` sandbox work items, and a browser page on it; `logBrowser` prints the page's
 * console errors and 4xx/5xx answers (what a failing test wants to see; a benchmark's output does not).
 */
export async function startConsole(items: number, logBrowser = true): Promise<ConsoleHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tms-console-'));
  // Under vitest, the run's DynamoDB Local (test/support/global-setup.ts) with a table for this service: a JVM of
  // the service's own cost about 4 CPU-s to start and compiled the same hot paths again.
  const tableName = `tms-console-${randomUUID().slice(0, 8)}`;
  const started = await startServiceOnFreePorts({
    SANDBOX_ITEMS: String(items),
    DATA_DIR: dataDir,
    ...(process.env.VITEST
      ? { DYNAMODB_LOCAL_URL: inject('dynamodbEndpoint'), DYNAMODB_LOCAL_TABLE: tableName }
      : {}),
  });
  const { service, base, password } = started;
  const output = service.output();
  // Under vitest, the run's one Chromium (test/support/browser-server.ts); this file's pages live in a context of
  // their own, and `close` ends the connection, not the browser.
  const shared = process.env.VITEST ? inject('browserEndpoint') : '';
  const browser = shared
    ? await chromium.connect(shared)
    : await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  // A reader who asked their system for less motion, as the console honours it: no endless animation repaints the
  // page for as long as a run lasts (a running run's stripes kept Chromium busy through the whole run test).
  const context = await browser.newContext({
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    reducedMotion: 'reduce',
  });
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    if (logBrowser && m.type() === 'error') console.log(`browser console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (logBrowser && r.status() >= 400)
      console.log(`browser got ${r.status()} for ${r.request().method()} ${r.url()}`);
  });
  return {
    base,
    password,
    service,
    browser,
    page,
    cspErrors,
    adoUrl: /Azure DevOps sandbox: (\S+)/.exec(output)?.[1] as string,
    jiraUrl: /Jira sandbox: (\S+)/.exec(output)?.[1] as string,
    dynamodbEndpoint: /DynamoDB Local: (\S+)/.exec(output)?.[1] as string,
    tableName: started.tableName ?? LOCAL_TABLE_NAME,
    dataDir,
    async close() {
      await browser.close();
      service.proc.kill('SIGTERM');
      await service.exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Zero serious or critical accessibility violations (and a screenshot under test-artifacts/<folder>/ if wanted). */
export async function expectCleanPage(page: Page, folder: string, name: string): Promise<void> {
  expect(await checkPage(page, folder, name)).toEqual([]);
}

/** After each failed test of the file, a picture of what the browser showed (test-artifacts/<folder>/failed-*). */
export function screenshotOnFailure(folder: string, page: () => Page | undefined): void {
  afterEach(async (ctx) => {
    const shown = page();
    if (ctx.task.result?.state === 'fail' && shown)
      await screenshot(shown, folder, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(
        () => {},
      );
  });
}

/** An access token for API calls a test makes beside the browser (from its own loopback address). */
export async function accessTokenOf(h: ConsoleHarness, email: string): Promise<string> {
  const res = await http(h.base, 'POST', '/api/auth/login', {
    body: { email, password: h.password },
    localAddress: '127.0.0.41',
  });
  return res.body.accessToken as string;
}

/** Presses Tab until the focused element is the named button (keyboard-only use); throws if none is reached. */
export async function tabToButton(page: Page, name: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(
      () =>
        (
          globalThis as unknown as { document: { activeElement: { textContent: string } | null } }
        ).document.activeElement?.textContent?.trim() ?? '',
    );
    if (focused === name) return;
  }
  throw new Error(`no focusable "${name}" reached with Tab`);
}
