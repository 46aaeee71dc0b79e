/**
 * DRAFT -> READY from the CLI (its program in this process with the environment and output each command is
 * given, test/support/cli.ts) against the real local gateway and the sandbox trackers: `tms connect`, `tms scan`,
 * `tms mappings --confirm`, `tms quote --accept`; the API's refusals (400 per bad mapping, 409 with the next
 * step, 403 for a non-owner accept) printed with exit 3.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type PaymentProvider, setPaymentProvider } from '../../functions/services/payments/index.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';
import { type CliResult, runTms } from '../support/cli.ts';
import { sandboxCredentials } from '../support/sandbox-fixtures.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
/** One $TMS_HOME per login: the owner's and the admin's. */
const homes = { owner: '', admin: '' };
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '30', SANDBOX_SEED: '11' });
const KEY = config.jira.projectKey;

type As = keyof typeof homes;
const tms = (as: As, args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
  runTms(args, { api: `${app.url}/api`, home: homes[as], env });

async function newProject(name = 'CLI lifecycle'): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: t.owner.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

const projectStatus = async (projectId: string): Promise<string> =>
  (await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token })).body.status;

/** Connected and scanned through the API, for the tests about the later steps. */
async function scannedProject(): Promise<string> {
  const projectId = await newProject();
  const creds = sandboxCredentials(sb, config);
  for (const kind of ['source', 'target'] as const) {
    const res = await app.call('POST', '/api/connectors/test', {
      token: t.owner.token,
      body: { type: kind === 'source' ? 'azure_devops' : 'jira', projectId, credentials: creds[kind] },
    });
    expect(res.body.success).toBe(true);
  }
  const scan = await app.call('POST', '/api/connectors/scan', {
    token: t.owner.token,
    body: { type: 'azure_devops', projectId },
  });
  expect(scan.body.status).toBe('COMPLETED');
  return projectId;
}

beforeAll(async () => {
  homes.owner = await mkdtemp(join(tmpdir(), 'tms-cli-owner-'));
  homes.admin = await mkdtemp(join(tmpdir(), 'tms-cli-admin-'));
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url });
  t = await app.createTenant('CliLifecycle');
  // The offline provider (paid at once), whatever the environment says.
  setPaymentProvider(undefined);
  const logins = await Promise.all(
    (['owner', 'admin'] as const).map((as) =>
      tms(as, ['login', '--email', t[as].email], { TMS_PASSWORD: TEST_PASSWORD }),
    ),
  );
  expect(logins.map((r) => r.code)).toEqual([0, 0]);
}, 60_000);
afterAll(async () => {
  await app?.close();
  await sb?.stop();
  for (const home of Object.values(homes)) if (home) await rm(home, { recursive: true, force: true });
});
afterEach(() => {
  setPaymentProvider(undefined);
});

