/**
 * Connectors through HTTP against the sandbox trackers: every failure message of the spec, scans equal to the
 * generator's ground truth, a 12,000-item scan that runs asynchronously, faults survived, a stored connection
 * kept through failed re-tests and failed other credentials, and no credential in any answer, stored item or
 * log line.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { REFUSED_MESSAGE } from '../../functions/outbound/rules.ts';
import { allowLoopbackPorts, allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { freePort } from '../support/global-setup.ts';
import { sandboxControl, sandboxCredentials } from '../support/sandbox-fixtures.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '300', SANDBOX_SEED: '42' });
const captured: string[] = [];

const source = () => sandboxCredentials(sb, config).source;
const target = () => sandboxCredentials(sb, config).target;

async function truth(): Promise<Record<string, unknown> & { totalWorkItems: number }> {
  return (await fetch(`${sb.ado.url}/_sandbox/ado/truth`)).json() as Promise<
    Record<string, unknown> & { totalWorkItems: number }
  >;
}

const control = sandboxControl;

beforeAll(async () => {
  for (const m of ['log', 'info', 'debug', 'warn', 'error'] as const) {
    const original = console[m].bind(console);
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      captured.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
      original(...args);
    });
  }
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({ ADO_BASE_URL: sb.ado.url, POWERTOOLS_LOG_LEVEL: 'DEBUG' });
  t = await app.createTenant('Connectors');
});
afterAll(async () => {
  await app.close();
  await sb.stop();
});

const test = (body: unknown, token = t.member.token) =>
  app.call('POST', '/api/connectors/test', { token, body });

describe('POST /api/connectors/test: the source', () => {
  it('connects and reports the organisation, project and item count', async () => {
    const res = await test({ type: 'azure_devops', credentials: source() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: expect.stringContaining('Connected to Azure DevOps project Contoso'),
      metadata: {
        organisation: config.ado.org,
        project: config.ado.project,
        itemCount: (await truth()).totalWorkItems,
      },
    });
  });

  it('resolves an organisation name against ADO_BASE_URL', async () => {
    const res = await test({
      type: 'azure_devops',
      credentials: { ...source(), organization_url: config.ado.org },
    });
    expect(res.body.success).toBe(true);
  });

  it('says "source connection failed with 401" for a wrong PAT', async () => {
    const res = await test({
      type: 'azure_devops',
      credentials: { ...source(), personal_access_token: 'wrong' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: false, message: 'source connection failed with 401' });
  });

  it('says "source project not found" for a misspelt project or organisation', async () => {
    expect(
      (await test({ type: 'azure_devops', credentials: { ...source(), project: 'Contosso' } })).body,
    ).toEqual({
      success: false,
      message: 'source project not found',
    });
    expect(
      (
        await test({
          type: 'azure_devops',
          credentials: { ...source(), organization_url: `${sb.ado.url}/no-such-org` },
        })
      ).body.message,
    ).toBe('source project not found');
  });

  it('says the source is unreachable in one sentence, the socket error only in the log', async () => {
    // A loopback port registered as the sandboxes' are, where nothing listens: the connection is refused.
    const port = await freePort();
    allowLoopbackPorts(port);
    const res = await test({
      type: 'azure_devops',
      credentials: { ...source(), organization_url: `http://127.0.0.1:${port}/org` },
    });
    expect(res.body).toEqual({
      success: false,
      message:
        'source tracker unreachable: the service could not connect to it (it connects only to the public https addresses of supported trackers and of hosts your operator allows)',
    });
    expect(
      captured.some((line) => line.includes('tracker unreachable') && line.includes('ECONNREFUSED')),
    ).toBe(true);
  });

  it("refuses a loopback port nobody registered (DynamoDB Local's) before connecting, like any URL it may not reach", async () => {
    const res = await test({
      type: 'azure_devops',
      credentials: { ...source(), organization_url: `${inject('dynamodbEndpoint')}/org` },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual([`credentials.organization_url: ${REFUSED_MESSAGE}`]);
  });
});

describe('POST /api/connectors/test: the target', () => {
  it('connects and reports the site, project and issue count', async () => {
    const res = await test({ type: 'jira', credentials: target() });
    expect(res.body).toEqual({
      success: true,
      message: expect.stringContaining(`Connected to Jira project ${config.jira.projectKey}`),
      metadata: {
        organisation: new URL(sb.jira.url).host,
        project: expect.any(String),
        itemCount: expect.any(Number),
      },
    });
  });

  it('says "target connection failed with 401" for a wrong token', async () => {
    expect((await test({ type: 'jira', credentials: { ...target(), api_token: 'nope' } })).body).toEqual({
      success: false,
      message: 'target connection failed with 401',
    });
  });

  it('says "target connection failed with 403" for an account without the project administrator role', async () => {
    await control(sb.jira.url, 'PUT', '/_sandbox/jira/accounts', {
      email: 'viewer@sandbox.example.com',
      apiToken: 'viewer-token',
      projectAdmin: false,
    });
    const res = await test({
      type: 'jira',
      credentials: { ...target(), email: 'viewer@sandbox.example.com', api_token: 'viewer-token' },
    });
    expect(res.body).toEqual({ success: false, message: 'target connection failed with 403' });
  });

  it('says "target project key not found" for a wrong key', async () => {
    expect((await test({ type: 'jira', credentials: { ...target(), project_key: 'NOPE' } })).body).toEqual({
      success: false,
      message: 'target project key not found',
    });
  });
});

describe('connector request validation', () => {
  it('lists every problem of a malformed body', async () => {
    const res = await test({
      type: 'jira',
      credentials: { base_url: 'ftp://x', email: 'nope', project_key: 'has space' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', error: 'Bad Request' });
    expect(res.body.message).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^credentials.base_url /),
        'credentials.email must be a valid e-mail address',
        'credentials.api_token is required',
        expect.stringMatching(/^credentials.project_key /),
      ]),
    );
    const unknownType = await test({ type: 'github', credentials: {} });
    expect(unknownType.status).toBe(400);
    expect((await test({ type: 'azure_devops' })).body.message).toEqual(['credentials is required']);
  });
});

describe('a project connected through the connectors', () => {
  it('stores sealed credentials, shows only summaries, and moves DRAFT -> CONNECTED', async () => {
    const project = (
      await app.call('POST', '/api/projects', {
        token: t.admin.token,
        body: { name: 'Connected', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
      })
    ).body;
    expect(
      (await test({ type: 'azure_devops', credentials: source(), projectId: project.id })).body.success,
    ).toBe(true);
    const half = await app.call('GET', `/api/projects/${project.id}`, { token: t.member.token });
    expect(half.body.status).toBe('DRAFT');
    expect(half.body.connections.source).toMatchObject({
      ok: true,
      organisation: config.ado.org,
      project: config.ado.project,
    });
    expect(half.body.connections.target).toBeNull();

    expect((await test({ type: 'jira', credentials: target(), projectId: project.id })).body.success).toBe(
      true,
    );
    const detail = await app.call('GET', `/api/projects/${project.id}`, { token: t.member.token });
    expect(detail.body.status).toBe('CONNECTED');
    expect(detail.body.connections.target).toMatchObject({
      ok: true,
      projectKey: config.jira.projectKey,
      email: config.jira.email,
    });
    expect(detail.text).not.toContain(config.ado.pat);
    expect(detail.text).not.toContain(config.jira.apiToken);

    // Stored: sealed, never in plain text.
    const all = await app.db.send(new ScanCommand({ TableName: app.tableName }));
    const dump = JSON.stringify(all.Items);
    expect(dump).toContain('A256GCM');
    expect(dump).not.toContain(config.ado.pat);
    expect(dump).not.toContain(config.jira.apiToken);

    // The stored credentials can be tested again without sending them.
    expect((await test({ type: 'jira', projectId: project.id })).body.success).toBe(true);
  });

  it("answers 404 for another tenant's project", async () => {
    const other = await app.createTenant('Other');
    const project = (
      await app.call('POST', '/api/projects', {
        token: other.owner.token,
        body: { name: 'Theirs', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
      })
    ).body;
    const res = await test({ type: 'jira', credentials: target(), projectId: project.id });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('PROJECT_NOT_FOUND');
  });
});

describe('a re-test of a stored connection while its tracker fails', () => {
  const faults = (url: string, body: Record<string, number>) => control(url, 'PUT', '/_sandbox/faults', body);
  /** The sandbox's service account with this API token: any other token it answers 401. */
  const jiraToken = (apiToken: string) =>
    control(sb.jira.url, 'PUT', '/_sandbox/jira/accounts', {
      email: config.jira.email,
      apiToken,
      projectAdmin: true,
    });
  /** The trackers as the other tests expect them: no faults, the service account's own token. */
  const trackersBack = async () => {
    await faults(sb.ado.url, { errorRate: 0, dropRate: 0 });
    await faults(sb.jira.url, { errorRate: 0, dropRate: 0 });
    await jiraToken(config.jira.apiToken);
  };

  /** A project whose source and target the owner connected with the sandboxes' tokens: CONNECTED. */
  async function ownersConnectedProject(name: string) {
    const project = (
      await app.call('POST', '/api/projects', {
        token: t.admin.token,
        body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
      })
    ).body;
    for (const [type, credentials] of [
      ['azure_devops', source()],
      ['jira', target()],
    ] as const)
      expect((await test({ type, credentials, projectId: project.id }, t.owner.token)).body.success).toBe(
        true,
      );
    return project.id as string;
  }
  const detail = async (projectId: string) =>
    (await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token })).body;
  /** What the project holds of each connection: its sealed credentials, their maker and method. */
  const holding = async (projectId: string) =>
    Promise.all(
      (['source', 'target'] as const).map(async (kind) => {
        const c = await app.store.connections.get(t.tenantId, projectId, kind);
        return { kind, sealed: c?.sealed, connectedBy: c?.connectedBy, method: c?.method };
      }),
    );

  it('keeps the stored tokens whoever re-tests: the failure is shown, the status stays, the next good test connects', async () => {
    const projectId = await ownersConnectedProject('Re-tested while down');
    const before = await holding(projectId);
    const owner = { userId: t.owner.id, role: 'owner' };
    expect(before).toEqual([
      { kind: 'source', sealed: expect.any(Object), connectedBy: owner, method: 'token' },
      { kind: 'target', sealed: expect.any(Object), connectedBy: owner, method: 'token' },
    ]);

    try {
      // Jira answers 503 to everything: a member re-tests the owner's target.
      await faults(sb.jira.url, { errorRate: 1 });
      expect((await test({ type: 'jira', projectId }, t.member.token)).body).toEqual({
        success: false,
        message: 'target connection failed with 503',
      });
      expect(await holding(projectId)).toEqual(before);
      // Azure DevOps drops every connection: the owner re-tests the source.
      await faults(sb.ado.url, { dropRate: 1 });
      const unreachable = (await test({ type: 'azure_devops', projectId }, t.owner.token)).body;
      expect(unreachable).toEqual({
        success: false,
        message: expect.stringMatching(/^source tracker unreachable\b/),
      });
      expect(await holding(projectId)).toEqual(before);
      await faults(sb.ado.url, { dropRate: 0 });
      await faults(sb.jira.url, { errorRate: 0 });

      // The token was revoked at Jira (401): a member's re-test, then an owner's re-sending the same token.
      await jiraToken('rotated-at-jira');
      expect((await test({ type: 'jira', projectId }, t.member.token)).body).toEqual({
        success: false,
        message: 'target connection failed with 401',
      });
      expect((await test({ type: 'jira', projectId, credentials: target() }, t.owner.token)).body).toEqual({
        success: false,
        message: 'target connection failed with 401',
      });
      expect(await holding(projectId)).toEqual(before);

      // The project shows what the last tests said, and stays CONNECTED (statuses only move forward).
      const down = await detail(projectId);
      expect(down.status).toBe('CONNECTED');
      expect(down.connections).toEqual({
        source: {
          ok: false,
          message: unreachable.message,
          testedAt: expect.any(String),
          method: 'token',
          reconnectRequired: false,
          organizationUrl: source().organization_url,
          projectName: config.ado.project,
        },
        target: {
          ok: false,
          message: 'target connection failed with 401',
          testedAt: expect.any(String),
          method: 'token',
          reconnectRequired: false,
          baseUrl: sb.jira.url,
          email: config.jira.email,
          projectKey: config.jira.projectKey,
        },
      });
    } finally {
      await trackersBack();
    }

    // The trackers are back: a member's re-test of the stored connections works without re-entering them.
    for (const type of ['azure_devops', 'jira'] as const)
      expect((await test({ type, projectId }, t.member.token)).body.success).toBe(true);
    const back = await detail(projectId);
    expect(back.status).toBe('CONNECTED');
    expect(back.connections.source).toMatchObject({ ok: true, itemCount: (await truth()).totalWorkItems });
    expect(back.connections.target).toMatchObject({ ok: true, projectKey: config.jira.projectKey });
    expect(await holding(projectId)).toEqual(before);
  });

  it('a failed test of other credentials replaces nothing: the stored connection stays as it was', async () => {
    const projectId = await ownersConnectedProject('Bad new token');
    const records = async () =>
      Promise.all(
        (['source', 'target'] as const).map((kind) => app.store.connections.get(t.tenantId, projectId, kind)),
      );
    const before = await records();
    const mistyped = { ...target(), api_token: 'mistyped' };
    const misspelt = { ...source(), project: 'Contosso' };
    const byOwner = await test({ type: 'jira', projectId, credentials: mistyped }, t.owner.token);
    expect(byOwner.body).toEqual({ success: false, message: 'target connection failed with 401' });
    const byAdmin = await test({ type: 'azure_devops', projectId, credentials: misspelt }, t.admin.token);
    expect(byAdmin.body).toEqual({ success: false, message: 'source project not found' });
    expect(await records()).toEqual(before);
    expect((await detail(projectId)).status).toBe('CONNECTED');
  });
});

describe('secrets', () => {
  it('never writes a credential to a log line', async () => {
    await test({
      type: 'azure_devops',
      credentials: { ...source(), personal_access_token: 'wrong-but-secret-pat' },
    });
    await test({ type: 'jira', credentials: { ...target(), api_token: 'wrong-but-secret-token' } });
    const log = captured.join('\n');
    // The log did record the tests (so this check is not vacuous) ...
    expect(log).toContain('connection tested');
    expect(log).toContain('tracker call');
    // ... and none of the secrets, nor their Basic-auth encodings.
    for (const secret of [
      config.ado.pat,
      config.jira.apiToken,
      'wrong-but-secret-pat',
      'wrong-but-secret-token',
    ]) {
      expect(log).not.toContain(secret);
      expect(log).not.toContain(Buffer.from(`:${secret}`).toString('base64'));
      expect(log).not.toContain(Buffer.from(`${config.jira.email}:${secret}`).toString('base64'));
    }
  });
});
