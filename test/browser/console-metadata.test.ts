/**
 * The console's pages fed by the API's newer answers, in Debian's Chromium against `npm start` itself: the
 * mappings pickers offer what the sandbox Jira project has (its issue types, its statuses) and a picked value
 * saves; the projects list shows the last run; an invitation accepted from the mail in the offline outbox signs
 * the new member in (and the spent link says so); the Delivery tab says what each way of writing into Jira keeps
 * and costs, saves the owner's choice and shows a member the choice read only. Screenshots under
 * test-artifacts/console-metadata/ and console-delivery/, axe-core with zero serious or critical violations on
 * each new view. One service and one browser for the file (a service and a browser cost a file about 25 CPU-s).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
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
  WAIT,
} from '../support/console-browser.ts';
import { http } from '../support/http.ts';

if (!browserAvailable && !browserRequired)
  console.warn(`console-metadata browser test: no Chromium at ${CHROMIUM}: skipped`);

const sandbox = sandboxConfigFromEnv({});
let h: ConsoleHarness;
let page: Page;
let base: string;
let jiraUrl: string;
let ownerToken: string;
let projectId: string;

const checkPage = (name: string) => expectCleanPage(page, 'console-metadata', name);

/** A SAMPLE run of the demo project over the API, with the sandboxes' credentials, files and comments off. */
const startSample = async (options: Record<string, unknown>) =>
  (await api('POST', `/api/migrations/project/${projectId}/start`, {
    type: 'SAMPLE',
    enginePayload: {
      source: { org: sandbox.ado.org, project: sandbox.ado.project, pat: sandbox.ado.pat },
      target: {
        base_url: jiraUrl,
        email: sandbox.jira.email,
        api_token: sandbox.jira.apiToken,
        project_key: sandbox.jira.projectKey,
      },
      options: { migrate_attachments: false, migrate_comments: false, ...options },
    },
  })) as { id: string };
const signIn = (email: string) => signInThroughForm(page, base, email, h.password);

