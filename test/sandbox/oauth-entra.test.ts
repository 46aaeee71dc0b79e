/**
 * Microsoft Entra ID's v2.0 authorize and token endpoints on the Azure DevOps sandbox through real HTTP: consent
 * at once, PKCE, the code and refresh grants (the old refresh token stays valid), Entra's error shape and
 * AADSTS codes, ADO REST with the Bearer token, and the /_sandbox/ado/oauth controls.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

const CLIENT_ID = 'sandbox-entra-client';
const CLIENT_SECRET = 'sandbox-entra-secret';
const TENANT = 'sandbox-tenant';
const REDIRECT = 'http://127.0.0.1:9/oauth/entra/callback';
const ADO_SCOPE = '499b84ac-1321-427f-aa17-267ca6975798/.default offline_access';
const VERIFIER = 'a-long-enough-code-verifier-with-43-or-more-characters-0123456789';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 50, seed: 3 });
});
afterAll(() => ado.close());
beforeEach(async () => {
  await fetch(`${ado.url}/_sandbox/reset`, { method: 'POST' });
});

// biome-ignore lint/suspicious/noExplicitAny: tests read bodies of many shapes
type Json = any;

async function call(
  method: string,
  path: string,
  opts: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Json; headers: Headers; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  }
  const res = await fetch(`${ado.url}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

const authorizeUrl = (overrides: Record<string, string | null> = {}, tenant = TENANT) => {
  const params: Record<string, string | null> = {
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: REDIRECT,
    response_mode: 'query',
    scope: ADO_SCOPE,
    state: 'entra-state',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) q.set(k, v);
  return `/${tenant}/oauth2/v2.0/authorize?${q}`;
};

async function authorize(overrides: Record<string, string | null> = {}, tenant = TENANT): Promise<URL> {
  const res = await call('GET', authorizeUrl(overrides, tenant));
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

async function codeFor(overrides: Record<string, string | null> = {}): Promise<string> {
  const code = (await authorize(overrides)).searchParams.get('code');
  expect(code).toBeTruthy();
  return code ?? '';
}

const token = (form: Record<string, string>, tenant = TENANT) =>
  call('POST', `/${tenant}/oauth2/v2.0/token`, {
    form: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, ...form },
  });

const exchange = (code: string, extra: Record<string, string> = {}) =>
  token({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: VERIFIER,
    scope: ADO_SCOPE,
    ...extra,
  });

const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  token({ grant_type: 'refresh_token', refresh_token: refreshToken, scope: ADO_SCOPE, ...extra });

async function connect(): Promise<Json> {
  const res = await exchange(await codeFor());
  expect(res.status).toBe(200);
  return res.body;
}

/** GET the project's work item types (an ADO REST call) with these credentials. */
const workItemTypes = (authorization: string | null) =>
  ado.call('wit/workitemtypes', {
    pat: null,
    headers: authorization ? { Authorization: authorization } : {},
  });
const stats = async () => (await call('GET', '/_sandbox/ado/oauth/stats')).body;

/** Entra's error shape with this AADSTS code. */
const entraError = (error: string, code: number) => ({
  error,
  error_description: expect.stringMatching(
    new RegExp(`^AADSTS${code}: .*Trace ID: .*Correlation ID: .*Timestamp: `),
  ),
  error_codes: [code],
  timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/),
  trace_id: expect.any(String),
  correlation_id: expect.any(String),
  error_uri: `https://login.microsoftonline.com/error?code=${code}`,
});

