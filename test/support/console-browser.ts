/**
 * What the console's browser test files share: `npm start` itself in a child process (DynamoDB Local, both
 * sandbox trackers with their rate limits off, the demo seed), Debian's Chromium with one page, and the
 * waits a loaded machine needs. One harness per file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect, vi } from 'vitest';
import { CHROMIUM, screenshot, seriousA11yViolations } from './browser.ts';
import { freePort } from './global-setup.ts';
import { http } from './http.ts';
import { type StartedService, startService } from './local-service.ts';

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
  /** DynamoDB Local's endpoint, for reading what the service wrote. */
  dynamodbEndpoint: string;
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
  const { service, dataDir, port, dynamodbPort } = await startOnFreePorts(items);
  const output = service.output();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
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
    base: `http://127.0.0.1:${port}`,
    password: /password for every demo login: (\S+)/.exec(output)?.[1] as string,
    service,
    browser,
    page,
    cspErrors,
    adoUrl: /Azure DevOps sandbox: (\S+)/.exec(output)?.[1] as string,
    jiraUrl: /Jira sandbox: (\S+)/.exec(output)?.[1] as string,
    dynamodbEndpoint: `http://127.0.0.1:${dynamodbPort}`,
    async close() {
      await browser.close();
      service.proc.kill('SIGTERM');
      await service.exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `npm start` on four ports the kernel just said were free. Between that answer and the service's bind (seconds
 * later: DynamoDB Local and the sandboxes start first) another process may take one, e.g. as the local port of
 * an outgoing connection; then it starts again on new ports rather than failing the file.
 */
async function startOnFreePorts(
  items: number,
): Promise<{ service: StartedService; dataDir: string; port: number; dynamodbPort: number }> {
  for (let attempt = 1; ; attempt++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'tms-console-'));
    const [port, dynamodbPort, adoPort, jiraPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    try {
      const service = await startService({
        PORT: String(port),
        DYNAMODB_PORT: String(dynamodbPort),
        SANDBOX_ADO_PORT: String(adoPort),
        SANDBOX_JIRA_PORT: String(jiraPort),
        SANDBOX_ITEMS: String(items),
        DATA_DIR: dataDir,
      });
      return { service, dataDir, port, dynamodbPort };
    } catch (err) {
      rmSync(dataDir, { recursive: true, force: true });
      if (attempt >= 3 || !String(err).includes('EADDRINUSE')) throw err;
    }
  }
}

/** A screenshot under test-artifacts/<folder>/ and the accessibility check of the page as it is now. */
export async function checkPage(page: Page, folder: string, name: string): Promise<void> {
  await screenshot(page, folder, name);
  expect(await seriousA11yViolations(page), name).toEqual([]);
}

/** Signs in through the sign-in page and waits for the projects page. */
export async function signIn(h: ConsoleHarness, email: string): Promise<void> {
  await h.page.goto(`${h.base}/`);
  await h.page.getByLabel('E-mail').fill(email);
  await h.page.getByLabel(/^Password/).fill(h.password);
  await h.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await h.page.getByRole('heading', { name: 'Projects' }).waitFor();
}

/** An access token for API calls a test makes beside the browser (from its own loopback address). */
export async function accessTokenOf(h: ConsoleHarness, email: string): Promise<string> {
  const res = await http(h.base, 'POST', '/api/auth/login', {
    body: { email, password: h.password },
    localAddress: '127.0.0.41',
  });
  return res.body.accessToken as string;
}
