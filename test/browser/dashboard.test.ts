/**
 * The tenant dashboard (/dashboard) in a real browser (Debian's Chromium under playwright-core) against
 * `npm start` itself: two runs of two projects moving at once over the tenant's WebSocket, then ending; and,
 * with the socket refused, the page polling the runs lists and still showing a run's end. Screenshots under
 * test-artifacts/dashboard/ and axe-core with zero serious or critical violations. One service, one browser.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import type { RunningSandboxes } from '../../local/sandbox/index.ts';
import { browserAvailable, browserRequired, CHROMIUM, signInThroughForm } from '../support/browser.ts';
import {
  type ConsoleHarness,
  expectCleanPage,
  screenshotOnFailure,
  startConsole,
  WAIT,
} from '../support/console-browser.ts';
import { http } from '../support/http.ts';
import { prepareProjectOverHttp } from '../support/lifecycle.ts';
import { sandboxControl, sandboxCredentials, sandboxStartBody } from '../support/sandbox-fixtures.ts';

if (!browserAvailable && !browserRequired)
  console.warn(`dashboard browser test: no Chromium at ${CHROMIUM} (apt-get install chromium): skipped`);

const config = sandboxConfigFromEnv({});
let harness: ConsoleHarness | undefined;
let page: Page;
let base: string;
let token: string;
let sandboxes: RunningSandboxes;
const projects: Record<'Alpha' | 'Beta', string> = { Alpha: '', Beta: '' };
/** When set, the browser's WebSocket to /api/ws is closed at once (the server never sees it). */
let refuseSocket = false;

interface CardState {
  project: string;
  runId: string;
  status: string;
  percent: number;
}

/** What the dashboard shows now: one entry per run card. */
async function cards(): Promise<CardState[]> {
  return page.getByTestId('dashboard-run').evaluateAll((nodes) =>
    nodes.map((n) => {
      const d = (n as unknown as { dataset: Record<string, string> }).dataset;
      return {
        project: d.project ?? '',
        runId: d.runId ?? '',
        status: d.status ?? '',
        percent: Number(d.percent),
      };
    }),
  );
}

/**
 * Samples the cards every 250 ms until `done` says so; answers every sample seen. (Each sample is a round trip
 * into the page: at 100 ms the sampling kept Chromium busier than the cards' own updates.)
 */