describe('Microsoft Entra ID v2.0 on the Azure DevOps sandbox', () => {
  it('authorizes at once with PKCE, exchanges the code and calls ADO REST with the Bearer token', async () => {
    const redirect = await authorize();
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
    expect(redirect.searchParams.get('state')).toBe('entra-state');
    expect(redirect.searchParams.get('session_state')).toBeTruthy();

    const res = await exchange(redirect.searchParams.get('code') ?? '');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      token_type: 'Bearer',
      scope: '499b84ac-1321-427f-aa17-267ca6975798/user_impersonation',
      expires_in: 3600,
      ext_expires_in: 3600,
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refresh_token: expect.any(String),
    });
    const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({
      aud: '499b84ac-1321-427f-aa17-267ca6975798',
      appid: CLIENT_ID,
      tid: TENANT,
    });

    const types = await workItemTypes(`Bearer ${res.body.access_token}`);
    expect(types.status).toBe(200);
    expect(((await types.json()) as { count: number }).count).toBeGreaterThan(0);
    const wiql = await ado.call('wit/wiql', {
      method: 'POST',
      pat: null,
      headers: { Authorization: `Bearer ${res.body.access_token}` },
      json: { query: 'SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project' },
    });
    expect(wiql.status).toBe(200);
    expect(await stats()).toEqual({
      authorizationCodeExchanges: 1,
      refreshExchanges: 0,
      failedExchanges: 0,
      bearerRequests: 2,
    });
  });

  it('accepts the organizations and common tenants and needs no PKCE when no challenge was sent', async () => {
    for (const tenant of ['organizations', 'common']) {
      const code = (
        await authorize({ code_challenge: null, code_challenge_method: null }, tenant)
      ).searchParams.get('code');
      const res = await token(
        { grant_type: 'authorization_code', code: code ?? '', redirect_uri: REDIRECT, scope: ADO_SCOPE },
        tenant,
      );
      expect(res.status).toBe(200);
    }
  });

  it('refuses a code_verifier that does not match the challenge', async () => {
    const code = await codeFor();
    const wrong = await exchange(code, { code_verifier: `${VERIFIER}-wrong` });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual(entraError('invalid_grant', 501481));
    const withoutVerifier = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    expect(withoutVerifier.body.error_codes).toEqual([501481]);
    expect((await exchange(code)).status).toBe(200);
  });

  it('redeems a code once, for its redirect_uri, with the right secret, from a form only', async () => {
    const wrongSecret = await exchange(await codeFor(), { client_secret: 'nope' });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body).toEqual(entraError('invalid_client', 7000215));

    const code = await codeFor();
    const mismatch = await exchange(code, { redirect_uri: 'http://127.0.0.1:9/elsewhere' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toEqual(entraError('invalid_grant', 500112));
    expect((await exchange(code)).status).toBe(200);
    const again = await exchange(code);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(entraError('invalid_grant', 54005));
    expect((await exchange('made-up')).body).toEqual(entraError('invalid_grant', 9002313));

    const json = await call('POST', `/${TENANT}/oauth2/v2.0/token`, {
      json: { grant_type: 'authorization_code', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code },
    });
    expect(json.status).toBe(400);
    expect(json.body).toEqual(entraError('invalid_request', 900144));
    expect((await token({ grant_type: 'refresh_token' })).body).toEqual(
      entraError('invalid_request', 900144),
    );
    const unknownTenant = await token({ grant_type: 'refresh_token', refresh_token: 'x' }, 'other-tenant');
    expect(unknownTenant.body).toEqual(entraError('invalid_request', 90002));
    const noSecret = await call('POST', `/${TENANT}/oauth2/v2.0/token`, {
      form: { grant_type: 'refresh_token', client_id: CLIENT_ID, refresh_token: 'x' },
    });
    expect(noSecret.status).toBe(401);
    expect(noSecret.body).toEqual(entraError('invalid_client', 7000218));
  });

  it('refuses bad authorize requests with an error page and no redirect', async () => {
    await call('PUT', '/_sandbox/ado/oauth', { json: { redirectUris: [REDIRECT] } });
    const cases: [Record<string, string | null>, string][] = [
      [{ client_id: 'someone-else' }, TENANT],
      [{ redirect_uri: 'http://127.0.0.1:9/not-registered' }, TENANT],
      [{ response_type: 'token' }, TENANT],
      [{ scope: null }, TENANT],
      [{}, 'unknown-tenant'],
    ];
    for (const [overrides, tenant] of cases) {
      const res = await call('GET', authorizeUrl(overrides, tenant));
      expect(res.status, JSON.stringify([overrides, tenant])).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.text).toMatch(/AADSTS\d+/);
    }
    expect((await authorize()).searchParams.get('code')).toBeTruthy();
  });

  it('issues a new refresh token on refresh and keeps the old one valid', async () => {
    const first = await connect();
    const second = (await refresh(first.refresh_token)).body;
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await workItemTypes(`Bearer ${second.access_token}`)).status).toBe(200);
    const third = await refresh(first.refresh_token);
    expect(third.status).toBe(200);
    expect((await refresh(second.refresh_token)).status).toBe(200);
    expect((await refresh('not-a-token')).body).toEqual(entraError('invalid_grant', 9002313));
    expect(await stats()).toMatchObject({
      authorizationCodeExchanges: 1,
      refreshExchanges: 3,
      failedExchanges: 1,
    });
  });

  it('issues no refresh token without offline_access, and no ADO access for another resource', async () => {
    const code = await codeFor({ scope: '499b84ac-1321-427f-aa17-267ca6975798/.default' });
    const res = await exchange(code, { scope: '499b84ac-1321-427f-aa17-267ca6975798/.default' });
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeUndefined();
    expect((await workItemTypes(`Bearer ${res.body.access_token}`)).status).toBe(200);

    const graphScope = 'https://graph.microsoft.com/User.Read offline_access';
    const graph = await exchange(await codeFor({ scope: graphScope }), { scope: graphScope });
    expect(graph.body.scope).toBe('https://graph.microsoft.com/User.Read');
    expect((await workItemTypes(`Bearer ${graph.body.access_token}`)).status).toBe(401);
  });

  it('fails the next exchanges on demand without consuming the refresh token', async () => {
    const tokens = await connect();
    const armed = await call('POST', '/_sandbox/ado/oauth/fail-next', { json: { grant: 'refresh_token' } });
    expect(armed.body).toEqual({ count: 1, grant: 'refresh_token' });
    const failed = await refresh(tokens.refresh_token);
    expect(failed.status).toBe(400);
    expect(failed.body).toEqual(entraError('invalid_grant', 70008));
    expect((await refresh(tokens.refresh_token)).status).toBe(200);

    await call('POST', '/_sandbox/ado/oauth/fail-next', { json: { count: 1, grant: 'authorization_code' } });
    expect((await exchange(await codeFor())).body.error).toBe('invalid_grant');
    expect(await stats()).toMatchObject({
      authorizationCodeExchanges: 1,
      refreshExchanges: 1,
      failedExchanges: 2,
    });
  });

  it('expires every access token on demand: ADO answers 401, a refresh brings a working token', async () => {
    const tokens = await connect();
    expect((await workItemTypes(`Bearer ${tokens.access_token}`)).status).toBe(200);
    expect((await call('POST', '/_sandbox/ado/oauth/expire-access-tokens')).body).toEqual({ expired: 1 });
    const refused = await workItemTypes(`Bearer ${tokens.access_token}`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/Bearer authorization_uri=/);
    expect(await refused.text()).toBe('');
    expect((await workItemTypes('Bearer made-up')).status).toBe(401);

    const renewed = await refresh(tokens.refresh_token);
    expect(renewed.status).toBe(200);
    expect((await workItemTypes(`Bearer ${renewed.body.access_token}`)).status).toBe(200);
    expect(await stats()).toMatchObject({ refreshExchanges: 1, bearerRequests: 2 });
  });

  it('revokes every token on demand: refreshes then fail with invalid_grant', async () => {
    const tokens = await connect();
    await call('POST', '/_sandbox/ado/oauth/revoke');
    expect((await workItemTypes(`Bearer ${tokens.access_token}`)).status).toBe(401);
    const res = await refresh(tokens.refresh_token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(entraError('invalid_grant', 50173));
  });

  it('sends the user back with access_denied when the decline control is on', async () => {
    await call('PUT', '/_sandbox/ado/oauth', { json: { decline: true } });
    const redirect = await authorize();
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    expect(redirect.searchParams.get('error_description')).toMatch(/^AADSTS65004/);
    expect(redirect.searchParams.get('state')).toBe('entra-state');
    expect(redirect.searchParams.get('code')).toBeNull();
  });

  it('still takes the PAT over Basic, and validates and resets the settings', async () => {
    expect((await ado.call('wit/workitemtypes')).status).toBe(200);
    expect((await workItemTypes(null)).status).toBe(401);

    expect((await call('PUT', '/_sandbox/ado/oauth', { json: { tenantId: 'not a tenant!' } })).status).toBe(
      400,
    );
    expect((await call('PUT', '/_sandbox/ado/oauth', { json: { other: 1 } })).status).toBe(400);
    const changed = await call('PUT', '/_sandbox/ado/oauth', {
      json: { tenantId: '11111111-2222-4333-8444-555555555555', accessTokenTtlSeconds: 120 },
    });
    expect(changed.body).toMatchObject({
      tenantId: '11111111-2222-4333-8444-555555555555',
      accessTokenTtlSeconds: 120,
    });
    expect((await call('GET', authorizeUrl())).status).toBe(400); // the old tenant is unknown now
    const code = (await authorize({}, '11111111-2222-4333-8444-555555555555')).searchParams.get('code') ?? '';
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER },
      '11111111-2222-4333-8444-555555555555',
    );
    expect(res.body.expires_in).toBe(120);

    await call('POST', '/_sandbox/reset');
    expect((await call('GET', '/_sandbox/ado/oauth')).body).toEqual({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUris: [],
      accessTokenTtlSeconds: 3600,
      decline: false,
      tenantId: TENANT,
    });
    expect((await workItemTypes(`Bearer ${res.body.access_token}`)).status).toBe(401);
  });
});
