/**
 * Issue 29, points 5 and 6, through HTTP against the sandboxes (Entra ID and Atlassian on the ADO and Jira
 * sandboxes, and a second Jira sandbox playing a member's own Jira site): what a member can do with tracker
 * connections someone else made.
 * - Point 5: a member who starts the Jira OAuth connection without `site` cannot move the project's target to
 *   the only site their own Atlassian account reaches: a start without `site` asks for the site the project is
 *   connected to, and a grant that does not reach it is refused at the callback, the stored connection untouched.
 * - Point 6: a member cannot pair an OAuth grant someone else consented with a target (or source) of their own:
 *   the start is refused before anything is read or written, and a member's start or connection test never
 *   replaces a stored connection someone else made. Owners and admins still may.
 * Runs that do start are driven through the real engine handler, so a run that should not have started shows
 * what it read and wrote.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEngineHandler, type EngineHandler } from '../../functions/engine/handler.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { DiskArtifactStore } from '../../functions/store/artifacts.ts';
import { loadSource, loadTarget } from '../../functions/trackers/connections.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, sandboxOAuthEnv, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { captureOutput } from '../support/capture-output.ts';
import { startJiraSite } from '../support/jira-sandbox.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { sandboxControl, sandboxCredentials } from '../support/sandbox-fixtures.ts';
import { connectByOAuth } from '../support/tracker-oauth.ts';

const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '5', SANDBOX_SEED: '29' });
const KEY = config.jira.projectKey;
const dir = mkdtempSync(join(tmpdir(), 'tms-member-grants-'));
let sb: RunningSandboxes;
/** The member's own Jira site: the same sandbox accounts, another origin. */
let memberJira: { app: FastifyInstance; url: string };
let app: TestApp;
let t: TestTenant;
let engine: EngineHandler;
const orch = new RecordingOrchestrator();

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  memberJira = await startJiraSite(config);
  allowSandboxPorts(sb);
  app = await startTestApp({
    ADO_BASE_URL: sb.ado.url,
    APP_URL: 'http://app.test',
    ...sandboxOAuthEnv(sb, config),
  });
  t = await app.createTenant('Grants');
  engine = createEngineHandler({
    store: () => app.store,
    artifacts: () => new DiskArtifactStore(join(dir, 'artifacts')),
    indexLagMs: 0,
  });
  setOrchestrator(orch);
  captureOutput();
}, 120_000);
afterAll(async () => {
  vi.restoreAllMocks();
  setOrchestrator(undefined);
  await app?.close();
  await sb?.stop();
  await memberJira?.app.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  orch.starts.length = 0;
  await sandboxControl(sb.jira.url, 'PUT', '/_sandbox/jira/oauth', { sites: null });
});

const jiraOAuth = (body: unknown) => sandboxControl(sb.jira.url, 'PUT', '/_sandbox/jira/oauth', body);
const adoBearerRequests = async () =>
  ((await sandboxControl(sb.ado.url, 'GET', '/_sandbox/ado/oauth/stats')) as { bearerRequests: number })
    .bearerRequests;
const issuesIn = async (jiraUrl: string) =>
  ((await sandboxControl(jiraUrl, 'GET', '/_sandbox/jira/issues')) as unknown[]).length;
const stored = async (projectId: string) => ({
  source: (await loadSource(app.store, t.tenantId, projectId))?.creds,
  target: (await loadTarget(app.store, t.tenantId, projectId))?.creds,
});
const sourceGrant = () => ({
  organization_url: `${sb.ado.url}/${config.ado.org}`,
  project: config.ado.project,
});
/** The member's own Jira: same account and key, on the member's site. */
const memberTarget = () => ({ ...sandboxCredentials(sb, config).target, base_url: memberJira.url });

/** A READY project whose source the owner connected by OAuth, and whose target as `target` says. */
async function ownersProject(name: string, target: 'oauth' | 'token' | 'none'): Promise<string> {
  const created = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const projectId: string = created.body.id;
  const source = await connectByOAuth(app, t.owner.token, projectId, 'source', sourceGrant());
  expect(source.callback?.headers.location).toContain('status=connected');
  if (target === 'oauth') {
    const dance = await connectByOAuth(app, t.owner.token, projectId, 'target', { project_key: KEY });
    expect(dance.callback?.headers.location).toContain('status=connected');
  } else if (target === 'token') {
    const tested = await app.call('POST', '/api/connectors/test', {
      token: t.owner.token,
      body: { type: 'jira', projectId, credentials: sandboxCredentials(sb, config).target },
    });
    expect(tested.body.success).toBe(true);
  }
  await markProjectStatus(app.store, t.tenantId, projectId, 'READY');
  return projectId;
}

