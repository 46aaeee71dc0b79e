/**
 * Atlassian OAuth 2.0 (3LO) on the Jira sandbox through real HTTP: authorize (consent at once), the code and
 * refresh grants with Atlassian's rotation and errors, accessible-resources, the API gateway
 * (/ex/jira/{cloudId}/rest/...) with the Bearer token, and the /_sandbox/jira/oauth controls.
 */
import { describe, expect, it } from 'vitest';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { OAuthServer } from '../../local/sandbox/common/oauth-server.ts';
import { useJiraSandbox } from '../support/jira-sandbox.ts';

const config = sandboxConfigFromEnv({});
const CLIENT_ID = 'sandbox-atlassian-client';
const CLIENT_SECRET = 'sandbox-atlassian-secret';
const REDIRECT = 'http://127.0.0.1:9/oauth/callback';
const SCOPE = 'read:jira-work write:jira-work read:jira-user offline_access';
const BASIC = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
const UNAUTHENTICATED = {
  errorMessages: ['Client must be authenticated to access this resource.'],
  errors: {},
};
let base = '';

useJiraSandbox(config, (url) => {
  base = url;
});

interface Tokens {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  token_type: string;
  scope: string;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read bodies of many shapes
type Json = any;

async function call(
  method: string,
  path: string,
  opts: {
    json?: unknown;
    form?: Record<string, string>;
    auth?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; body: Json; headers: Headers; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth) headers.Authorization = opts.auth;
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  }
  const res = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

const authorizeUrl = (overrides: Record<string, string | null> = {}) => {
  const params: Record<string, string | null> = {
    audience: 'api.atlassian.com',
    client_id: CLIENT_ID,
    scope: SCOPE,
    redirect_uri: REDIRECT,
    state: 'xyz-state',
    response_type: 'code',
    prompt: 'consent',
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) q.set(k, v);
  return `/authorize?${q}`;
};

async function authorize(overrides: Record<string, string | null> = {}): Promise<URL> {
  const res = await call('GET', authorizeUrl(overrides));
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

async function codeFor(overrides: Record<string, string | null> = {}): Promise<string> {
  const code = (await authorize(overrides)).searchParams.get('code');
  expect(code).toBeTruthy();
  return code ?? '';
}

const exchange = (code: string, extra: Record<string, string> = {}) =>
  call('POST', '/oauth/token', {
    json: {
      grant_type: 'authorization_code',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      code,
      redirect_uri: REDIRECT,
      ...extra,
    },
  });

const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  call('POST', '/oauth/token', {
    json: {
      grant_type: 'refresh_token',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      refresh_token: refreshToken,
      ...extra,
    },
  });

async function connect(scope = SCOPE): Promise<Tokens> {
  const res = await exchange(await codeFor({ scope }));
  expect(res.status).toBe(200);
  return res.body as Tokens;
}

const cloudId = async (): Promise<string> => (await call('GET', '/_sandbox/jira/oauth')).body.cloudId;
const myself = async (token: string, id?: string) =>
  call('GET', `/ex/jira/${id ?? (await cloudId())}/rest/api/3/myself`, { auth: `Bearer ${token}` });
const stats = async () => (await call('GET', '/_sandbox/jira/oauth/stats')).body;
const INVALID_REFRESH = { error: 'invalid_grant', error_description: 'Unknown or invalid refresh token.' };

describe('Atlassian OAuth 2.0 (3LO) on the Jira sandbox', () => {
  it('authorizes at once, exchanges the code, lists the site and serves Jira through the gateway', async () => {
    const redirect = await authorize();
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
    expect(redirect.searchParams.get('state')).toBe('xyz-state');
    const code = redirect.searchParams.get('code') ?? '';

    const res = await exchange(code);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refresh_token: expect.any(String),
      expires_in: 3600,
      scope: SCOPE,
      token_type: 'Bearer',
    });
    const tokens = res.body as Tokens;
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1] ?? '', 'base64url').toString());
    expect(claims).toMatchObject({
      iss: 'https://auth.atlassian.com',
      aud: 'api.atlassian.com',
      scope: SCOPE,
    });
    expect(claims.exp - claims.iat).toBe(3600);

