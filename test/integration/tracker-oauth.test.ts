/**
 * Connecting a project's trackers by OAuth 2.0, through the API and the browser's redirects, against the
 * sandboxes' Entra ID (source) and Atlassian (target) authorization servers: the grant is stored sealed and
 * used wherever a pasted token would be (connection test, scan, mappings, run start), refreshed before it
 * expires or after a 401, its rotated refresh token kept; a refused grant says "Token exchange failed" and
 * asks to reconnect. No token in any answer, stored attribute or log line.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  OAuthSourceCredentialsSchema,
  OAuthTargetCredentialsSchema,
} from '../../functions/domain/tracker-oauth.ts';
import { clock } from '../../functions/platform/clock.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { keys } from '../../functions/store/keys.ts';
import { loadSource, loadTarget } from '../../functions/trackers/connections.ts';
import { allowSandboxPorts } from '../../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { type RunningSandboxes, sandboxOAuthEnv, startSandboxes } from '../../local/sandbox/index.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { captureOutput } from '../support/capture-output.ts';
import { markProjectStatus } from '../support/lifecycle.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { sandboxControl } from '../support/sandbox-fixtures.ts';
import { beginOAuth, callBack, connectByOAuth } from '../support/tracker-oauth.ts';

let app: TestApp;
let t: TestTenant;
let sb: RunningSandboxes;
const config = sandboxConfigFromEnv({ SANDBOX_ITEMS: '40', SANDBOX_SEED: '7' });
const output: string[] = [];

const sourceBody = () => ({
  organization_url: `${sb.ado.url}/${config.ado.org}`,
  project: config.ado.project,
});
const targetBody = () => ({ project_key: config.jira.projectKey });
const control = (tracker: 'ado' | 'jira', method: string, path: string, body?: unknown) =>
  sandboxControl(sb[tracker].url, method, `/_sandbox/${tracker}/oauth${path}`, body);
const stats = async (tracker: 'ado' | 'jira') =>
  (await control(tracker, 'GET', '/stats')) as {
    authorizationCodeExchanges: number;
    refreshExchanges: number;
    failedExchanges: number;
  };

async function newProject(name: string): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: t.admin.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

const detail = async (projectId: string) =>
  (await app.call('GET', `/api/projects/${projectId}`, { token: t.member.token })).body;

beforeAll(async () => {
  sb = await startSandboxes({ config, adoPort: 0, jiraPort: 0 });
  allowSandboxPorts(sb);
  app = await startTestApp({
    ADO_BASE_URL: sb.ado.url,
    APP_URL: 'http://app.test',
    POWERTOOLS_LOG_LEVEL: 'DEBUG',
    ...sandboxOAuthEnv(sb, config),
  });
  t = await app.createTenant('OAuth');
  captureOutput(output);
});
afterEach(async () => {
  await control('ado', 'PUT', '', { accessTokenTtlSeconds: 3600, decline: false });
  await control('jira', 'PUT', '', { accessTokenTtlSeconds: 3600, decline: false });
});
afterAll(async () => {
  vi.restoreAllMocks();
  await app.close();
  await sb.stop();
});

/** Where a failed callback sent the browser: the console's path and what it was told. */
function returnedTo(location: unknown) {
  const url = new URL(String(location));
  return { path: url.pathname, ...Object.fromEntries(url.searchParams) };
}