/** Runs every start the orchestrator recorded through the real engine, invocation by invocation. */
async function runRecordedStarts(): Promise<void> {
  for (const start of orch.starts.splice(0)) {
    let next: 'preflight' | 'batch' | 'finalize' = 'preflight';
    for (let call = 0; call < 200; call++) {
      const result = await engine({ action: next, ...start }, { getRemainingTimeInMillis: () => 900_000 });
      const answer = 'answer' in result ? result.answer : 'failed';
      if (['done', 'failed', 'cancelled', 'paused'].includes(answer)) break;
      next = answer === 'finalize' ? 'finalize' : 'batch';
    }
  }
}

const fullStart = (token: string, projectId: string, target: Record<string, unknown>) =>
  app.call('POST', `/api/migrations/project/${projectId}/start`, {
    token,
    body: {
      type: 'FULL',
      enginePayload: {
        source: { org: config.ado.org, project: config.ado.project },
        target,
        options: { migrate_attachments: true, migrate_comments: false },
      },
    },
  });

/** Where a callback sent the browser, and what it was told. */
const landing = (location: string | string[] | undefined) =>
  Object.fromEntries(new URL(String(location ?? 'http://app.test/')).searchParams);

describe("point 5: a member and the Jira site of the project's target", () => {
  it('a start without "site" cannot move the OAuth target to the only site the member\'s own account reaches', async () => {
    const projectId = await ownersProject('Site kept (OAuth)', 'oauth');
    const before = await stored(projectId);
    // The member's Atlassian account reaches their own site only.
    await jiraOAuth({
      sites: [{ id: 'c0ffee00-0000-4000-a000-00000000000a', url: memberJira.url, name: 'mine' }],
    });

    const dance = await connectByOAuth(app, t.member.token, projectId, 'target', { project_key: KEY });
    expect(dance.start.status).toBe(200);
    expect(dance.callback?.status).toBe(302);
    expect(landing(dance.callback?.headers.location)).toEqual({
      connection: 'target',
      status: 'error',
      code: 'OAUTH_SCOPE_MISMATCH',
      message: `the grant does not cover ${sb.jira.url}; it covers ${memberJira.url}: sign in with an Atlassian account that reaches ${sb.jira.url}`,
    });
    // The stored grant is byte for byte the owner's, and the console still shows the owner's site.
    expect(await stored(projectId)).toEqual(before);
    const detail = await app.call('GET', `/api/projects/${projectId}`, { token: t.owner.token });
    expect(detail.body.connections.target).toMatchObject({
      baseUrl: before.target?.base_url,
      projectKey: KEY,
    });
    expect(before.target?.base_url).toBe(sb.jira.url);
  });

  it('the same for a target connected by API token; another project key is for an owner or admin', async () => {
    const projectId = await ownersProject('Site kept (token)', 'token');
    const before = await stored(projectId);
    await jiraOAuth({
      sites: [{ id: 'c0ffee00-0000-4000-a000-00000000000b', url: memberJira.url, name: 'mine' }],
    });

    const dance = await connectByOAuth(app, t.member.token, projectId, 'target', { project_key: KEY });
    expect(landing(dance.callback?.headers.location)).toMatchObject({
      status: 'error',
      code: 'OAUTH_SCOPE_MISMATCH',
    });
    const otherKey = await app.call('POST', `/api/projects/${projectId}/connections/target/oauth`, {
      token: t.member.token,
      body: { project_key: 'OTHER' },
    });
    expect(otherKey.body).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      code: 'FORBIDDEN',
      message: "Only an owner or admin can connect the project's target to another site or project key",
    });
    expect(await stored(projectId)).toEqual(before);

    // An admin's account that reaches the stored site connects it by OAuth (the site asked for is the stored one).
    await jiraOAuth({ sites: null });
    const admin = await connectByOAuth(app, t.admin.token, projectId, 'target', { project_key: KEY });
    expect(landing(admin.callback?.headers.location)).toEqual({ connection: 'target', status: 'connected' });
    expect((await stored(projectId)).target).toMatchObject({
      method: 'oauth',
      base_url: sb.jira.url,
      project_key: KEY,
    });
  });
});

