/**
 * The console's flows console.test.ts does not walk, in Debian's Chromium against `npm start` itself: team
 * invitations (invite, listed, revoke), both trackers connected by OAuth (the browser goes to the sandbox's
 * authorization server and comes back connected), a background scan's progress bar then its report, the
 * payment's return pages, a dry run's reports downloaded (preview, failure report, id map), and a run cancelled
 * with the keyboard only through its confirmation. Every page: a screenshot in test-artifacts/console-flows/ and
 * axe-core.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARTIFACTS_DIR,
  browserAvailable,
  browserRequired,
  CHROMIUM,
  signInThroughForm,
} from '../support/browser.ts';
import {
  accessTokenOf,
  type ConsoleHarness,
  expectCleanPage,
  screenshotOnFailure,
  startConsole,
  tabToButton,
  until,
  WAIT,
} from '../support/console-browser.ts';
import { http } from '../support/http.ts';

if (!browserAvailable && !browserRequired)
  console.warn(`console flows browser test: no Chromium at ${CHROMIUM} (apt-get install chromium): skipped`);

/** Lean data: enough items for a run that lasts, few enough for a quick one. */
const ITEMS = 30;
/** Past ASYNC_SCAN_THRESHOLD (functions/domain/connectors.ts): the scan runs in the background. */
const LARGE_SCAN_ITEMS = 10_050;

let h: ConsoleHarness;
let page: Page;
let token: string;
let demoId: string;

const check = (name: string) => expectCleanPage(page, 'console-flows', name);

/** Downloads what the named button saves; the file's text. */
async function download(button: string, filename: string): Promise<string> {
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: button }).click(),
  ]);
  const path = join(ARTIFACTS_DIR, 'console-flows', filename);
  await file.saveAs(path);
  return readFileSync(path, 'utf8');
}

async function startRunFromTheConsole(opts: { dryRun: boolean }): Promise<string> {
  await page.goto(`${h.base}/projects/${demoId}?tab=start`);
  await page.getByLabel('Personal access token').fill('sandbox-ado-pat');
  await page.getByLabel('API token').fill('sandbox-jira-token');
  if (opts.dryRun) await page.getByLabel('Dry run (writes nothing to Jira)').check();
  await page.getByRole('button', { name: 'Start the run' }).click();
  await page.getByRole('heading', { name: /^Run / }).waitFor();
  return new URL(page.url()).pathname.split('/').pop() as string;
}