/** Calls the API as the owner; a refusal fails the test with the API's answer. */
async function api(method: string, path: string, body?: unknown) {
  const res = await http(base, method, path, { token: ownerToken, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The texts of the open picker's options. */
async function openOptions(): Promise<string[]> {
  const options = page.getByRole('listbox').getByRole('option');
  await options.first().waitFor();
  return options.allTextContents();
}

describe.skipIf(!browserAvailable && !browserRequired)('the console on the target metadata', () => {
  beforeAll(async () => {
    h = await startConsole(20);
    ({ page, base, jiraUrl } = h);
    ownerToken = await accessTokenOf(h, 'owner@demo.example.com');
    // The demo project, connected and scanned through the API: the pages under test come after that.
    projectId = ((await api('GET', '/api/projects')) as { id: string; name: string }[]).find((p) =>
      p.name.startsWith('Demo'),
    )?.id as string;
    for (const type of ['azure_devops', 'jira'])
      expect(
        ((await api('POST', '/api/connectors/test', { type, projectId })) as { success: boolean }).success,
      ).toBe(true);
    await api('POST', '/api/connectors/scan', { type: 'azure_devops', projectId });
  }, 180_000);
  screenshotOnFailure('console-metadata', () => page);
  afterAll(async () => {
    await h?.close();
  });

  it("offers the Jira project's issue types and statuses in the mapping pickers, and saves a picked one", async () => {
    const jira = (path: string) =>
      http(jiraUrl, 'GET', path, {
        headers: {
          Authorization: `Basic ${Buffer.from(`${sandbox.jira.email}:${sandbox.jira.apiToken}`).toString('base64')}`,
        },
      });
    const issueTypes = (
      (await jira(`/rest/api/3/project/${sandbox.jira.projectKey}`)).body.issueTypes as {
        name: string;
        subtask: boolean;
      }[]
    ).map((t) => (t.subtask ? `${t.name} (sub-task)` : t.name));
    const statuses = new Set(
      (
        (await jira(`/rest/api/3/project/${sandbox.jira.projectKey}/statuses`)).body as {
          statuses: { name: string }[];
        }[]
      ).flatMap((t) => t.statuses.map((s) => s.name)),
    );

    await signIn('owner@demo.example.com');
    await page.getByRole('link', { name: /^Demo/ }).click();
    await page.getByRole('tab', { name: 'Mappings' }).click();
    const types = page.getByRole('table', { name: 'Work item types' });
    const firstType = types.getByRole('combobox').first();
    await firstType.waitFor();
    const row = (await types.getByRole('row').nth(1).getByRole('cell').first().textContent()) as string;
    const suggested = await firstType.inputValue();

    // The row holds one of Jira's choices: the picker offers every issue type of the project, as Jira lists them.
    await firstType.click();
    expect(await openOptions()).toEqual(issueTypes);
    await checkPage('01-type-picker');
    const picked = issueTypes.find((t) => t !== suggested && !t.endsWith('(sub-task)')) as string;
    await page.getByRole('option', { name: picked, exact: true }).click();
    expect(await firstType.inputValue()).toBe(picked);
    await page.keyboard.press('Escape');

    // The states picker offers the statuses of the project's workflows, each naming the issue types that have it.
    const firstState = page.getByRole('table', { name: 'States' }).getByRole('combobox').first();
    await firstState.click();
    const stateOptions = await openOptions();
    expect(new Set(stateOptions.map((o) => o.split(':')[0]))).toEqual(statuses);
    expect(stateOptions.every((o) => /: \S/.test(o))).toBe(true);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Save mappings' }).click();
    await expect.poll(() => page.getByText('saved', { exact: true }).count(), WAIT).toBeGreaterThan(0);
    const saved = (await api('GET', `/api/projects/${projectId}/mappings`)) as {
      source: string;
      types: Record<string, string>;
    };
    expect(saved.source).toBe('saved');
    expect(saved.types[row]).toBe(picked);
    await checkPage('02-mappings-saved');
  });

  it('shows the last run of each project in the projects list', async () => {
    await page.getByRole('button', { name: 'Confirm mappings' }).click();
    await expect.poll(() => page.getByText('MAPPED', { exact: true }).count(), WAIT).toBeGreaterThan(0);
    const run = await startSample({ dry_run: true });
    await expect
      .poll(
        async () => ((await api('GET', `/api/migrations/${run.id}/status`)) as { status: string }).status,
        {
          timeout: 60_000,
          interval: 250,
        },
      )
      .toBe('COMPLETED');

    await page.getByRole('link', { name: 'Projects' }).first().click();
    const lastRun = page.getByRole('row', { name: /^Demo/ }).getByTestId('last-run');
    await expect.poll(() => lastRun.textContent(), WAIT).toMatch(/^COMPLETEDSAMPLE, ended /);
    expect(await lastRun.getAttribute('href')).toBe(`/runs/${run.id}`);
    await checkPage('03-projects-last-run');
  });

  it('accepts an invitation from the mail in the outbox: the new member is signed in, the spent link says so', async () => {
    const email = 'new.member@demo.example.com';
    await api('POST', '/api/team/members', { email, role: 'member' });
    const outbox = join(h.dataDir, 'outbox');
    const mail = readdirSync(outbox)
      .map((f) => JSON.parse(readFileSync(join(outbox, f), 'utf8')) as { to: string; text: string })
      .find((m) => m.to === email);
    const link = /(http\S+\/invitations\/accept#token=\S+)/.exec(mail?.text ?? '')?.[1] as string;
    expect(link).toBeDefined();
    const token = decodeURIComponent(new URL(link).hash.replace('#token=', ''));

    // The token stays in the fragment: no request's address or Referer carries it (Chromium's protocol does not
    // show a fetch body built as a stream, so the accept call is checked by its answer instead).
    const carriers: string[] = [];
    page.on('request', (r) => {
      const referer = r.headers().referer ?? '';
      if (r.url().includes(token) || referer.includes(token)) carriers.push(`${r.method()} ${r.url()}`);
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    await checkPage('04-accept-invitation');
    await page.getByLabel(/^New password/).fill('a-new-password-1');
    await page.getByLabel(/^Repeat the password/).fill('a-new-password-1');
    const accepted = page.waitForResponse((r) => r.url() === `${base}/api/invitations/accept`);
    await page.getByRole('button', { name: 'Accept and sign in' }).click();
    expect((await accepted).status()).toBe(200);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(await page.getByText(`${email} (member)`).count()).toBe(1);
    expect(new URL(page.url()).hash).toBe('');
    expect(carriers).toEqual([]);

    // The link works once.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.goto(link);
    await page.getByLabel(/^New password/).fill('another-password');
    await page.getByLabel(/^Repeat the password/).fill('another-password');
    await page.getByRole('button', { name: 'Accept and sign in' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent(), WAIT)
      .toContain('This invitation link is invalid, expired or was already used');
    expect(await page.getByRole('link', { name: 'Sign in' }).count()).toBe(1);
    await checkPage('05-invitation-spent');
  });

  // The Delivery tab (last: it leaves the demo project set to Jira's importer, whose runs wait for an admin's imports): the two
  // ways a run writes into Jira, each with what it keeps and costs, chosen and saved by the owner (the API answers
  // the choice), read only for a member.
  const deliveryOf = async () =>
    (await http(h.base, 'GET', `/api/projects/${projectId}`, { token: ownerToken })).body;

  it("says what each way keeps and costs, and saves Jira's importer with a batch size", async () => {
    // A browser context of its own: nobody signed in, whatever the tests before left.
    page = await (
      await h.browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' })
    ).newPage();
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
    expect(await deliveryOf()).toMatchObject({ deliveryMode: 'jira-import', importBatchSize: 200 });
    await page.getByText('Each file waits for a Jira administrator').waitFor();
    await expectCleanPage(page, 'console-delivery', 'jira-import');
  });

  it("shows a Jira-import run's files on its page: each batch to download, the site's import page, the steps", async () => {
    const run = await startSample({});
    await expect
      .poll(
        async () => ((await api('GET', `/api/migrations/${run.id}/status`)) as { status: string }).status,
        {
          timeout: 90_000,
          interval: 250,
        },
      )
      .toBe('PAUSED');
    const index = (await api('GET', `/api/migrations/${run.id}/import-files`)) as {
      files: { number: number; issues: number }[];
    };
    expect(index.files.length).toBeGreaterThan(0);

    await page.goto(`${base}/runs/${run.id}`);
    const section = page.getByTestId('import-files');
    await section.getByRole('table', { name: 'Import files' }).waitFor({ timeout: 30_000 });
    // The pause's reason, shown by the page (and the same line in its log).
    await page
      .getByText(/Waiting for the Jira import of batch 1 of/)
      .first()
      .waitFor();
    expect(await section.getByRole('link', { name: "the site's import page" }).getAttribute('href')).toBe(
      `${jiraUrl}/secure/admin/ExternalImport1.jspa`,
    );
    expect(await section.getByRole('listitem').count()).toBe(3);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      section.getByRole('button', { name: 'Download batch 1' }).click(),
    ]);
    const file = join(ARTIFACTS_DIR, 'console-delivery', 'import-batch-1.json');
    await download.saveAs(file);
    const imported = JSON.parse(readFileSync(file, 'utf8')) as { projects: { issues: unknown[] }[] };
    expect(imported.projects[0]?.issues).toHaveLength(index.files[0]?.issues ?? -1);
    await expectCleanPage(page, 'console-delivery', 'import-files');
    await api('POST', `/api/migrations/${run.id}/cancel`);
    // A cancelled run's file is served no more: the page says why, in words and with the API's code.
    await section.getByRole('button', { name: 'Download batch 1' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'Download failed (IMPORT_RUN_ENDED)' });
    await refused.waitFor();
    const said = await refused.textContent();
    expect(said).toContain(`Run ${run.id} ended (CANCELLED) before batch 1 was imported`);
    expect(said).not.toContain('"statusCode"');
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
