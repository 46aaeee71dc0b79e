/**
 * Issue 17, point 2, through HTTP against the sandboxes: with the source (Entra) and the target (Atlassian)
 * connected by the owner's OAuth grants, a member who names another organisation (or Jira project) in a run
 * start, a SAMPLE dry run included, is refused with a code and the grant is not re-pointed: the owner's next
 * connection test still goes to the consented organisation, and a loopback "attacker" named in the body gets
 * no request and no token. Moving a stored OAuth connection elsewhere is for an owner or admin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { loadSource, loadTarget } from '../../functions/trackers/connections.ts';
import { allowLoopbackPorts, allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, sandboxOAuthEnv, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { type Attacker, startAttacker } from '../support/attacker.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { connectByOAuth } from '../support/tracker-oauth.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
let attacker: Attacker;
let projectId: string;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '5', SANDBOX_SEED: '17' });
const orch = new RecordingOrchestrator();
/** The SAMPLE run the first test starts (left pending: the recording orchestrator runs no engine). */
let startedRun = '';

beforeAll(async () => {
  attacker = await startAttacker();
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  // The attacker's port is one the outbound policy lets through, as a real tracker's host would be: only the
  // OAuth scope rules stand between a member and it.
  allowLoopbackPorts(attacker.port);
  app = await startTestApp({
    ADO_BASE_URL: sb.ado.url,
    APP_URL: 'http://app.test',
    ...sandboxOAuthEnv(sb, config),
  });
  t = await app.createTenant('Retarget');
  const created = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name: 'Granted', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  projectId = created.body.id;
  const source = await connectByOAuth(app, t.owner.token, projectId, 'source', {
    organization_url: `${sb.ado.url}/${config.ado.org}`,
    project: config.ado.project,
  });
  expect(source.callback?.status).toBe(302);
  const target = await connectByOAuth(app, t.owner.token, projectId, 'target', {
    project_key: config.jira.projectKey,
  });
  expect(target.callback?.status).toBe(302);
  await markProjectStatus(app.store, t.tenantId, projectId, 'READY');
  setOrchestrator(orch);
});
afterAll(async () => {
  setOrchestrator(undefined);
  await app.close();
  await sb.stop();
  await attacker.close();
});

const start = (token: string, source: Record<string, unknown>, target: Record<string, unknown> = {}) =>
  app.call('POST', `/api/migrations/project/${projectId}/start`, {
    token,
    body: {
      type: 'SAMPLE',
      enginePayload: {
        source: { org: config.ado.org, project: config.ado.project, ...source },
        target: { base_url: sb.jira.url, project_key: config.jira.projectKey, ...target },
        options: { dry_run: true },
      },
    },
  });

describe("a member and the owner's OAuth grants", () => {
  it('a SAMPLE dry run naming another organisation is refused, and the grant stays where it was consented', async () => {
    const granted = {
      source: (await loadSource(app.store, t.tenantId, projectId))?.creds,
      target: (await loadTarget(app.store, t.tenantId, projectId))?.creds,
    };
    // The form: a `#` that would throw away the path the client appends.
    const hashed = await start(t.member.token, { org: `${attacker.url}/stolen#` });
    expect(hashed.status).toBe(400);
    expect(hashed.body.code).toBe('VALIDATION_FAILED');

    const elsewhere = await start(t.member.token, { org: `${attacker.url}/stolen` });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      code: 'OAUTH_SCOPE_MISMATCH',
      message: [
        `enginePayload.source must name ${sb.ado.url}/${config.ado.org} and project ${config.ado.project}: the source is connected by OAuth to them (send pat to use another)`,
      ],
    });
    const otherKey = await start(t.member.token, {}, { project_key: 'OTHER' });
    expect(otherKey.status).toBe(409);
    expect(otherKey.body.code).toBe('OAUTH_SCOPE_MISMATCH');
    expect(orch.starts).toEqual([]);

    // Nothing moved: the stored grants are byte for byte what was consented.
    expect((await loadSource(app.store, t.tenantId, projectId))?.creds).toEqual(granted.source);
    expect((await loadTarget(app.store, t.tenantId, projectId))?.creds).toEqual(granted.target);

    // The owner's next connection test goes to the consented organisation, not to the attacker.
    const tested = await app.call('POST', '/api/connectors/test', {
      token: t.owner.token,
      body: { type: 'azure_devops', projectId },
    });
    expect(tested.body.success).toBe(true);
    expect(attacker.requests).toEqual([]);

    // The consented scope still starts without secrets.
    const ok = await start(t.member.token, {});
    expect(ok.status).toBe(200);
    startedRun = ok.body.id as string;
    expect(orch.starts).toHaveLength(1);
    expect(attacker.requests).toEqual([]);
  });

  it('a member cannot move the stored OAuth connection; an admin can start to', async () => {
    const moved = await app.call('POST', `/api/projects/${projectId}/connections/source/oauth`, {
      token: t.member.token,
      body: { organization_url: `${attacker.url}/stolen`, project: 'Loot' },
    });
    expect(moved.status).toBe(403);
    expect(moved.body).toMatchObject({
      code: 'FORBIDDEN',
      message: "Only an owner or admin can connect the project's source to another organisation or project",
    });
    const key = await app.call('POST', `/api/projects/${projectId}/connections/target/oauth`, {
      token: t.member.token,
      body: { project_key: 'OTHER' },
    });
    expect(key.status).toBe(403);
    // The same scope may be consented again by anyone (an expired grant); another, by an admin.
    const again = await app.call('POST', `/api/projects/${projectId}/connections/source/oauth`, {
      token: t.member.token,
      body: { organization_url: `${sb.ado.url}/${config.ado.org}`, project: config.ado.project },
    });
    expect(again.status).toBe(200);
    // Not while a run of the project is unfinished (the one started above is still pending): it would write there.
    const underRun = await app.call('POST', `/api/projects/${projectId}/connections/target/oauth`, {
      token: t.admin.token,
      body: { project_key: 'OTHER' },
    });
    expect(underRun.status).toBe(409);
    expect(underRun.body.code).toBe('MIGRATION_ALREADY_RUNNING');
    const cancelled = await app.call('POST', `/api/migrations/${startedRun}/cancel`, {
      token: t.admin.token,
    });
    expect(cancelled.status).toBe(200);
    const byAdmin = await app.call('POST', `/api/projects/${projectId}/connections/target/oauth`, {
      token: t.admin.token,
      body: { project_key: 'OTHER' },
    });
    expect(byAdmin.status).toBe(200);
    expect(attacker.requests).toEqual([]);
  });
});

describe('an admin moving the OAuth connection', () => {
  it('shows the new scope in the project detail at once, and the next start follows it', async () => {
    const before = await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token });
    expect(JSON.stringify(before.body.connections)).toContain(config.jira.projectKey);
    const moved = await connectByOAuth(app, t.admin.token, projectId, 'target', { project_key: 'ELSEWHERE' });
    expect(moved.callback?.status).toBe(302);
    const after = await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token });
    expect(JSON.stringify(after.body.connections)).toContain('ELSEWHERE');
    expect((await loadTarget(app.store, t.tenantId, projectId))?.creds.project_key).toBe('ELSEWHERE');
    // A start naming the old key now names another scope than the grant's: refused, not re-pointed back.
    const old = await start(t.member.token, {}, { project_key: config.jira.projectKey });
    expect(old.status).toBe(409);
    expect(old.body.code).toBe('OAUTH_SCOPE_MISMATCH');
    expect(attacker.requests).toEqual([]);
  });
});