describe('DRAFT -> READY from the CLI', () => {
  it('connect, scan, mappings --confirm (MAPPED), quote, quote --accept by the owner (READY)', async () => {
    const projectId = await newProject();
    const connected = await tms(
      'owner',
      [
        'connect',
        projectId,
        ...['--ado-org', config.ado.org, '--ado-project', config.ado.project],
        ...['--jira-url', sb.jira.url, '--jira-email', config.jira.email, '--jira-key', KEY],
      ],
      { TMS_ADO_PAT: config.ado.pat, TMS_JIRA_TOKEN: config.jira.apiToken },
    );
    expect(connected.code).toBe(0);
    expect((await tms('owner', ['scan', projectId])).code).toBe(0);
    expect(await projectStatus(projectId)).toBe('SCANNED');

    // The suggestion, as a table per kind.
    const api = (await app.call('GET', `/api/projects/${projectId}/mappings`, { token: t.owner.token })).body;
    const shown = await tms('owner', ['mappings', projectId]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toBe(`Mappings of project ${projectId}: suggested`);
    for (const label of ['Types:', 'States:', 'Fields:', 'Users:', 'Link types:'])
      expect(lines).toContain(label);
    const [type, issueType] = Object.entries(api.types as Record<string, string>)[0] ?? [];
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^  ${type} +-> ${issueType}$`)));

    const confirmed = await tms('owner', ['mappings', projectId, '--confirm']);
    expect(confirmed.stderr).toBe('');
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toBe(
      `Saved the mappings of project ${projectId}\nConfirmed: project ${projectId} is MAPPED\n`,
    );
    expect(await projectStatus(projectId)).toBe('MAPPED');
    const saved = (await app.call('GET', `/api/projects/${projectId}/mappings`, { token: t.owner.token }))
      .body;
    expect(saved).toMatchObject({ source: 'confirmed', types: api.types, users: api.users });

    // Everyone sees the price, the API's own.
    const quote = (await app.call('GET', `/api/projects/${projectId}/quote`, { token: t.owner.token })).body;
    const seen = await tms('admin', ['quote', projectId]);
    expect(seen.code).toBe(0);
    expect(seen.stdout).toContain(`Quote ${quote.id} for project ${projectId}: OPEN`);
    expect(seen.stdout).toMatch(
      new RegExp(`Final price +${quote.finalPriceGbp.toFixed(2)} ${quote.currency}\\n`),
    );
    expect(seen.stdout).toMatch(new RegExp(`Work items +${quote.totalItems}\\n`));
    const json = await tms('admin', ['quote', projectId, '--json']);
    expect(JSON.parse(json.stdout)).toEqual(quote);

    // Only the owner commits the money.
    const refused = await tms('admin', ['quote', projectId, '--accept']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toBe('error: FORBIDDEN (HTTP 403)\n  Your role does not allow this action\n');
    expect(await projectStatus(projectId)).toBe('MAPPED');

    const paid = await tms('owner', ['quote', projectId, '--accept']);
    expect(paid.stderr).toBe('');
    expect(paid.code).toBe(0);
    expect(paid.stdout.trimEnd().split('\n').at(-1)).toBe('Paid: project is READY');
    expect(await projectStatus(projectId)).toBe('READY');
    // Accepting again answers the paid quote.
    const again = await tms('owner', ['quote', projectId, '--accept', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      quote: { id: quote.id, status: 'PAID' },
      projectStatus: 'READY',
    });
  });
});

describe('tms mappings', () => {
  it('--set to a Jira type the project lacks: each API message printed, exit 3, nothing saved', async () => {
    const projectId = await scannedProject();
    const res = await tms('owner', [
      'mappings',
      projectId,
      '--set',
      'types.Bug=Defect',
      '--set',
      'types.Epic=Saga',
      '--confirm',
    ]);
    expect(res.code).toBe(3);
    expect(res.stderr).toBe(
      'error: VALIDATION_FAILED (HTTP 400)\n' +
        `  types.Bug: Jira project ${KEY} has no issue type "Defect"\n` +
        `  types.Epic: Jira project ${KEY} has no issue type "Saga"\n`,
    );
    expect(res.stdout).toBe('');
    expect(await projectStatus(projectId)).toBe('SCANNED');
    const after = await app.call('GET', `/api/projects/${projectId}/mappings`, { token: t.owner.token });
    expect(after.body.source).toBe('suggested');
  });

  it('--set saves the edits (users.x=none: no account); --json prints the record', async () => {
    const projectId = await scannedProject();
    const suggested = (await app.call('GET', `/api/projects/${projectId}/mappings`, { token: t.owner.token }))
      .body;
    const email = Object.keys(suggested.users)[0];
    expect(email).toBeDefined();
    const res = await tms('owner', ['mappings', projectId, '--set', `users.${email}=none`, '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const record = JSON.parse(res.stdout);
    expect(record).toMatchObject({ projectId, source: 'saved', users: { [email as string]: null } });
    expect(await projectStatus(projectId)).toBe('SCANNED');
    const shown = await tms('owner', ['mappings', projectId]);
    expect(shown.stdout).toMatch(
      new RegExp(`\\n  ${email?.replace(/[.+]/g, '\\$&')} +-> \\(no account\\)\\n`),
    );

    // Saved already: --confirm confirms it as it is.
    const confirmed = await tms('owner', ['mappings', projectId, '--confirm', '--json']);
    expect(confirmed.code).toBe(0);
    expect(JSON.parse(confirmed.stdout)).toMatchObject({
      source: 'confirmed',
      projectStatus: 'MAPPED',
      users: { [email as string]: null },
    });
  });

  it('a malformed --set is a usage error (exit 2); before a scan the API says to scan (exit 3)', async () => {
    const projectId = await newProject();
    const bad = await tms('owner', ['mappings', projectId, '--set', 'colours.Bug=Red']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --set expects KIND\.SOURCE=TARGET .*"colours\.Bug=Red"\n$/);
    const early = await tms('owner', ['mappings', projectId]);
    expect(early.code).toBe(3);
    expect(early.stderr).toBe('error: SCAN_REQUIRED (HTTP 409)\n  Scan the source before mapping\n');
  });
});

describe('tms quote', () => {
  it('before a scan: QUOTE_NOT_AVAILABLE; before the mappings are confirmed: the next step (exit 3)', async () => {
    const draft = await newProject();
    const none = await tms('owner', ['quote', draft]);
    expect(none.code).toBe(3);
    expect(none.stderr.split('\n')[0]).toBe('error: QUOTE_NOT_AVAILABLE (HTTP 409)');
    expect(none.stderr).toContain(`Project ${draft} has no quote yet: scan the source first`);

    const scanned = await scannedProject();
    const early = await tms('owner', ['quote', scanned, '--accept']);
    expect(early.code).toBe(3);
    const [head, message] = early.stderr.split('\n');
    expect(head).toBe('error: PROJECT_NOT_READY (HTTP 409)');
    expect(message).toContain('confirm the mappings');
    expect(await projectStatus(scanned)).toBe('SCANNED');
  });

  it('a payment left at the checkout: prints the URL to pay at', async () => {
    const projectId = await scannedProject();
    expect((await tms('owner', ['mappings', projectId, '--confirm'])).code).toBe(0);
    const checkoutUrl = 'https://checkout.example.com/c/pay/cs_test_cli';
    const pending: PaymentProvider = {
      name: 'stripe',
      startPayment: async () => ({ paymentId: 'cs_test_cli', checkoutUrl, status: 'PENDING' }),
      parseWebhook: () => null,
    };
    setPaymentProvider(pending);
    const res = await tms('owner', ['quote', projectId, '--accept']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(`^Payment pending: open ${checkoutUrl} to pay [0-9.]+ GBP; the project becomes READY`),
    );
    expect(await projectStatus(projectId)).toBe('MAPPED');
    const shown = await tms('owner', ['quote', projectId]);
    expect(shown.stdout).toContain(`: PENDING_PAYMENT\n`);
    expect(shown.stdout).toContain(`Checkout: ${checkoutUrl}\n`);
  });
});