describe('point 6: a member and a grant someone else consented', () => {
  it("a member's FULL start pairing the owner's source grant with a pasted target of their own is refused", async () => {
    const projectId = await ownersProject('Owner grant, member target', 'oauth');
    const before = await stored(projectId);
    const reads = await adoBearerRequests();

    const res = await fullStart(t.member.token, projectId, memberTarget());
    await runRecordedStarts();
    // Nothing was read from Azure DevOps with the owner's grant, nothing written to the member's Jira.
    expect(await issuesIn(memberJira.url)).toBe(0);
    expect(await adoBearerRequests()).toBe(reads);
    expect(await stored(projectId)).toEqual(before);
    expect(res.body).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      code: 'GRANT_PAIRING_FORBIDDEN',
      message:
        "The source is connected by an OAuth grant another user consented: a member's run uses it only with the project's stored target, connected by an owner, an admin or whoever consented the grant (send no target credentials of your own)",
    });
    expect(
      (await app.call('GET', `/api/migrations?projectId=${projectId}`, { token: t.owner.token })).body,
    ).toEqual([]);

    // The stored connections together still start without secrets.
    const together = await fullStart(t.member.token, projectId, { base_url: sb.jira.url, project_key: KEY });
    expect(together.status).toBe(200);
    expect(orch.starts).toHaveLength(1);
    orch.starts.length = 0;
  });

  it('the same when the project has no stored target, or one the member connected themselves', async () => {
    const projectId = await ownersProject('Owner grant, no target', 'none');
    const none = await fullStart(t.member.token, projectId, memberTarget());
    expect(none.body.code).toBe('GRANT_PAIRING_FORBIDDEN');
    expect((await stored(projectId)).target).toBeUndefined();

    // A connection test stores the member's own target (nobody else's is replaced)...
    const tested = await app.call('POST', '/api/connectors/test', {
      token: t.member.token,
      body: { type: 'jira', projectId, credentials: memberTarget() },
    });
    expect(tested.body.success).toBe(true);
    // ...which still does not pair with the owner's grant, sent as stored or pasted again.
    const asStored = await fullStart(t.member.token, projectId, memberTarget());
    expect(asStored.status).toBe(403);
    expect(asStored.body.code).toBe('GRANT_PAIRING_FORBIDDEN');
    await runRecordedStarts();
    expect(await issuesIn(memberJira.url)).toBe(0);
  });

  it("a member's start or connection test never replaces a stored connection someone else made", async () => {
    const projectId = await ownersProject('Owner target kept', 'token');
    const before = await stored(projectId);
    const replace = await app.call('POST', '/api/connectors/test', {
      token: t.member.token,
      body: { type: 'jira', projectId, credentials: memberTarget() },
    });
    expect(replace.body).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      code: 'FORBIDDEN',
      message:
        "Only an owner or admin can replace the project's stored target connection, which someone else made: use it as it is",
    });
    expect(await stored(projectId)).toEqual(before);

    // The stored target sent again, secrets and all, is the stored one: the start goes ahead and writes nothing.
    const same = await fullStart(t.member.token, projectId, sandboxCredentials(sb, config).target);
    expect(same.status).toBe(200);
    expect(await stored(projectId)).toEqual(before);
    const connection = await app.store.connections.get(t.tenantId, projectId, 'target');
    expect(connection?.connectedBy).toEqual({ userId: t.owner.id, role: 'owner' });
    expect(orch.starts).toHaveLength(1);
    orch.starts.length = 0;
  });

  it("counts a connection stored before makers were kept as nobody's, until an owner's or admin's test", async () => {
    const projectId = await ownersProject('Older record', 'token');
    // Arranged through the store: the record as it was written before `connectedBy` existed.
    const { connectedBy: _maker, ...older } =
      (await app.store.connections.get(t.tenantId, projectId, 'target')) ?? ({} as never);
    await app.store.connections.put(t.tenantId, projectId, older);
    const replace = await app.call('POST', '/api/connectors/test', {
      token: t.member.token,
      body: { type: 'jira', projectId, credentials: memberTarget() },
    });
    expect(replace.body.code).toBe('FORBIDDEN');
    const paired = await fullStart(t.member.token, projectId, sandboxCredentials(sb, config).target);
    expect(paired.body.code).toBe('GRANT_PAIRING_FORBIDDEN');
    // The admin tests the stored token: it becomes the admin's, and the member's run goes ahead with it.
    const tested = await app.call('POST', '/api/connectors/test', {
      token: t.admin.token,
      body: { type: 'jira', projectId },
    });
    expect(tested.body.success).toBe(true);
    expect((await app.store.connections.get(t.tenantId, projectId, 'target'))?.connectedBy).toEqual({
      userId: t.admin.id,
      role: 'admin',
    });
    expect((await fullStart(t.member.token, projectId, sandboxCredentials(sb, config).target)).status).toBe(
      200,
    );
    orch.starts.length = 0;
  });

  it('an admin may still pair the grant with another target, which then replaces the stored one', async () => {
    const projectId = await ownersProject('Admin replaces', 'oauth');
    const res = await fullStart(t.admin.token, projectId, memberTarget());
    expect(res.status).toBe(200);
    expect((await stored(projectId)).target).toEqual(memberTarget());
    const connection = await app.store.connections.get(t.tenantId, projectId, 'target');
    expect(connection?.connectedBy).toEqual({ userId: t.admin.id, role: 'admin' });
    orch.starts.length = 0;
  });
});
