/**
 * The console's Delivery tab, in Debian's Chromium against `npm start` itself: the two ways a run writes into
 * Jira, each with what it keeps and costs, chosen and saved by the owner (the API answers the choice), read
 * only for a member. Screenshots under test-artifacts/console-delivery/, axe-core on each view.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, browserRequired, CHROMIUM, signInThroughForm } from '../support/browser.ts';
import {
  accessTokenOf,
  expectCleanPage,
  screenshotOnFailure,
  startConsole,
} from '../support/console-browser.ts';
import { http } from '../support/http.ts';

let h: Awaited<ReturnType<typeof startConsole>>;
let page: Page;
let ownerToken: string;
let projectId: string;

const project = async () =>
  (await http(h.base, 'GET', `/api/projects/${projectId}`, { token: ownerToken })).body;

if (!browserAvailable && !browserRequired)
  console.warn(`console-delivery browser test: no Chromium at ${CHROMIUM}: skipped`);

describe.skipIf(!browserAvailable && !browserRequired)("the console's delivery choice", () => {
  beforeAll(async () => {
    h = await startConsole(5);
    page = h.page;
    ownerToken = await accessTokenOf(h, 'owner@demo.example.com');
    const projects = await http(h.base, 'GET', '/api/projects', { token: ownerToken });
    projectId = projects.body.find((p: { name: string }) => p.name.startsWith('Demo')).id;
  }, 180_000);
  screenshotOnFailure('console-delivery', () => page);
  afterAll(async () => {
    await h?.close();
  });

  it("says what each way keeps and costs, and saves Jira's importer with a batch size", async () => {
    await signInThroughForm(page, h.base, 'owner@demo.example.com', h.password);
    await page.goto(`${h.base}/projects/${projectId}?tab=delivery`);
    const section = page.getByTestId('delivery');
    await section.waitFor();
    expect(await page.getByRole('radio', { name: "Jira's REST API (default)" }).isChecked()).toBe(true);
    const text = await section.textContent();
    expect(text).toContain('the original authors and dates are kept as text');
    expect(text).toContain('The original authors, created and resolved dates, comments and change history');
    expect(text).toContain("About 1,500 issues an hour per file on Atlassian's side");
    expect(text).toContain('a Jira administrator must upload each file');
    await expectCleanPage(page, 'console-delivery', 'rest');

    await page.getByRole('radio', { name: "Jira's JSON importer" }).check();
    await page.getByLabel('Issues per import file').fill('200');
    const [saved] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/delivery') && r.request().method() === 'PUT'),
      page.getByRole('button', { name: 'Save delivery' }).click(),
    ]);
    expect(saved.status()).toBe(200);
    expect(await project()).toMatchObject({ deliveryMode: 'jira-import', importBatchSize: 200 });
    await page.getByText('Runs cannot use the importer yet').waitFor();
    await expectCleanPage(page, 'console-delivery', 'jira-import');
  });

  it('shows a member the choice without a way to change it', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signInThroughForm(page, h.base, 'member@demo.example.com', h.password);
    await page.goto(`${h.base}/projects/${projectId}?tab=delivery`);
    await page.getByTestId('delivery').waitFor();
    expect(await page.getByRole('radio', { name: "Jira's JSON importer" }).isChecked()).toBe(true);
    expect(await page.getByRole('radio', { name: "Jira's JSON importer" }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save delivery' }).count()).toBe(0);
    await page.getByText('Only an owner or admin can change how runs write into Jira.').waitFor();
  });
});