    const resources = await call('GET', '/oauth/token/accessible-resources', {
      auth: `Bearer ${tokens.access_token}`,
    });
    expect(resources.status).toBe(200);
    expect(resources.body).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/),
        url: base,
        name: expect.any(String),
        scopes: ['read:jira-work', 'write:jira-work', 'read:jira-user'],
        avatarUrl: expect.stringMatching(/^https:\/\//),
      },
    ]);
    const id = resources.body[0].id as string;
    expect(id).toBe(await cloudId());

    // The consenting account is the sandbox's service account; writes go through the gateway too.
    const me = await myself(tokens.access_token, id);
    expect(me.status).toBe(200);
    expect(me.body.emailAddress).toBe(config.jira.email);
    const created = await call('POST', `/ex/jira/${id}/rest/api/3/issue`, {
      auth: `Bearer ${tokens.access_token}`,
      json: {
        fields: {
          project: { key: config.jira.projectKey },
          issuetype: { name: 'Task' },
          summary: 'via OAuth',
        },
      },
    });
    expect(created.status).toBe(201);
    const read = await call('GET', `/rest/api/3/issue/${created.body.key}?fields=summary,reporter`, {
      auth: BASIC,
    });
    expect(read.body.fields.summary).toBe('via OAuth');
    expect(read.body.fields.reporter.emailAddress ?? read.body.fields.reporter.accountId).toBeTruthy();

    expect(await stats()).toEqual({
      authorizationCodeExchanges: 1,
      refreshExchanges: 0,
      failedExchanges: 0,
      bearerRequests: 3,
    });
    // The request log keeps the gateway path the client used.
    const log = (await call('GET', '/_sandbox/requests')).body as { path: string; status: number }[];
    expect(log.some((e) => e.path === `/ex/jira/${id}/rest/api/3/myself` && e.status === 200)).toBe(true);
  });

  it('takes form-encoded token requests and issues no refresh token without offline_access', async () => {
    const code = await codeFor({ scope: 'read:jira-work' });
    const res = await call('POST', '/oauth/token', {
      form: {
        grant_type: 'authorization_code',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        code,
        redirect_uri: REDIRECT,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeUndefined();
    expect(res.body.scope).toBe('read:jira-work');
    expect((await myself(res.body.access_token)).status).toBe(200);
  });

  it('redeems a code once, for the redirect_uri it was issued for, and only with the right secret', async () => {
    const wrongSecret = await exchange(await codeFor(), { client_secret: 'nope' });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body).toEqual({ error: 'access_denied', error_description: 'Unauthorized' });

    const code = await codeFor();
    const mismatch = await exchange(code, { redirect_uri: 'http://127.0.0.1:9/elsewhere' });
    expect(mismatch.status).toBe(403);
    expect(mismatch.body).toMatchObject({ error: 'invalid_grant' });

    expect((await exchange(code)).status).toBe(200);
    const again = await exchange(code);
    expect(again.status).toBe(403);
    expect(again.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid authorization code' });
    expect((await exchange('made-up')).status).toBe(403);

    const unsupported = await call('POST', '/oauth/token', {
      json: { grant_type: 'password', client_id: CLIENT_ID, client_secret: CLIENT_SECRET },
    });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error).toBe('unsupported_grant_type');
    expect((await stats()).failedExchanges).toBe(5);
  });

  it('refuses bad authorize requests with an error page and no redirect', async () => {
    await call('PUT', '/_sandbox/jira/oauth', { json: { redirectUris: [REDIRECT] } });
    const cases: Record<string, string | null>[] = [
      { client_id: 'someone-else' },
      { redirect_uri: 'http://127.0.0.1:9/not-registered' },
      { redirect_uri: 'ftp://127.0.0.1/cb' },
      { response_type: 'token' },
      { response_type: null },
      { audience: 'example.com' },
      { scope: null },
    ];
    for (const overrides of cases) {
      const res = await call('GET', authorizeUrl(overrides));
      expect(res.status, JSON.stringify(overrides)).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
    expect((await authorize()).searchParams.get('code')).toBeTruthy();
  });

  it('rotates the refresh token: the new pair works, the exchanged refresh token is refused', async () => {
    const first = await connect();
    const res = await refresh(first.refresh_token ?? '');
    expect(res.status).toBe(200);
    const second = res.body as Tokens;
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.scope).toBe(SCOPE);
    expect((await myself(second.access_token)).status).toBe(200);

    const reused = await refresh(first.refresh_token ?? '');
    expect(reused.status).toBe(403);
    expect(reused.body).toEqual(INVALID_REFRESH);
    expect((await refresh(second.refresh_token ?? '')).status).toBe(200);
    expect((await refresh('not-a-token')).body).toEqual(INVALID_REFRESH);
    expect((await refresh(second.refresh_token ?? '', { client_secret: 'nope' })).status).toBe(401);
    expect(await stats()).toMatchObject({
      authorizationCodeExchanges: 1,
      refreshExchanges: 2,
      failedExchanges: 3,
    });
  });

  it('fails the next exchanges on demand without consuming the refresh token', async () => {
    const tokens = await connect();
    const armed = await call('POST', '/_sandbox/jira/oauth/fail-next', {
      json: { count: 2, grant: 'refresh_token' },
    });
    expect(armed.body).toEqual({ count: 2, grant: 'refresh_token' });
    // A code exchange is not the armed grant.
    expect((await exchange(await codeFor())).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await refresh(tokens.refresh_token ?? '');
      expect(res.status).toBe(403);
      expect(res.body).toEqual(INVALID_REFRESH);
    }
    expect((await refresh(tokens.refresh_token ?? '')).status).toBe(200);
    expect(await stats()).toMatchObject({
      authorizationCodeExchanges: 2,
      refreshExchanges: 1,
      failedExchanges: 2,
    });

    await call('POST', '/_sandbox/jira/oauth/fail-next', { json: {} });
    const code = await exchange(await codeFor());
    expect(code.status).toBe(403);
    expect(code.body.error).toBe('invalid_grant');
  });

  it('expires every access token on demand; a refresh brings a working one', async () => {
    const tokens = await connect();
    expect((await myself(tokens.access_token)).status).toBe(200);
    const expired = await call('POST', '/_sandbox/jira/oauth/expire-access-tokens');
    expect(expired.body).toEqual({ expired: 1 });

    const refused = await myself(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(UNAUTHENTICATED);
    const resources = await call('GET', '/oauth/token/accessible-resources', {
      auth: `Bearer ${tokens.access_token}`,
    });
    expect(resources.status).toBe(401);

    const renewed = await refresh(tokens.refresh_token ?? '');
    expect(renewed.status).toBe(200);
    expect((await myself(renewed.body.access_token)).status).toBe(200);
    expect(await stats()).toMatchObject({ refreshExchanges: 1, bearerRequests: 2 });
  });

  it('revokes every token on demand (the user removed the app)', async () => {
    const tokens = await connect();
    expect(await call('POST', '/_sandbox/jira/oauth/revoke').then((r) => r.body)).toEqual({
      revoked: { accessTokens: 1, refreshTokens: 1 },
    });
    expect((await myself(tokens.access_token)).status).toBe(401);
    const res = await refresh(tokens.refresh_token ?? '');
    expect(res.status).toBe(403);
    expect(res.body).toEqual(INVALID_REFRESH);
    // Consenting again works.
    expect((await myself((await connect()).access_token)).status).toBe(200);
  });

  it('sends the user back with access_denied when the decline control is on', async () => {
    const settings = await call('PUT', '/_sandbox/jira/oauth', { json: { decline: true } });
    expect(settings.body).toMatchObject({ decline: true, clientId: CLIENT_ID });
    const redirect = await authorize();
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    expect(redirect.searchParams.get('error_description')).toBeTruthy();
    expect(redirect.searchParams.get('state')).toBe('xyz-state');
    expect(redirect.searchParams.get('code')).toBeNull();
  });

  it('keeps the gateway for Bearer tokens and the site for Basic, and refuses unknown sites', async () => {
    const tokens = await connect();
    const id = await cloudId();
    const unknown = await myself(tokens.access_token, '00000000-0000-4000-a000-000000000000');
    expect(unknown.status).toBe(404);
    expect((await call('GET', `/ex/jira/${id}/rest/api/3/myself`)).body).toEqual(UNAUTHENTICATED);
    expect((await call('GET', `/ex/jira/${id}/rest/api/3/myself`, { auth: BASIC })).status).toBe(401);
    expect((await call('GET', `/ex/jira/${id}/rest/api/3/myself`, { auth: 'Bearer nope' })).status).toBe(401);
    // A 3LO token does not work on the site's own URL; Basic still does.
    expect((await call('GET', '/rest/api/3/myself', { auth: `Bearer ${tokens.access_token}` })).status).toBe(
      401,
    );
    const basic = await call('GET', '/rest/api/3/myself', { auth: BASIC });
    expect(basic.status).toBe(200);
    expect(basic.body.emailAddress).toBe(config.jira.email);
  });

  it('follows the attachment content redirect through the gateway', async () => {
    const { access_token: token } = await connect();
    const id = await cloudId();
    const auth = `Bearer ${token}`;
    const created = await call('POST', `/ex/jira/${id}/rest/api/3/issue`, {
      auth,
      json: {
        fields: { project: { key: config.jira.projectKey }, issuetype: { name: 'Task' }, summary: 'files' },
      },
    });
    const form = new FormData();
    form.append('file', new Blob(['hello through the gateway']), 'hello.txt');
    const upload = await fetch(`${base}/ex/jira/${id}/rest/api/3/issue/${created.body.key}/attachments`, {
      method: 'POST',
      headers: { Authorization: auth, 'X-Atlassian-Token': 'no-check' },
      body: form,
    });
    expect(upload.status).toBe(200);
    const [attachment] = (await upload.json()) as { id: string }[];
    const content = await call('GET', `/ex/jira/${id}/rest/api/3/attachment/content/${attachment?.id}`, {
      auth,
    });
    expect(content.status).toBe(303);
    const location = content.headers.get('location') ?? '';
    expect(location.startsWith(base)).toBe(true);
    const bytes = await fetch(location);
    expect(bytes.status).toBe(200);
    expect(await bytes.text()).toBe('hello through the gateway');
  });

  it('lists the sites the control names instead of its own (an account that reaches other sites)', async () => {
    const tokens = await connect();
    const elsewhere = {
      id: 'f2b1c0de-0000-4000-a000-000000000001',
      url: 'https://member.atlassian.net',
      name: 'member',
    };
    const set = await call('PUT', '/_sandbox/jira/oauth', { json: { sites: [elsewhere] } });
    expect(set.body.sites).toEqual([elsewhere]);
    const resources = await call('GET', '/oauth/token/accessible-resources', {
      auth: `Bearer ${tokens.access_token}`,
    });
    expect(resources.body).toEqual([
      {
        ...elsewhere,
        scopes: ['read:jira-work', 'write:jira-work', 'read:jira-user'],
        avatarUrl: expect.any(String),
      },
    ]);
    expect((await call('PUT', '/_sandbox/jira/oauth', { json: { sites: [{ url: 'nope' }] } })).status).toBe(
      400,
    );
    await call('POST', '/_sandbox/reset');
    expect((await call('GET', '/_sandbox/jira/oauth')).body.sites).toBeNull();
  });

  it('validates and resets the settings', async () => {
    const bad = await call('PUT', '/_sandbox/jira/oauth', {
      json: { accessTokenTtlSeconds: -1, nope: true },
    });
    expect(bad.status).toBe(400);
    const changed = await call('PUT', '/_sandbox/jira/oauth', {
      json: { accessTokenTtlSeconds: 60, clientSecret: 'rotated-secret' },
    });
    expect(changed.body).toMatchObject({ accessTokenTtlSeconds: 60, clientSecret: 'rotated-secret' });
    const code = await codeFor();
    const res = await exchange(code, { client_secret: 'rotated-secret' });
    expect(res.body.expires_in).toBe(60);
    await call('POST', '/_sandbox/reset');
    expect((await call('GET', '/_sandbox/jira/oauth')).body).toEqual({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUris: [],
      accessTokenTtlSeconds: 3600,
      decline: false,
      cloudId: expect.any(String),
      sites: null,
    });
    // A reset forgets every token.
    expect((await myself(res.body.access_token)).status).toBe(401);
  });
});

describe('OAuthServer on its clock', () => {
  it('lets codes live 10 minutes and access tokens their lifetime', () => {
    let now = 1_000_000;
    const server = new OAuthServer({
      defaults: {
        clientId: 'c',
        clientSecret: 's',
        redirectUris: [],
        accessTokenTtlSeconds: 60,
        decline: false,
      },
      now: () => now,
      rotation: 'invalidate-old',
      claims: () => ({}),
    });
    const grant = { clientId: 'c', subject: 'u', scope: 'offline_access', redirectUri: 'http://x/cb' };
    const late = server.issueCode(grant);
    now += 600_000;
    expect(server.redeemCode({ clientId: 'c', code: late, redirectUri: 'http://x/cb' })).toEqual({
      ok: false,
      failure: 'expired_code',
    });
    const result = server.redeemCode({
      clientId: 'c',
      code: server.issueCode(grant),
      redirectUri: 'http://x/cb',
    });
    if (!result.ok) throw new Error(result.failure);
    const header = `Bearer ${result.tokens.accessToken}`;
    now += 59_999;
    expect(server.authenticate(header)).toBeDefined();
    now += 1;
    expect(server.authenticate(header)).toBeUndefined();
  });
});
