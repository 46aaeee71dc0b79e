/**
 * A project's connection stays where its unfinished runs work, through HTTP against the sandboxes (Entra ID and
 * Atlassian on them): while a run of the project is at work, paused, being verified or rolled back, every route
 * that writes a project's connection (the connection test, the OAuth start and its callback, a run start bringing
 * credentials) refuses one naming another site, organisation or project with 409 MIGRATION_ALREADY_RUNNING, before
 * anything is sent there or stored; the same site and project (a reconnect, a re-test) still goes through. The
 * engine's own check, for a connection swapped all the same, is test/e2e/engine-site-binding.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Run, RunStatus } from '../../functions/domain/runs.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { loadSource, loadTarget } from '../../functions/trackers/connections.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, sandboxOAuthEnv, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';
import { sandboxCredentials, sandboxStartBody } from '../support/sandbox-fixtures.ts';
import { beginOAuth, callBack, connectByOAuth } from '../support/tracker-oauth.ts';

const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '5', SANDBOX_SEED: '17' });
const KEY = config.jira.projectKey;
let sb: RunningSandboxes;
let app: TestApp;
let t: TestTenant;
const orch = new RecordingOrchestrator();

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({
    ADO_BASE_URL: sb.ado.url,
    APP_URL: 'http://app.test',
    ...sandboxOAuthEnv(sb, config),
  });
  t = await app.createTenant('Held');
  setOrchestrator(orch);
}, 120_000);
afterAll(async () => {
  setOrchestrator(undefined);
  await app?.close();
  await sb?.stop();
});
beforeEach(() => {
  orch.starts.length = 0;
});

const credentials = () => sandboxCredentials(sb, config);
const orgUrl = () => credentials().source.organization_url;
const test = (type: 'azure_devops' | 'jira', projectId: string, creds?: unknown) =>
  app.call('POST', '/api/connectors/test', {
    token: t.owner.token,
    body: { type, projectId, ...(creds ? { credentials: creds } : {}) },
  });
const stored = async (projectId: string) => ({
  source: (await loadSource(app.store, t.tenantId, projectId))?.creds,
  target: (await loadTarget(app.store, t.tenantId, projectId))?.creds,
});

/** A READY project whose trackers the owner connected with the sandboxes' tokens (tested OK). */
async function connectedProject(name: string): Promise<string> {
  const created = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const projectId: string = created.body.id;
  expect((await test('azure_devops', projectId, credentials().source)).body.success).toBe(true);
  expect((await test('jira', projectId, credentials().target)).body.success).toBe(true);
  await markProjectStatus(app.store, t.tenantId, projectId, 'READY');
  return projectId;
}

/** A run of the project that ended COMPLETED and is now `status` (being verified, or rolled back). */
async function finishedRunNow(projectId: string, status: RunStatus): Promise<Run> {
  const run = await createRun(app.store, t.tenantId, projectId, 'FULL');
  expect(await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'COMPLETED')).toBe(true);
  const path: RunStatus[] =
    status === 'ROLLBACK_PAUSED' ? ['ROLLING_BACK', 'ROLLBACK_PAUSED'] : [status as RunStatus];
  let from: RunStatus = 'COMPLETED';
  for (const to of path) {
    expect(await app.store.runs.setStatus(t.tenantId, run.id, [from], to)).toBe(true);
    from = to;
  }
  return (await app.store.runs.get(t.tenantId, run.id))!;
}

const refusal = (message: string) => ({
  statusCode: 409,
  message,
  error: 'Conflict',
  code: 'MIGRATION_ALREADY_RUNNING',
});