describe('connecting by OAuth', () => {
  it('connects the source through Entra ID with PKCE and the target through Atlassian, and the project is CONNECTED', async () => {
    const projectId = await newProject('Both by OAuth');
    const before = { ado: await stats('ado'), jira: await stats('jira') };

    const source = await beginOAuth(app, t.member.token, projectId, 'source', sourceBody());
    expect(source.start.status).toBe(200);
    const authorize = new URL(source.start.body.authorizationUrl);
    expect(authorize.origin).toBe(sb.ado.url);
    expect(authorize.pathname).toBe('/sandbox-tenant/oauth2/v2.0/authorize');
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: 'sandbox-entra-client',
      response_type: 'code',
      code_challenge_method: 'S256',
      scope: '499b84ac-1321-427f-aa17-267ca6975798/.default offline_access',
      redirect_uri: `${app.url}/api/connections/oauth/callback`,
    });
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(source.cookie).toMatch(/^tms_oauth_binding=/);
    expect(source.start.setCookies[0]).toContain('HttpOnly; Secure; SameSite=Lax');
    const back = await callBack(app, source);
    expect(back.status).toBe(302);
    expect(back.headers.location).toBe(
      `http://app.test/projects/${projectId}?connection=source&status=connected`,
    );

    const target = await connectByOAuth(app, t.member.token, projectId, 'target', {
      ...targetBody(),
      returnTo: '/settings/connections',
    });
    expect(new URL(target.start.body.authorizationUrl).searchParams.get('audience')).toBe(
      'api.atlassian.com',
    );
    expect(target.callback?.status).toBe(302);
    expect(target.callback?.headers.location).toBe(
      'http://app.test/settings/connections?connection=target&status=connected',
    );

    const shown = await detail(projectId);
    expect(shown.status).toBe('CONNECTED');
    expect(shown.connections.source).toMatchObject({
      ok: true,
      method: 'oauth',
      provider: 'entra',
      reconnectRequired: false,
      auth: 'oauth',
      projectName: config.ado.project,
      itemCount: 40,
    });
    expect(shown.connections.target).toMatchObject({
      ok: true,
      method: 'oauth',
      provider: 'atlassian',
      auth: 'oauth',
      baseUrl: sb.jira.url,
      projectKey: config.jira.projectKey,
    });
    expect(JSON.stringify(shown)).not.toMatch(/accessToken|refreshToken|sealed/);
    expect((await stats('ado')).authorizationCodeExchanges).toBe(before.ado.authorizationCodeExchanges + 1);
    expect((await stats('jira')).authorizationCodeExchanges).toBe(before.jira.authorizationCodeExchanges + 1);

    // Atlassian's site came from accessible-resources: the client talks to the gateway with its cloud id.
    const stored = await loadTarget(app.store, t.tenantId, projectId);
    expect(stored?.method).toBe('oauth');
    const site = (await control('jira', 'GET', '')) as { cloudId: string };
    expect(OAuthTargetCredentialsSchema.parse(stored?.creds).cloud_id).toBe(site.cloudId);
  });

  it('refuses a replayed callback, one from another browser and an expired or unknown state, storing nothing', async () => {
    const projectId = await newProject('Replays');
    const dance = await beginOAuth(app, t.member.token, projectId, 'source', sourceBody());
    // Another browser (another or no binding cookie) brings the same redirect: refused, and storing nothing.
    const stranger = await callBack(app, dance, 'tms_oauth_binding=someone-else');
    expect(stranger.status).toBe(400);
    expect(stranger.body).toEqual({
      statusCode: 400,
      message: 'This OAuth connection attempt is unknown, already used or expired: start connecting again',
      error: 'Bad Request',
      code: 'OAUTH_STATE_INVALID',
    });
    expect((await app.call('GET', `${dance.callbackUrl?.pathname}${dance.callbackUrl?.search}`)).status).toBe(
      400,
    );
    expect((await detail(projectId)).connections.source).toBeNull();
    // The stranger could not spoil it: the browser that started it still completes, once.
    expect((await callBack(app, dance)).headers.location).toContain('status=connected');
    expect((await callBack(app, dance)).body.code).toBe('OAUTH_STATE_INVALID');

    const ok = await connectByOAuth(app, t.member.token, projectId, 'source', sourceBody());
    expect(ok.callback?.status).toBe(302);
    const replay = await callBack(app, ok);
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('OAUTH_STATE_INVALID');

    const unknown = await app.call('GET', '/api/connections/oauth/callback?state=nope&code=x', {
      cookie: ok.cookie ?? '',
    });
    expect(unknown.body.code).toBe('OAUTH_STATE_INVALID');
    const missing = await app.call('GET', '/api/connections/oauth/callback?code=x');
    expect(missing.status).toBe(400);
    expect(missing.body.message).toEqual(['state is required']);
  });

  it('answers "Token exchange failed" when the provider refuses the code, and keeps nothing', async () => {
    const projectId = await newProject('Refused code');
    await control('jira', 'POST', '/fail-next', { grant: 'authorization_code' });
    const dance = await connectByOAuth(app, t.member.token, projectId, 'target', targetBody());
    // The browser goes back to the console with the reason, not to a raw JSON page.
    expect(dance.callback?.status).toBe(302);
    expect(returnedTo(dance.callback?.headers.location)).toEqual({
      path: `/projects/${projectId}`,
      connection: 'target',
      status: 'error',
      code: 'TOKEN_EXCHANGE_FAILED',
      message: 'Token exchange failed: atlassian answered invalid_grant; connect again',
    });
    expect((await detail(projectId)).connections.target).toBeNull();
  });

  it('reports a declined consent clearly', async () => {
    const projectId = await newProject('Declined');
    await control('ado', 'PUT', '', { decline: true });
    const dance = await connectByOAuth(app, t.member.token, projectId, 'source', sourceBody());
    expect(dance.callback?.status).toBe(302);
    expect(returnedTo(dance.callback?.headers.location)).toEqual({
      path: `/projects/${projectId}`,
      connection: 'source',
      status: 'error',
      code: 'TOKEN_EXCHANGE_FAILED',
      message: 'The Azure DevOps sign-in answered access_denied: the connection was not made',
    });
    // The attempt is spent: the same redirect again is an unknown state.
    expect((await callBack(app, dance)).body.code).toBe('OAUTH_STATE_INVALID');
    expect((await detail(projectId)).connections.source).toBeNull();
  });

  it('validates the start: kind, body, returnTo on the app only, another tenant 404, provider not configured', async () => {
    const projectId = await newProject('Validation');
    const call = (kind: string, body: unknown, token = t.member.token, id = projectId) =>
      app.call('POST', `/api/projects/${id}/connections/${kind}/oauth`, { token, body });
    expect((await call('sideways', sourceBody())).body.message).toEqual([
      'kind must be one of: source, target',
    ]);
    expect((await call('source', { project: '' })).body.message).toEqual([
      'organization_url is required',
      'project must not be empty',
    ]);
    expect((await call('target', { project_key: '9' })).status).toBe(400);
    expect(
      (await call('target', { ...targetBody(), returnTo: 'https://evil.example/x' })).body.message,
    ).toEqual(['returnTo must be a path of the app or a URL on its origin http://app.test']);
    const other = await app.createTenant('Other');
    expect((await call('source', sourceBody(), other.owner.token)).status).toBe(404);

    const saved = process.env.ENTRA_CLIENT_ID;
    delete process.env.ENTRA_CLIENT_ID;
    try {
      const res = await call('source', sourceBody());
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('OAUTH_NOT_CONFIGURED');
    } finally {
      process.env.ENTRA_CLIENT_ID = saved;
    }
  });
});