describe.skipIf(!browserAvailable && !browserRequired)('the web console: more flows', () => {
  beforeAll(async () => {
    h = await startConsole(ITEMS);
    page = h.page;
    token = await accessTokenOf(h, 'owner@demo.example.com');
    const projects = await http(h.base, 'GET', '/api/projects', { token });
    demoId = projects.body.find((p: { name: string }) => p.name.startsWith('Demo')).id;
    // Setup beside the browser (console.test.ts walks it in the console): the seeded stored connections tested.
    for (const type of ['azure_devops', 'jira'])
      expect(
        (await http(h.base, 'POST', '/api/connectors/test', { token, body: { type, projectId: demoId } }))
          .body.success,
      ).toBe(true);
    await signInThroughForm(page, h.base, 'owner@demo.example.com', h.password);
    // npm start (DynamoDB Local, both sandboxes, the seed) takes longer than a hook's 60 s on a loaded machine.
  }, 180_000);
  screenshotOnFailure('console-flows', () => page);
  afterAll(async () => {
    await h?.close();
  });

  it('invites a member: the invitation is listed, then revoked', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Team' }).click();
    await page.getByRole('heading', { name: 'Team', exact: true }).waitFor();
    const form = page.getByRole('region', { name: 'Invite a member' });
    await form.getByLabel('E-mail').fill('newcomer@demo.example.com');
    await form.getByRole('button', { name: 'Invite member' }).click();
    const invitations = page.getByRole('table', { name: 'Pending invitations' });
    await expect.poll(() => invitations.textContent(), WAIT).toContain('newcomer@demo.example.com');
    expect(await invitations.textContent()).toContain('member');
    await check('01-invitation-listed');

    await page.getByRole('button', { name: 'Revoke invitation for newcomer@demo.example.com' }).click();
    await until(async () => expect(await page.getByText('newcomer@demo.example.com').count()).toBe(0));
    const listed = await http(h.base, 'GET', '/api/team/invitations', { token });
    expect(listed.body).toEqual([]);
  });

  it('connects both trackers by OAuth: to the sandbox authorization server and back, connected', async () => {
    const created = await http(h.base, 'POST', '/api/projects', {
      token,
      body: { name: 'OAuth project', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    const projectId = created.body.id as string;
    await page.goto(`${h.base}/projects/${projectId}?tab=connect`);
    const visited: string[] = [];
    const onRequest = (r: { isNavigationRequest(): boolean; url(): string }) => {
      if (r.isNavigationRequest()) visited.push(r.url());
    };
    page.on('request', onRequest);

    const source = page.getByRole('region', { name: 'Source: Azure DevOps' });
    await source.getByLabel('Organization URL').fill(`${h.adoUrl}/sandbox-org`);
    await source.getByLabel('Project').fill('Contoso');
    await source.getByRole('button', { name: 'Connect with Microsoft' }).click();
    await page.waitForURL(/connection=source/, WAIT);
    await expect.poll(() => source.textContent(), WAIT).toContain('Connected (oauth)');

    const target = page.getByRole('region', { name: 'Target: Jira Cloud' });
    await target.getByLabel('Project key').fill('MIG');
    await target.getByRole('button', { name: 'Connect with Atlassian' }).click();
    await page.waitForURL(/connection=target/, WAIT);
    await expect.poll(() => target.textContent(), WAIT).toContain('Connected (oauth)');
    page.off('request', onRequest);
    await expect.poll(() => page.getByText('CONNECTED', { exact: true }).count(), WAIT).toBeGreaterThan(0);
    await check('02-connected-by-oauth');

    // The browser's legs: each provider's authorize page, our callback, back on the console's project page.
    const at = (prefix: string) =>
      visited.filter((u) => u.startsWith(prefix)).map((u) => new URL(u).pathname);
    expect(at(h.adoUrl)).toEqual([expect.stringMatching(/\/oauth2\/v2\.0\/authorize$/)]);
    expect(at(h.jiraUrl)).toEqual(['/authorize']);
    expect(at(`${h.base}/api/`)).toEqual([
      '/api/connections/oauth/callback',
      '/api/connections/oauth/callback',
    ]);
    expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}`);
    expect(new URL(page.url()).searchParams.get('status')).toBe('connected');
  });

  it('brings the browser back with the reason when the consent is declined, and connects nothing', async () => {
    const created = await http(h.base, 'POST', '/api/projects', {
      token,
      body: { name: 'Declined project', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    const projectId = created.body.id as string;
    const oauth = (body: unknown) => http(h.adoUrl, 'PUT', '/_sandbox/ado/oauth', { body });
    expect((await oauth({ decline: true })).status).toBeLessThan(300);
    try {
      await page.goto(`${h.base}/projects/${projectId}?tab=connect`);
      const source = page.getByRole('region', { name: 'Source: Azure DevOps' });
      await source.getByLabel('Organization URL').fill(`${h.adoUrl}/sandbox-org`);
      await source.getByLabel('Project').fill('Contoso');
      await source.getByRole('button', { name: 'Connect with Microsoft' }).click();
      await page.waitForURL(/status=error/, WAIT);
      // Back on the console's page (not a JSON answer of the API), the reason on the tracker's card.
      expect(new URL(page.url()).pathname).toBe(`/projects/${projectId}`);
      const alert = source.getByRole('alert');
      await expect
        .poll(() => alert.textContent(), WAIT)
        .toContain('The Azure DevOps sign-in answered access_denied: the connection was not made');
      await check('02b-oauth-declined');
      const detail = await http(h.base, 'GET', `/api/projects/${projectId}`, { token });
      expect(detail.body.connections.source).toBeNull();
    } finally {
      await oauth({ decline: false });
    }
  });

  it('scans a large source in the background: a progress bar, then the report', async () => {
    const seed = (items: number) => http(h.adoUrl, 'POST', '/_sandbox/seed', { body: { items } });
    expect((await seed(LARGE_SCAN_ITEMS)).status).toBe(200);
    // A little latency per request (about 50 of them) keeps the bar on screen for a few seconds on a fast machine.
    await http(h.adoUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 50 } });
    try {
      await page.goto(`${h.base}/projects/${demoId}?tab=scan`);
      await page.getByRole('button', { name: 'Scan the source' }).click();
      const bar = page.getByRole('progressbar', { name: 'Scan progress' });
      await bar.waitFor(WAIT);
      expect(await bar.textContent()).toMatch(new RegExp(`^\\d+ / ${LARGE_SCAN_ITEMS}$`));
      // One scan at a time: no second one can be started while this one runs.
      expect(await page.getByRole('button', { name: /^Scan/ }).isDisabled()).toBe(true);
      await check('03-scan-progress');
      const report = page.getByTestId('scan-report');
      await report.waitFor({ timeout: 120_000 });
      expect(await bar.count()).toBe(0);
      expect(await report.textContent()).toContain(`Work items${LARGE_SCAN_ITEMS}Types`);
      expect(await page.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
      const perType = page.getByRole('table', { name: 'Work items per type' });
      expect(await perType.getByRole('row').count()).toBeGreaterThan(1);
    } finally {
      // Back to lean data for the runs.
      await http(h.adoUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 0 } });
      expect((await seed(ITEMS)).status).toBe(200);
    }
    // A small scan runs within the request: the report at once, no progress bar.
    await page.getByRole('button', { name: 'Scan again' }).click();
    await expect
      .poll(() => page.getByTestId('scan-report').textContent(), WAIT)
      .toContain(`Work items${ITEMS}Types`);
  }, 180_000);

  it("shows the payment's return pages: success and cancelled", async () => {
    // Where the API sends the browser back from Checkout (functions/api/billing.ts): the project's page.
    // Each opens on the quote, whose status says where the payment stands.
    await page.goto(`${h.base}/projects/${demoId}?payment=success`);
    await page.getByText('Payment received').waitFor();
    await page.getByTestId('quote').waitFor();
    expect(await page.getByRole('tab', { name: 'Quote', selected: true }).count()).toBe(1);
    await check('04-payment-success');
    await page.goto(`${h.base}/projects/${demoId}?payment=cancelled`);
    await page.getByText('Payment cancelled').waitFor();
    await page.getByTestId('quote').waitFor();
    expect(await page.getByText('Payment received').count()).toBe(0);
    await check('05-payment-cancelled');
  });

  it('runs a dry run and downloads its preview, failure report and id map', async () => {
    await page.goto(`${h.base}/projects/${demoId}?tab=mappings`);
    await page.getByRole('button', { name: 'Save mappings' }).click();
    await expect.poll(() => page.getByText('saved', { exact: true }).count(), WAIT).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Confirm mappings' }).click();
    await expect.poll(() => page.getByText('MAPPED', { exact: true }).count(), WAIT).toBeGreaterThan(0);

    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => asked.push(new URL(r.url()).pathname);
    page.on('request', onRequest);
    const runId = await startRunFromTheConsole({ dryRun: true });
    // The run's status says it is a dry run: the page says so while it runs.
    await page.getByTestId('run-dry-run').waitFor(WAIT);
    await expect
      .poll(() => page.getByText('COMPLETED', { exact: true }).count(), { timeout: 60_000, interval: 250 })
      .toBeGreaterThan(0);
    await page.getByRole('progressbar', { name: 'Progress 100%' }).waitFor();
    await check('06-dry-run-completed');

    const preview = JSON.parse(await download('Download dry-run preview', 'preview.json'));
    expect(preview).toEqual((await http(h.base, 'GET', `/api/migrations/${runId}/preview`, { token })).body);
    const items = Number(await page.getByTestId('counter-items').textContent());
    expect(preview).toMatchObject({ runId, totalItems: items, wouldCreate: items });
    const failures = JSON.parse(await download('Download failure report', 'failures.json'));
    expect(failures).toEqual(
      (await http(h.base, 'GET', `/api/migrations/${runId}/failures`, { token })).body,
    );
    const idMap = await download('Download id map (CSV)', 'dry-run-id-map.csv');
    expect(idMap.split(/\r?\n/)[0]).toBe('source_id,source_type,target_key,origin,run_id');
    page.off('request', onRequest);
    // The preview was read once, by its button: the page knew from the status that there is one.
    expect(asked.filter((path) => path === `/api/migrations/${runId}/preview`)).toHaveLength(1);
  });

  it('cancels a running run with the keyboard only, through its confirmation: CANCELLED shown', async () => {
    await page.goto(`${h.base}/projects/${demoId}?tab=quote`);
    await page.getByRole('button', { name: /^Accept and pay/ }).click();
    await expect.poll(() => page.getByText('READY', { exact: true }).count(), WAIT).toBeGreaterThan(0);
    // A slow Jira keeps the run going while the browser cancels it.
    await http(h.jiraUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 300 } });
    // What the browser asks the API (the run's page asks about the run besides its status and stream).
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => asked.push(new URL(r.url()).pathname);
    page.on('request', onRequest);
    try {
      const runId = await startRunFromTheConsole({ dryRun: false });
      // Keyboard only: Tab to the page's Cancel run, Enter; the dialog keeps the focus inside; Tab to its own.
      await page.getByRole('button', { name: 'Cancel run' }).waitFor();
      await page.locator('body').focus();
      await tabToButton(page, 'Cancel run');
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Cancel this run?' });
      await dialog.waitFor();
      await check('07-cancel-confirmation');
      await tabToButton(page, 'Cancel run');
      // The focus is on the dialog's button, not the page's one behind it.
      expect(await dialog.evaluate((d) => d.contains(d.ownerDocument.activeElement))).toBe(true);
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'hidden', timeout: 30_000 });
      await expect.poll(() => page.getByText('CANCELLED', { exact: true }).count(), WAIT).toBeGreaterThan(0);
      expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
      // Its reports are offered; a preview only a dry run has is not, nor asked for: the status says it is
      // no dry run (the failure report, fetched on its button, comes after anything the page asked by itself).
      await page.getByRole('button', { name: 'Download failure report' }).waitFor();
      expect(await page.getByRole('button', { name: 'Download dry-run preview' }).count()).toBe(0);
      expect(await page.getByTestId('run-dry-run').count()).toBe(0);
      await check('08-run-cancelled');
      const failures = JSON.parse(await download('Download failure report', 'cancelled-failures.json'));
      expect(failures).toEqual(
        (await http(h.base, 'GET', `/api/migrations/${runId}/failures`, { token })).body,
      );
      // The Rollback section reads its own state (a cancelled run that wrote to Jira can be taken back).
      const aboutTheRun = asked.filter(
        (path) => path.startsWith(`/api/migrations/${runId}/`) && !/\/(status|stream|rollback)$/.test(path),
      );
      expect(aboutTheRun).toEqual([`/api/migrations/${runId}/cancel`, `/api/migrations/${runId}/failures`]);
    } finally {
      page.off('request', onRequest);
      await http(h.jiraUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 0 } });
    }
    expect(h.cspErrors).toEqual([]);
  });
});