describe("a project's connection stays where its unfinished runs work", () => {
  it('a connection test naming another Azure DevOps project is refused while a run is being verified; a re-test is not, nor the other project once it ended', async () => {
    // Prepare: a connected project, one of its runs being verified
    const projectId = await connectedProject('Verified');
    const run = await finishedRunNow(projectId, 'VERIFYING');
    const elsewhere = { ...credentials().source, project: 'Elsewhere' };

    // Act + Assess: the owner's test of another project is refused before the tracker is asked, nothing stored
    expect((await test('azure_devops', projectId, elsewhere)).body).toEqual(
      refusal(
        `Run ${run.id} of this project is being verified against its source connection (Azure DevOps ` +
          `organisation ${orgUrl()}, project ${config.ado.project}): connect the source elsewhere once its ` +
          'verification has ended (or cancel it); new credentials for that organisation and project are accepted',
      ),
    );
    expect((await stored(projectId)).source).toEqual(credentials().source);

    // Act + Assess: a re-test of the stored connection goes through
    expect((await test('azure_devops', projectId)).body.success).toBe(true);

    // Act + Assess: the verification ended, the other project is tested (the tracker answers for it)
    expect(await app.store.runs.setStatus(t.tenantId, run.id, ['VERIFYING'], 'COMPLETED')).toBe(true);
    const tested = await test('azure_devops', projectId, elsewhere);
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ success: false, message: 'source project not found' });
  });

  it('the OAuth start naming another site or project key is refused while a run is at work; the same site and key is not', async () => {
    // Prepare: a connected project and its run started through the API (it holds the project's lock)
    const projectId = await connectedProject('At work');
    const started = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
      token: t.owner.token,
      body: sandboxStartBody(sb, config),
    });
    expect(started.status).toBe(200);
    const start = (body: unknown) =>
      app.call('POST', `/api/projects/${projectId}/connections/target/oauth`, { token: t.owner.token, body });
    const held = refusal(
      `Run ${started.body.id} of this project is at work against its target connection (Jira site ${sb.jira.url}, ` +
        `project ${KEY}): connect the target elsewhere once the run has ended (or cancel it); new credentials ` +
        'for that site and project are accepted',
    );

    // Act + Assess: another key, another site: refused (an owner's start, which could otherwise move it)
    expect((await start({ project_key: 'OTHER' })).body).toEqual(held);
    expect((await start({ project_key: KEY, site: 'https://elsewhere.atlassian.net' })).body).toEqual(held);

    // Act + Assess: the same site and key (a reconnect) starts
    const same = await start({ project_key: KEY });
    expect(same.status).toBe(200);
    expect(same.body.authorizationUrl).toContain(sb.jira.url);
    expect((await stored(projectId)).target).toEqual(credentials().target);
  });

  it('a grant for another project called back once a rollback is under way is not stored, the browser told why; a reconnect of the same project is', async () => {
    // Prepare: the owner starts connecting the source to another project while nothing of the project runs
    const projectId = await connectedProject('Rolled back');
    const dance = await beginOAuth(app, t.owner.token, projectId, 'source', {
      organization_url: orgUrl(),
      project: 'Elsewhere',
    });
    expect(dance.start.status).toBe(200);
    // ... then one of its runs is being rolled back (paused) when the provider sends the browser back
    const run = await finishedRunNow(projectId, 'ROLLBACK_PAUSED');

    // Act
    const back = await callBack(app, dance);

    // Assess: back to the console with the refusal, the stored source as it was
    expect(back.status).toBe(302);
    const location = new URL(String(back.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(`http://app.test/projects/${projectId}`);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      connection: 'source',
      status: 'error',
      code: 'MIGRATION_ALREADY_RUNNING',
      message:
        `Run ${run.id} of this project is being rolled back against its source connection (Azure DevOps ` +
        `organisation ${orgUrl()}, project ${config.ado.project}): connect the source elsewhere once its ` +
        'rollback has ended (or cancel it); new credentials for that organisation and project are accepted',
    });
    expect((await stored(projectId)).source).toEqual(credentials().source);

    // Act + Assess: a grant for the project's own organisation and project is stored under the rollback
    const again = await connectByOAuth(app, t.owner.token, projectId, 'source', {
      organization_url: orgUrl(),
      project: config.ado.project,
    });
    expect(again.callback?.headers.location).toContain('status=connected');
    expect((await stored(projectId)).source).toMatchObject({ method: 'oauth', project: config.ado.project });
  });

  it("a run start bringing a target on another site is refused while another of the project's runs is being verified; with the stored connections it starts", async () => {
    // Prepare: a connected project, one of its runs being verified (which holds no lock)
    const projectId = await connectedProject('Started beside');
    const verifying = await finishedRunNow(projectId, 'VERIFYING');
    const body = sandboxStartBody(sb, config);
    const elsewhere = {
      ...body,
      enginePayload: {
        ...body.enginePayload,
        target: { ...body.enginePayload.target, base_url: 'https://elsewhere.atlassian.net' },
      },
    };
    const startWith = (b: unknown) =>
      app.call('POST', `/api/migrations/project/${projectId}/start`, { token: t.owner.token, body: b });

    // Act + Assess: refused, nothing stored or started
    expect((await startWith(elsewhere)).body).toEqual(
      refusal(
        `Run ${verifying.id} of this project is being verified against its target connection (Jira site ` +
          `${sb.jira.url}, project ${KEY}): connect the target elsewhere once its verification has ended (or ` +
          'cancel it); new credentials for that site and project are accepted',
      ),
    );
    expect((await stored(projectId)).target).toEqual(credentials().target);
    expect(orch.starts).toEqual([]);
    expect(await app.store.runs.listByProject(t.tenantId, projectId)).toHaveLength(1);

    // Act + Assess: the project's own trackers: the run starts
    const started = await startWith(body);
    expect(started.status).toBe(200);
    expect(orch.starts).toEqual([{ tenantId: t.tenantId, runId: started.body.id, generation: 0 }]);
  });
});
