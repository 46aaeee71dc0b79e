/**
 * The web console in a real browser (Debian's Chromium under playwright-core) against `npm start` itself (a
 * child process with the sandbox trackers): the customer journey from sign-in to a COMPLETED run with its id
 * map downloaded, a failed connection test showing the API's exact message, a mapping error on its row, a run
 * paused and resumed with the keyboard only, that run rolled back (its preview, then the confirmed rollback, paused
 * and resumed from the rollback's own controls, with its status), and
 * the member's view. Every page: a screenshot under
 * test-artifacts/console/ and axe-core with zero serious or critical violations. One browser, one page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkEventId } from '../../functions/domain/run-events.ts';
import { createDocumentClient } from '../../functions/store/client.ts';
import { createStore } from '../../functions/store/index.ts';
import { LOG_TAIL } from '../../web/src/features/runs/runStreamState.ts';
import {
  ARTIFACTS_DIR,
  browserAvailable,
  browserRequired,
  CHROMIUM,
  endlessAnimations,
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
import { startOidcProvider, type TestProvider } from '../support/oidc-provider.ts';

if (!browserAvailable && !browserRequired)
  console.warn(`console browser test: no Chromium at ${CHROMIUM} (apt-get install chromium): skipped`);

let h: ConsoleHarness;
let page: Page;
let idp: TestProvider | undefined;
/** The run the journey starts and completes (the long-log test opens it again). */
let journeyRun: { projectId: string; runId: string } | undefined;

const checkPage = (name: string) => expectCleanPage(page, 'console', name);
const signIn = (email: string) => signInThroughForm(page, h.base, email, h.password);