async function watch(done: (samples: CardState[][]) => boolean, timeout: number): Promise<CardState[][]> {
  const samples: CardState[][] = [];
  const deadline = Date.now() + timeout;
  for (;;) {
    samples.push(await cards());
    if (done(samples)) return samples;
    if (Date.now() > deadline)
      throw new Error(`dashboard never got there: ${JSON.stringify(samples.at(-1))}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const checkPage = (name: string) => expectCleanPage(page, 'dashboard', name);

async function startRun(projectId: string, options: Record<string, unknown> = {}): Promise<string> {
  const body = sandboxStartBody(sandboxes, config);
  body.enginePayload.options = { ...body.enginePayload.options, ...options };
  const res = await http(base, 'POST', `/api/migrations/project/${projectId}/start`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
}

const jiraLatency = (latencyMs: number) =>
  sandboxControl(sandboxes.jira.url, 'PUT', '/_sandbox/faults', { latencyMs });

const connection = () => page.getByTestId('dashboard-connection').textContent();

describe.skipIf(!browserAvailable && !browserRequired)('the tenant dashboard', () => {
  beforeAll(async () => {
    harness = await startConsole(40);
    ({ base, page } = harness);
    const { password } = harness;
    sandboxes = { ado: { url: harness.adoUrl }, jira: { url: harness.jiraUrl } } as RunningSandboxes;
    const login = await http(base, 'POST', '/api/auth/login', {
      body: { email: 'owner@demo.example.com', password },
      localAddress: '127.0.0.42',
    });
    token = login.body.accessToken as string;
    // Two paid projects over the real path (connect, scan, confirm the mappings, the instant provider).
    for (const name of ['Alpha', 'Beta'] as const) {
      const created = await http(base, 'POST', '/api/projects', {
        token,
        body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
      });
      expect(created.status).toBe(201);
      projects[name] = created.body.id;
      await prepareProjectOverHttp(
        (method, path, options) => http(base, method, path, options ?? {}),
        token,
        created.body.id,
        sandboxCredentials(sandboxes, config),
      );
    }

    await page.routeWebSocket(/\/api\/ws/, (ws) => {
      if (refuseSocket) ws.close({ code: 1011, reason: 'refused by the test' });
      else ws.connectToServer();
    });
    await signInThroughForm(page, base, 'owner@demo.example.com', password);
  }, 240_000);
  screenshotOnFailure('dashboard', () => page);
  afterAll(async () => {
    await harness?.close();
  });

  it('moves two runs of two projects at once over the socket, then shows both COMPLETED', async () => {
    // The runs lists answer nothing here: whatever the cards show came over the socket.
    await page.route(/\/api\/migrations\?/, (route) => route.fulfill({ json: [] }));
    await page.getByRole('navigation').getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await expect.poll(connection, WAIT).toBe('live');

    // A slow Jira keeps both runs going long enough to watch them move.
    await jiraLatency(60);
    await Promise.all([startRun(projects.Alpha), startRun(projects.Beta)]);
    const percentsOf = (samples: CardState[][], project: string) =>
      new Set(
        samples.flatMap((s) =>
          s.filter((c) => c.project === project && c.status === 'RUNNING').map((c) => c.percent),
        ),
      );
    const bothRunning = (s: CardState[]) =>
      ['Alpha', 'Beta'].every((p) =>
        s.some((c) => c.project === p && c.status === 'RUNNING' && c.percent > 0),
      );
    await watch(
      (samples) =>
        samples.some(bothRunning) &&
        percentsOf(samples, 'Alpha').size >= 2 &&
        percentsOf(samples, 'Beta').size >= 2,
      90_000,
    );
    await checkPage('01-two-runs-moving');

    await jiraLatency(0);
    await watch(([...all]) => {
      const now = all.at(-1) ?? [];
      return ['Alpha', 'Beta'].every((p) => now.some((c) => c.project === p && c.status === 'COMPLETED'));
    }, 120_000);
    const ended = page.getByTestId('dashboard-run').filter({ hasText: 'COMPLETED' });
    expect(await ended.count()).toBe(2);
    for (const text of await ended.getByTestId('run-stats').allTextContents())
      expect(text).toMatch(/^Created [1-9]\d*, skipped \d+, failed 0/);
    expect(await connection()).toBe('live');
    await checkPage('02-two-runs-completed');
    await page.unroute(/\/api\/migrations\?/);
  });

  it('polls the runs lists while the socket is refused, and still shows the end of a run', async () => {
    refuseSocket = true;
    await page.goto(`${base}/dashboard`);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await expect.poll(connection, WAIT).toBe('polling');
    await jiraLatency(60);
    const runId = await startRun(projects.Alpha, { dry_run: true });
    const card = page.locator(`[data-run-id="${runId}"]`);
    // Found by a poll: the projects list names it as Alpha's last run, and Alpha's runs list is read.
    await card.waitFor({ timeout: 30_000 });
    expect(await card.getByText('dry run', { exact: true }).count()).toBe(1);
    await jiraLatency(0);
    await expect
      .poll(() => card.getAttribute('data-status'), { timeout: 120_000, interval: 250 })
      .toBe('COMPLETED');
    expect(await connection()).toBe('polling');
    await checkPage('03-polling-ended');

    // The socket back: the page goes live again by itself.
    refuseSocket = false;
    await expect.poll(connection, { timeout: 60_000, interval: 250 }).toBe('live');
    // The socket under the console's CSP: `connect-src 'self'` covers it.
    expect(harness?.cspErrors).toEqual([]);
  });
});