describe('a pasted OAuth bearer token (the spec: "pat" may be one)', () => {
  it('sends an Entra access token pasted as the PAT as a Bearer token, and Azure DevOps accepts it', async () => {
    const redirect = 'http://127.0.0.1:9/elsewhere';
    const authorize = new URL(`${sb.ado.url}/sandbox-tenant/oauth2/v2.0/authorize`);
    authorize.search = new URLSearchParams({
      client_id: 'sandbox-entra-client',
      response_type: 'code',
      redirect_uri: redirect,
      scope: '499b84ac-1321-427f-aa17-267ca6975798/.default',
      state: 's',
    }).toString();
    const code = new URL(
      (await fetch(authorize, { redirect: 'manual' })).headers.get('location') ?? '',
    ).searchParams.get('code');
    const token = (await (
      await fetch(`${sb.ado.url}/sandbox-tenant/oauth2/v2.0/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: 'sandbox-entra-client',
          client_secret: 'sandbox-entra-secret',
          code: code ?? '',
          redirect_uri: redirect,
        }).toString(),
      })
    ).json()) as { access_token: string };
    const res = await app.call('POST', '/api/connectors/test', {
      token: t.member.token,
      body: {
        type: 'azure_devops',
        credentials: { ...sourceBody(), personal_access_token: token.access_token },
      },
    });
    expect(res.body).toMatchObject({ success: true });
    // The same token sent as a PAT (Basic) would be refused: it really went as a Bearer token.
    const basic = await fetch(`${sb.ado.url}/${config.ado.org}/_apis/projects?api-version=7.1`, {
      headers: { Authorization: `Basic ${Buffer.from(`:${token.access_token}`).toString('base64')}` },
    });
    expect(basic.status).toBe(401);
  });
});

describe('using, refreshing and losing the grant', () => {
  let projectId: string;
  beforeAll(async () => {
    projectId = await newProject('Refreshing');
    await connectByOAuth(app, t.member.token, projectId, 'source', sourceBody());
    await connectByOAuth(app, t.member.token, projectId, 'target', targetBody());
  });
  const testStored = (type: 'azure_devops' | 'jira') =>
    app.call('POST', '/api/connectors/test', { token: t.member.token, body: { type, projectId } });

  it('refreshes a token the provider expired early (401) and stores the rotated refresh token', async () => {
    const before = await loadTarget(app.store, t.tenantId, projectId);
    const refreshes = (await stats('jira')).refreshExchanges;
    await control('jira', 'POST', '/expire-access-tokens');
    const res = await testStored('jira');
    expect(res.body).toMatchObject({ success: true });
    expect((await stats('jira')).refreshExchanges).toBe(refreshes + 1);
    const after = await loadTarget(app.store, t.tenantId, projectId);
    const [b, a] = [
      OAuthTargetCredentialsSchema.parse(before?.creds),
      OAuthTargetCredentialsSchema.parse(after?.creds),
    ];
    expect(a.refreshToken).not.toBe(b.refreshToken);
    expect(a.accessToken).not.toBe(b.accessToken);
    // Atlassian refuses the old refresh token now: only the stored new one can refresh again.
    await control('jira', 'POST', '/expire-access-tokens');
    expect((await testStored('jira')).body.success).toBe(true);
    expect((await stats('jira')).refreshExchanges).toBe(refreshes + 2);
  });

  it('refreshes before use when the stored token is about to expire, and not on every request', async () => {
    const refreshes = (await stats('ado')).refreshExchanges;
    expect((await testStored('azure_devops')).body.success).toBe(true);
    expect((await stats('ado')).refreshExchanges).toBe(refreshes); // an hour left: used as it is
    // 57 minutes on (the service's clock): within 5 minutes of expiry, so refreshed up front, without a 401.
    const real = clock.now;
    clock.now = () => new Date(real().getTime() + 57 * 60_000);
    try {
      const token = (await app.login(t.member.email)).body.accessToken; // ours expire after 15 minutes
      const res = await app.call('POST', '/api/connectors/test', {
        token,
        body: { type: 'azure_devops', projectId },
      });
      expect(res.body.success).toBe(true);
    } finally {
      clock.now = real;
    }
    expect((await stats('ado')).refreshExchanges).toBe(refreshes + 1);

    // A provider that issues short tokens (2 minutes, inside the margin) is asked once per token, not per call.
    await control('ado', 'PUT', '', { accessTokenTtlSeconds: 120 });
    await control('ado', 'POST', '/expire-access-tokens');
    // A clock that ticks at every reading: the lifetime must come from one instant, not two.
    const steady = clock.now;
    let ticks = 0;
    clock.now = () => new Date(steady().getTime() + ticks++);
    try {
      expect((await testStored('azure_devops')).body.success).toBe(true); // 401, refreshed: a 2-minute token
      expect((await testStored('azure_devops')).body.success).toBe(true);
    } finally {
      clock.now = steady;
    }
    expect((await stats('ado')).refreshExchanges).toBe(refreshes + 2);
    const stored = OAuthSourceCredentialsSchema.parse(
      (await loadSource(app.store, t.tenantId, projectId))?.creds,
    );
    expect(Date.parse(stored.expiresAt) - Date.parse(stored.obtainedAt ?? '')).toBe(120_000);
  });

  it('scans and suggests mappings with the grant, and starts a run without secrets in the body', async () => {
    const scan = await app.call('POST', '/api/connectors/scan', {
      token: t.member.token,
      body: { type: 'azure_devops', projectId },
    });
    expect(scan.status).toBe(200);
    expect(scan.body.totalWorkItems).toBe(40);
    const mappings = await app.call('GET', `/api/projects/${projectId}/mappings`, { token: t.member.token });
    expect(mappings.status).toBe(200);
    // The mappings pickers' metadata reads through the grant too (Atlassian's gateway, not the site's host).
    const metadata = await app.call('GET', `/api/projects/${projectId}/target-metadata`, {
      token: t.member.token,
    });
    expect(metadata.status).toBe(200);
    expect(metadata.body.projectKey).toBe(config.jira.projectKey);
    expect(metadata.body.users.length).toBeGreaterThan(0);

    await markProjectStatus(app.store, t.tenantId, projectId, 'READY');
    const orch = new RecordingOrchestrator();
    setOrchestrator(orch);
    const body = (target: Record<string, unknown>) => ({
      type: 'FULL',
      enginePayload: {
        source: { org: config.ado.org, project: config.ado.project },
        target: { base_url: sb.jira.url, project_key: config.jira.projectKey, ...target },
      },
    });
    const granted = await loadSource(app.store, t.tenantId, projectId);
    const elsewhere = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
      token: t.member.token,
      body: body({ base_url: 'https://other.atlassian.net' }),
    });
    // A grant is bound to what was consented (issue 17): another site is refused, not re-pointed.
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body).toMatchObject({
      code: 'OAUTH_SCOPE_MISMATCH',
      message: [
        `enginePayload.target must name ${sb.jira.url} and project key ${config.jira.projectKey}: the target is connected by OAuth to them (send email and api_token to use another)`,
      ],
    });
    const started = await app.call('POST', `/api/migrations/project/${projectId}/start`, {
      token: t.member.token,
      body: body({}),
    });
    expect(started.status).toBe(200);
    expect(orch.starts).toHaveLength(1);
    // The grants stay as consented: the body named the same organisation (by name, resolved against
    // ADO_BASE_URL) and project, and nothing about the stored connection changed.
    const source = await loadSource(app.store, t.tenantId, projectId);
    expect(source?.method).toBe('oauth');
    expect(source?.creds).toEqual(granted?.creds);
    expect((await loadTarget(app.store, t.tenantId, projectId))?.method).toBe('oauth');
    await app.call('POST', `/api/migrations/${started.body.id}/cancel`, { token: t.member.token });
  });

  it('a project without OAuth still needs the secrets in the start body', async () => {
    const plain = await newProject('Pasted only');
    await markProjectStatus(app.store, t.tenantId, plain, 'READY');
    const res = await app.call('POST', `/api/migrations/project/${plain}/start`, {
      token: t.member.token,
      body: {
        type: 'FULL',
        enginePayload: {
          source: { org: 'o', project: 'p' },
          target: { base_url: sb.jira.url, project_key: 'ABC' },
        },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual([
      'enginePayload.source.pat is required',
      'enginePayload.target.email is required',
      'enginePayload.target.api_token is required',
    ]);
  });

  it('a failing tracker or a failed test of a pasted token leaves the grant stored and in use', async () => {
    const granted = await app.store.connections.get(t.tenantId, projectId, 'target');
    const creds = (await loadTarget(app.store, t.tenantId, projectId))?.creds;
    await sandboxControl(sb.jira.url, 'PUT', '/_sandbox/faults', { errorRate: 1 });
    try {
      expect((await testStored('jira')).body).toEqual({
        success: false,
        message: 'target connection failed with 503',
      });
    } finally {
      await sandboxControl(sb.jira.url, 'PUT', '/_sandbox/faults', { errorRate: 0 });
    }
    expect((await detail(projectId)).connections.target).toMatchObject({
      ok: false,
      message: 'target connection failed with 503',
      method: 'oauth',
      reconnectRequired: false,
    });
    const kept = await loadTarget(app.store, t.tenantId, projectId);
    expect(kept).toMatchObject({ method: 'oauth', creds, connectedBy: granted?.connectedBy });

    // An admin tries an API token instead, which Jira refuses: the grant is not replaced.
    const pasted = await app.call('POST', '/api/connectors/test', {
      token: t.admin.token,
      body: {
        type: 'jira',
        projectId,
        credentials: {
          base_url: sb.jira.url,
          email: config.jira.email,
          api_token: 'mistyped',
          project_key: config.jira.projectKey,
        },
      },
    });
    expect(pasted.body).toEqual({ success: false, message: 'target connection failed with 401' });
    expect(await loadTarget(app.store, t.tenantId, projectId)).toEqual(kept);
    expect((await testStored('jira')).body.success).toBe(true);
    expect((await detail(projectId)).connections.target).toMatchObject({ ok: true, method: 'oauth' });
  });

  it('says "Token exchange failed" and asks to reconnect when the refresh is refused; a reconnect repairs it', async () => {
    const granted = (await loadTarget(app.store, t.tenantId, projectId))?.creds;
    await control('jira', 'POST', '/revoke');
    const res = await testStored('jira');
    expect(res.body).toEqual({
      success: false,
      message:
        'Token exchange failed: the Jira (target) OAuth connection was refused; reconnect the target tracker',
    });
    const shown = (await detail(projectId)).connections.target;
    expect(shown).toMatchObject({ ok: false, reconnectRequired: true });
    expect(shown.message).toMatch(/^Token exchange failed/);
    // The refused grant stays stored, marked: what the provider refused is kept until a reconnect replaces it.
    expect(await loadTarget(app.store, t.tenantId, projectId)).toMatchObject({
      method: 'oauth',
      refused: true,
      creds: granted,
    });
    // A later test cannot revive it, and does not call the provider with the dead token again.
    const failed = (await stats('jira')).failedExchanges;
    expect((await testStored('jira')).body.success).toBe(false);
    expect((await stats('jira')).failedExchanges).toBe(failed);

    const again = await connectByOAuth(app, t.member.token, projectId, 'target', targetBody());
    expect(again.callback?.headers.location).toContain('status=connected');
    expect((await detail(projectId)).connections.target).toMatchObject({
      ok: true,
      reconnectRequired: false,
    });
    expect((await testStored('jira')).body.success).toBe(true);
  });

  it('keeps every token out of answers, stored attributes and log lines', async () => {
    const source = OAuthSourceCredentialsSchema.parse(
      (await loadSource(app.store, t.tenantId, projectId))?.creds,
    );
    const target = OAuthTargetCredentialsSchema.parse(
      (await loadTarget(app.store, t.tenantId, projectId))?.creds,
    );
    const secrets = [source.accessToken, source.refreshToken, target.accessToken, target.refreshToken];
    for (const kind of ['source', 'target'] as const) {
      const item = await app.db.send(
        new GetCommand({ TableName: app.tableName, Key: keys.connection(t.tenantId, projectId, kind) }),
      );
      const raw = JSON.stringify(item.Item);
      for (const s of secrets) expect(raw).not.toContain(s);
    }
    const lines = output.join('\n');
    expect(lines).toContain('oauth token refreshed');
    for (const s of [...secrets, 'sandbox-entra-secret', 'sandbox-atlassian-secret'])
      expect(lines).not.toContain(s);
  });
});