describe.skipIf(!browserAvailable && !browserRequired)('the web console', () => {
  beforeAll(async () => {
    // The tenant's identity provider for single sign-on: a real OpenID Provider on loopback, started first so that
    // the service's process inherits its port's registration with the outbound policy.
    idp = await startOidcProvider({ redirectUri: () => `${h.base}/api/auth/sso/callback` });
    h = await startConsole(60);
    page = h.page;
    // A hang guard above the default: npm start (DynamoDB Local, both sandboxes, the seed) on a loaded machine.
  }, 180_000);
  screenshotOnFailure('console', () => page);
  afterAll(async () => {
    await idp?.close();
    await h?.close();
  });

  it('is served on the API origin with its security headers, and asks a visitor to sign in', async () => {
    const index = await http(h.base, 'GET', '/projects/anything');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toMatch(/^text\/html/);
    expect(index.headers['content-security-policy']).toContain("script-src 'self'");
    expect(index.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(index.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    // The API keeps its own answers: an unknown API path is the API's 404, not the console.
    expect((await http(h.base, 'GET', '/api/nope')).body.code).toBe('ROUTE_NOT_FOUND');

    await page.goto(`${h.base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/signin');
    await checkPage('01-sign-in');

    await page.getByLabel('E-mail').fill('owner@demo.example.com');
    await page.getByLabel(/^Password/).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), WAIT).toContain('Invalid credentials');
  });

  it('signs the owner in, keeps the session across a reload by the refresh cookie, creates and deletes a project', async () => {
    await signIn('owner@demo.example.com');
    await page.reload();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    // The access token lives in memory only.
    const storage = await page.evaluate(() => {
      const w = globalThis as unknown as { localStorage: object; sessionStorage: object };
      return JSON.stringify({ ...w.localStorage, ...w.sessionStorage });
    });
    expect(storage).toBe('{}');

    await page.getByLabel('Project name').fill('Browser project');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('link', { name: 'Browser project' }).waitFor();
    await checkPage('02-projects');

    await page.getByRole('button', { name: 'Delete Browser project' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.textContent(), WAIT).toContain('Browser project');
    await checkPage('03-delete-confirmation');
    await dialog.getByRole('button', { name: 'Delete project' }).click();
    await until(async () =>
      expect(await page.getByRole('link', { name: 'Browser project' }).count()).toBe(0),
    );
  });

  it('connects the trackers: a refused token shows the connection test message, the stored ones connect', async () => {
    await page.getByRole('link', { name: /^Demo/ }).click();
    await page.getByRole('tab', { name: 'Connect' }).waitFor();
    const source = page.getByRole('region', { name: 'Source: Azure DevOps' });
    await source.getByLabel('Organization URL').fill(`${h.adoUrl}/sandbox-org`);
    await source.getByLabel('Project').fill('Contoso');
    await source.getByLabel('Personal access token').fill('wrong-pat');
    await source.getByRole('button', { name: 'Test and save source' }).click();
    const result = source.getByTestId('connection-result');
    await result.waitFor();
    // The exact message the API's connection test gives for these credentials.
    const token = await accessTokenOf(h, 'owner@demo.example.com');
    const expected = await http(h.base, 'POST', '/api/connectors/test', {
      token,
      body: {
        type: 'azure_devops',
        credentials: {
          organization_url: `${h.adoUrl}/sandbox-org`,
          project: 'Contoso',
          personal_access_token: 'wrong-pat',
        },
      },
    });
    expect(expected.body.success).toBe(false);
    expect(await result.textContent()).toContain(expected.body.message);
    await checkPage('04-connect-failed');

    // The refused token replaced nothing (a failed test keeps the stored connection): the right one connects.
    await source.getByLabel('Personal access token').fill('sandbox-ado-pat');
    await source.getByRole('button', { name: 'Test and save source' }).click();
    await until(async () =>
      expect(await source.getByTestId('connection-result').textContent()).toContain('Connection works'),
    );
    const target = page.getByRole('region', { name: 'Target: Jira Cloud' });
    await target.getByRole('button', { name: 'Test stored connection' }).click();
    await until(async () =>
      expect(await target.getByTestId('connection-result').textContent()).toContain('Connection works'),
    );
    await until(async () =>
      expect(await page.getByText('CONNECTED', { exact: true }).count()).toBeGreaterThan(0),
    );
  });

  it('scans and shows the report with its charts and price', async () => {
    await page.getByRole('tab', { name: 'Scan report' }).click();
    await page.getByRole('button', { name: 'Scan the source' }).click();
    const report = page.getByTestId('scan-report');
    await report.waitFor({ timeout: 30_000 });
    expect(await report.textContent()).toContain('Work items60');
    expect(await page.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await checkPage('05-scan-report');
  });

  it('shows a mapping problem on its row, then saves and confirms the suggested mappings', async () => {
    await page.getByRole('tab', { name: 'Mappings' }).click();
    const types = page.getByRole('table', { name: 'Work item types' });
    await types.waitFor();
    const firstTarget = types.getByRole('combobox').first();
    const suggested = await firstTarget.inputValue();
    await firstTarget.fill('No Such Issue Type');
    await page.getByRole('button', { name: 'Save mappings' }).click();
    await expect.poll(() => types.textContent(), WAIT).toContain('has no issue type "No Such Issue Type"');
    await checkPage('06-mappings-error');

    await firstTarget.fill(suggested);
    await page.getByRole('button', { name: 'Save mappings' }).click();
    await expect.poll(() => page.getByText('saved', { exact: true }).count(), WAIT).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Confirm mappings' }).click();
    await expect.poll(() => page.getByText('MAPPED', { exact: true }).count(), WAIT).toBeGreaterThan(0);
  });

  it('accepts the quote (the instant provider pays offline)', async () => {
    await page.getByRole('tab', { name: 'Quote' }).click();
    await page.getByTestId('quote').waitFor();
    await checkPage('07-quote');
    await page.getByRole('button', { name: /^Accept and pay/ }).click();
    await expect
      .poll(() => page.getByText('READY', { exact: true }).count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
  });

  it('starts a run and follows it live; pause and resume with the keyboard only; downloads the id map', async () => {
    await page.getByRole('tab', { name: 'Start a run' }).click();
    await page.getByLabel('Personal access token').fill('sandbox-ado-pat');
    await page.getByLabel('API token').fill('sandbox-jira-token');
    // The journey is the run's life (live, paused, resumed, completed), not its files or comments (the engine
    // files' claims): left out, 60 items' worth of them cost the service no CPU here.
    await page.getByLabel('Attachments', { exact: true }).uncheck();
    await page.getByLabel('Comments', { exact: true }).uncheck();
    // Verified later from the run's page, on demand (its own test below).
    await page.getByLabel('Verify every item at the end').uncheck();
    await checkPage('08-start-run');
    // A slow Jira keeps the run going while the keyboard reaches Pause (a wait costs no CPU).
    await http(h.jiraUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 300 } });
    const projectId = new URL(page.url()).pathname.split('/')[2] as string;
    await page.getByRole('button', { name: 'Start the run' }).click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    journeyRun = { projectId, runId: new URL(page.url()).pathname.split('/')[2] as string };
    await expect
      .poll(() => page.getByTestId('stream-state').textContent(), WAIT)
      .toMatch(/stream (open|ended)/);

    // Keyboard only: Tab to Pause, Enter; then to Resume, Enter. (The run may already be past pausing.)
    const paused = await page
      .getByRole('button', { name: 'Pause' })
      .waitFor({ timeout: 10_000 })
      .then(() => true)
      .catch(() => false);
    if (paused) {
      // Running, for a reader who asked for less motion (the harness's): the progress bar's stripes stand still.
      await page.getByTestId('run-progress').waitFor();
      expect(await endlessAnimations(page)).toBe(0);
      await page.locator('body').focus();
      await tabToButton(page, 'Pause');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Resume' }).waitFor({ timeout: 20_000 });
      await checkPage('09-run-paused');
      await http(h.jiraUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 0 } });
      await page.locator('body').focus();
      await tabToButton(page, 'Resume');
      await page.keyboard.press('Enter');
    }
    await expect
      .poll(() => page.getByText('COMPLETED', { exact: true }).count(), {
        timeout: 120_000,
        interval: 500,
      })
      .toBeGreaterThan(0);
    expect(paused).toBe(true);
    expect(Number(await page.getByTestId('counter-created').textContent())).toBeGreaterThan(0);
    expect(await page.getByTestId('run-log').textContent()).not.toContain('Waiting for events');
    await checkPage('10-run-completed');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download id map (CSV)' }).click(),
    ]);
    const file = join(ARTIFACTS_DIR, 'console', 'id-map.csv');
    await download.saveAs(file);
    expect(readFileSync(file, 'utf8').split(/\r?\n/)[0]).toBe(
      'source_id,source_type,target_key,origin,run_id',
    );

    await page.goBack();
    await page.getByRole('tab', { name: 'Run history' }).click();
    await page.getByRole('table', { name: 'Runs' }).waitFor();
    await checkPage('11-run-history');
  });

  it("opens a finished run with a long log at its end: the page's stream carries only the newest events", async () => {
    if (!journeyRun) throw new Error('the journey started no run');
    const { projectId, runId } = journeyRun;
    const token = await accessTokenOf(h, 'owner@demo.example.com');
    const tenantId = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).tenantId;
    const store = createStore({
      db: createDocumentClient({ region: 'eu-west-2', endpoint: h.dynamodbEndpoint }),
      name: h.tableName,
    });
    // A long run's log: 3,000 lines before the run's own (ids of phase 0 sort first), a hundred an item.
    const LINES = 3_000;
    for (let from = 0; from < LINES; from += 100)
      await store.runs.appendEvents(
        tenantId,
        projectId,
        runId,
        Array.from({ length: 100 }, (_, k) => ({
          id: chunkEventId(0, from / 100, k),
          event: { type: 'log' as const, message: `Earlier line ${from + k + 1}` },
        })),
      );
    const history = await store.runs.events(tenantId, projectId, runId, undefined, 10_000);
    expect(history.length).toBeGreaterThan(LINES);
    const lastLine = history.findLast((e) => e.event.type === 'log')?.event;

    const viewer = await page.context().newPage();
    try {
      // Counts what the page's EventSource hands it (every kind the page listens to).
      await viewer.addInitScript(() => {
        const g = globalThis as unknown as {
          EventSource: new (url: string) => { addEventListener(type: string, f: () => void): void };
          __streamEvents: number;
        };
        g.__streamEvents = 0;
        g.EventSource = new Proxy(g.EventSource, {
          construct: (target, args: [string]) => {
            const source = new target(...args);
            for (const type of ['progress', 'log', 'status', 'done'])
              source.addEventListener(type, () => {
                g.__streamEvents += 1;
              });
            return source;
          },
        });
      });
      await viewer.goto(`${h.base}/runs/${runId}`);
      await viewer.getByText('stream ended').waitFor({ timeout: 60_000 });
      await viewer.getByText('COMPLETED', { exact: true }).waitFor();
      const received = await viewer.evaluate(
        () => (globalThis as unknown as { __streamEvents: number }).__streamEvents,
      );
      // The page shows the newest LOG_TAIL lines: it asks for no more than that many events.
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThanOrEqual(LOG_TAIL);
      const shown = ((await viewer.getByTestId('run-log').textContent()) ?? '').split('\n');
      expect(shown.at(-1)).toBe(lastLine?.type === 'log' ? lastLine.message : undefined);
      expect(shown.join('\n')).not.toContain('Earlier line');
    } finally {
      await viewer.close();
    }
  });

  it('verifies the finished run from its page: the stream follows the verification, then its summary and audit', async () => {
    if (!journeyRun) throw new Error('the journey started no run');
    const { runId } = journeyRun;
    await page.goto(`${h.base}/runs/${runId}`);
    await page.getByText('stream ended').waitFor({ timeout: 60_000 });
    const section = page.getByTestId('verification');
    await section.getByText('Not verified yet.').waitFor();
    await section.getByRole('button', { name: 'Verify every item' }).click();
    // The page's stream ended with the run's done; the verification's events come on a stream opened again.
    await expect
      .poll(() => page.getByTestId('run-log').textContent(), { timeout: 60_000, interval: 500 })
      .toMatch(/Verification done: \d+ of \d+ items fully faithful/);
    await page.getByText('COMPLETED', { exact: true }).waitFor({ timeout: 30_000 });
    const token = await accessTokenOf(h, 'owner@demo.example.com');
    const summary = (await http(h.base, 'GET', `/api/migrations/${runId}/verification`, { token })).body as {
      itemsChecked: number;
      fullyFaithful: number;
    };
    expect(summary.itemsChecked).toBeGreaterThan(0);
    await expect
      .poll(() => section.getByTestId('verification-summary').textContent(), WAIT)
      .toContain(`${summary.fullyFaithful} of ${summary.itemsChecked} items fully faithful`);
    await section.getByRole('button', { name: 'Verify again' }).waitFor();
    await checkPage('11b-run-verified');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      section.getByRole('button', { name: 'Download audit (CSV)' }).click(),
    ]);
    const file = join(ARTIFACTS_DIR, 'console', 'verification.csv');
    await download.saveAs(file);
    const lines = readFileSync(file, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('source_id,jira_key,result,field,expected,actual,notes');
    expect(lines.length).toBeGreaterThan(summary.itemsChecked);
  });

  it("rolls the journey's run back from its page: the preview's counts and list first, then the confirmed rollback, paused and resumed", async () => {
    if (!journeyRun) throw new Error('the journey started no run');
    const { runId } = journeyRun;
    await page.goto(`${h.base}/runs/${runId}`);
    await page.getByText('COMPLETED', { exact: true }).waitFor();
    const section = page.getByRole('region', { name: 'Rollback' });

    // The preview: it writes nothing, then its counts, what it cannot undo, and the list
    await section.getByRole('button', { name: 'Roll back…' }).click();
    await expect
      .poll(() => section.getByTestId('rollback-state').textContent(), { timeout: 60_000, interval: 500 })
      .toContain('issues would be deleted; nothing is deleted yet');
    const count = async (key: string) => Number(await section.getByTestId(`rollback-${key}`).textContent());
    const deleted = await count('deleted');
    const items = await count('items');
    expect(deleted).toBeGreaterThan(0);
    expect(items).toBeGreaterThanOrEqual(deleted);
    expect(await section.getByTestId('rollback-not-undone').textContent()).toContain(
      'Jira does not reuse keys',
    );
    expect(await page.getByText('COMPLETED', { exact: true }).count()).toBeGreaterThan(0);
    const [list] = await Promise.all([
      page.waitForEvent('download'),
      section.getByRole('button', { name: 'Download the list (CSV)' }).click(),
    ]);
    const file = join(ARTIFACTS_DIR, 'console', 'rollback-preview.csv');
    await list.saveAs(file);
    const lines = readFileSync(file, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('source_id,jira_key,would,reason');
    expect(lines.filter((l) => l.split(',')[2] === 'delete')).toHaveLength(deleted);
    await checkPage('11a-rollback-preview');

    // Another choice on edited issues is previewed again first; back to the preview's, the confirmation
    await section.getByLabel('Also delete issues edited in Jira after the run').check();
    await section.getByRole('button', { name: 'Preview again with this choice' }).waitFor();
    await section.getByLabel('Also delete issues edited in Jira after the run').uncheck();
    await section.getByRole('button', { name: 'Roll back for real…' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.textContent(), WAIT).toContain(`deletes the ${deleted} issues`);
    await checkPage('11b-rollback-confirm');
    // A slow Jira keeps the rollback going while it is paused (a wait costs no CPU)
    await http(h.jiraUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 3_000 } });
    await dialog.getByRole('button', { name: `Delete ${deleted} issues` }).click();

    // Paused from the section: the engine stops at its next checkpoint; the status and state say so
    await section.getByRole('button', { name: 'Pause rollback' }).click();
    await expect
      .poll(() => section.getByTestId('rollback-state').textContent(), { timeout: 60_000, interval: 500 })
      .toBe('Rolling back: paused');
    await section.getByText('ROLLBACK_PAUSED', { exact: true }).waitFor();
    expect(await section.getByRole('button', { name: 'Pause rollback' }).count()).toBe(0);
    // Cancel asks first; kept going, nothing moves
    await section.getByRole('button', { name: 'Cancel rollback…' }).click();
    const cancel = page.getByRole('dialog');
    await expect.poll(() => cancel.textContent(), WAIT).toContain('what it has deleted stays deleted');
    await checkPage('11c-rollback-paused');
    await cancel.getByRole('button', { name: 'Keep going' }).click();
    await until(async () => expect(await page.getByRole('dialog').count()).toBe(0));

    // Resumed: it carries on from its checkpoint to its end
    await http(h.jiraUrl, 'PUT', '/_sandbox/faults', { body: { latencyMs: 0 } });
    await section.getByRole('button', { name: 'Resume rollback' }).click();

    // The rollback carried out: what it did, the run ROLLED_BACK
    await expect
      .poll(() => section.getByTestId('rollback-state').textContent(), { timeout: 60_000, interval: 500 })
      .toBe(`Rolled back: ${deleted} of ${items} issues deleted from Jira.`);
    await page.getByText('ROLLED_BACK', { exact: true }).waitFor();
    await checkPage('11d-rolled-back');
  });

  it("renders the owner's other pages: team, billing, plugins, single sign-on, API reference", async () => {
    for (const [link, heading, shot] of [
      ['Team', 'Team', '12-team'],
      ['Billing', 'Billing', '13-billing'],
      ['Plugins', 'Plugins', '14-plugins'],
      ['Single sign-on', 'Single sign-on', '15-sso'],
      ['API reference', 'API reference', '16-api-reference'],
    ] as const) {
      await page.getByRole('navigation').getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      if (link === 'API reference') await page.getByTestId('api-operations').waitFor();
      if (link === 'Billing') await page.getByRole('table', { name: 'Payments' }).waitFor();
      await checkPage(shot);
    }
    expect(await page.getByText('/api/projects/{projectId}/quote/accept').count()).toBeGreaterThan(0);
  });

  it("configures single sign-on on the owner's page; a user then signs in through the tenant's provider", async () => {
    const provider = idp as TestProvider;
    await page.getByRole('navigation').getByRole('link', { name: 'Single sign-on' }).click();
    await page.getByLabel(/^Sign-in name/).fill('demo-co');
    await page.getByLabel(/^Issuer URL/).fill(provider.issuer);
    await page.getByLabel(/^Client id/).fill(provider.clientId);
    await page.getByLabel(/^Client secret/).fill(provider.clientSecret);
    await page.getByLabel(/^Allowed e-mail domains/).fill('sso.example.com');
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await expect.poll(() => page.getByText('/api/auth/sso/demo-co/start').count(), WAIT).toBe(1);
    await checkPage('16b-sso-configured');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    provider.accounts.set('sso-user', { email: 'jo@sso.example.com', email_verified: true });
    provider.nextLogin = 'sso-user';
    await page.getByLabel(/^Company sign-in name/).fill('demo-co');
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(await page.getByText('jo@sso.example.com (member)').count()).toBe(1);
    expect(new URL(page.url()).origin).toBe(h.base);
  });

  it("shows an admin the team but not the owner's billing, single sign-on or quote acceptance", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signIn('admin@demo.example.com');
    const nav = page.getByRole('navigation');
    await nav.getByRole('link', { name: 'Team' }).waitFor();
    for (const hidden of ['Billing', 'Single sign-on'])
      expect(await nav.getByRole('link', { name: hidden }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Create project' }).count()).toBe(1);
    await page.getByRole('link', { name: /^Demo/ }).click();
    await page.getByRole('tab', { name: 'Quote' }).click();
    await page.getByTestId('quote').waitFor();
    expect(await page.getByText('Only the account owner can accept the quote.').count()).toBe(1);
    await checkPage('17-admin-quote');
  });

  it('shows a member no button the API would refuse', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signIn('member@demo.example.com');
    await page.getByRole('link', { name: /^Demo/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete / }).count()).toBe(0);
    const nav = page.getByRole('navigation');
    for (const hidden of ['Team', 'Billing', 'Single sign-on'])
      expect(await nav.getByRole('link', { name: hidden }).count()).toBe(0);
    await checkPage('18-member-projects');
    await page.getByRole('link', { name: /^Demo/ }).click();
    await page.getByRole('tab', { name: 'Quote' }).click();
    await page.getByTestId('quote').waitFor();
    expect(await page.getByRole('button', { name: /^Accept and pay/ }).count()).toBe(0);
    // A run's page: no rollback (owners and admins only)
    if (journeyRun) {
      await page.goto(`${h.base}/runs/${journeyRun.runId}`);
      await page.getByRole('heading', { name: /^Run / }).waitFor();
      await page.getByText('ROLLED_BACK', { exact: true }).waitFor();
      expect(await page.getByRole('region', { name: 'Rollback' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /^Roll back/ }).count()).toBe(0);
    }
    expect(h.cspErrors).toEqual([]);
  });
});
