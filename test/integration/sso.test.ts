/**
 * Enterprise single sign-on through the real HTTP path (local gateway, real handlers, DynamoDB Local) against
 * a real OpenID Provider (`oidc-provider`, test/support/oidc-provider.ts). The browser is simulated: redirects
 * are followed by hand and cookies carried per host.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clock } from '../../functions/platform/clock.ts';
import { hashPassword } from '../../functions/platform/passwords.ts';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { captureOutput } from '../support/capture-output.ts';
import { claimsOf } from '../support/http.ts';
import { Browser, startOidcProvider, type TestProvider } from '../support/oidc-provider.ts';

const APP_URL = 'https://app.example.test';
const CALLBACK = '/api/auth/sso/callback';

let app: TestApp;
let idp: TestProvider;
let t: TestTenant;
let other: TestTenant;
const logged: string[] = [];
/** Every state and code the flows saw: none may reach a log line. */
const secretsSeen: string[] = [];

const config = () => ({
  slug: 'acme',
  issuer: idp.issuer,
  clientId: idp.clientId,
  allowedDomains: ['acme.test', 'Example.com'],
  defaultRole: 'member',
});

beforeAll(async () => {
  captureOutput(logged);
  app = await startTestApp({
    APP_URL,
    AUTH_RATE_LIMIT_PER_MINUTE: '10000',
    POWERTOOLS_LOG_LEVEL: 'DEBUG',
  });
  idp = await startOidcProvider({ redirectUri: `${app.url}${CALLBACK}` });
  [t, other] = await Promise.all([app.createTenant('Acme'), app.createTenant('Other')]);
  const res = await app.call('PUT', '/api/sso', {
    token: t.owner.token,
    body: { ...config(), clientSecret: idp.clientSecret },
  });
  expect(res.status, res.text).toBe(200);
});
afterAll(async () => {
  await app?.close();
  await idp?.close();
  vi.restoreAllMocks();
});

/** A new IdP account; `nextLogin` set to it. */
function account(sub: string, email: string, verified = true): string {
  idp.accounts.set(sub, { email, email_verified: verified });
  idp.nextLogin = sub;
  return sub;
}

/** Start at the app, through the IdP, up to (not into) the app's callback: answers the callback URL. */
async function toCallback(
  browser: Browser,
  opts: { slug?: string; returnTo?: string } = {},
): Promise<string> {
  const query = opts.returnTo ? `?returnTo=${encodeURIComponent(opts.returnTo)}` : '';
  const start = await browser.get(`${app.url}/api/auth/sso/${opts.slug ?? 'acme'}/start${query}`);
  expect(start.status, start.text).toBe(302);
  let location = start.location as string;
  for (let hop = 0; hop < 10 && !location.startsWith(`${app.url}${CALLBACK}`); hop++) {
    const res = await browser.get(location);
    expect([302, 303], `${location}: ${res.text}`).toContain(res.status);
    location = res.location as string;
  }
  expect(location.startsWith(`${app.url}${CALLBACK}`)).toBe(true);
  const params = new URL(location).searchParams;
  for (const name of ['state', 'code']) {
    const value = params.get(name);
    if (value) secretsSeen.push(value);
  }
  return location;
}

async function signIn(opts: { returnTo?: string } = {}) {
  const browser = new Browser();
  const callback = await toCallback(browser, opts);
  return { browser, callback, res: await browser.get(callback) };
}

const refreshOf = (setCookies: string[]) =>
  setCookies
    .find((c) => c.startsWith('refresh_token='))
    ?.slice('refresh_token='.length)
    .split(';')[0];

async function families(tenantId: string): Promise<number> {
  const out = await app.db.send(
    new QueryCommand({
      TableName: app.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': `TENANT#${tenantId}`, ':sk': 'REFRESH_FAMILY#' },
    }),
  );
  return out.Count ?? 0;
}

const userEmails = async (tenantId: string) => (await app.store.users.list(tenantId)).map((u) => u.email);

/** A failed sign-in: the answer, and proof that nothing was made (no user, no token family, no cookie). */
async function expectRefused(
  run: () => Promise<{ status: number; text: string; setCookies: string[] }>,
  status: number,
  code: string,
) {
  const before = { families: await families(t.tenantId), users: await userEmails(t.tenantId) };
  const res = await run();
  expect(res.status, res.text).toBe(status);
  const body = JSON.parse(res.text);
  expect(body).toMatchObject({ statusCode: status, code });
  expect(res.setCookies.filter((c) => c.startsWith('refresh_token='))).toEqual([]);
  expect(await families(t.tenantId)).toBe(before.families);
  expect(await userEmails(t.tenantId)).toEqual(before.users);
  return body as { message: string | string[] };
}

describe('configuration (owner only)', () => {
  it('GET shows the configuration without the secret, with the redirect URI and the start URL', async () => {
    const res = await app.call('GET', '/api/sso', { token: t.owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      slug: 'acme',
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecretSet: true,
      allowedDomains: ['acme.test', 'example.com'],
      defaultRole: 'member',
      enabled: true,
      redirectUri: `${app.url}${CALLBACK}`,
      startUrl: `${app.url}/api/auth/sso/acme/start`,
    });
    expect(res.text).not.toContain(idp.clientSecret);
    expect(res.body).not.toHaveProperty('clientSecret');
    // Stored sealed: the plain secret is nowhere in the table item either.
    const stored = await app.db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'pk = :pk AND sk = :sk',
        ExpressionAttributeValues: { ':pk': `TENANT#${t.tenantId}`, ':sk': 'SSO' },
      }),
    );
    expect(JSON.stringify(stored.Items)).not.toContain(idp.clientSecret);
  });

  it('refuses admins and members (403) and answers 404 SSO_NOT_CONFIGURED to a tenant without one', async () => {
    for (const role of ['admin', 'member'] as const) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const body = method === 'PUT' ? config() : undefined;
        const res = await app.call(method, '/api/sso', { token: t[role].token, body });
        expect(res.status, `${role} ${method}`).toBe(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
    }
    const none = await app.call('GET', '/api/sso', { token: other.owner.token });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('SSO_NOT_CONFIGURED');
  });

  it('needs the client secret on the first save and keeps it when a later save omits it', async () => {
    const first = await app.call('PUT', '/api/sso', {
      token: other.owner.token,
      body: { ...config(), slug: 'other-co' },
    });
    expect(first.status).toBe(400);
    expect(first.body.message).toContain('clientSecret is required when single sign-on is first configured');
    const again = await app.call('PUT', '/api/sso', { token: t.owner.token, body: config() });
    expect(again.status, again.text).toBe(200);
    expect(again.body.clientSecretSet).toBe(true);
  });

  it('needs the client secret again when the issuer or the client id changes (400 naming clientSecret)', async () => {
    const secretAgain = {
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
      message: [
        'clientSecret is required when the issuer or the client id changes: the stored secret belongs to the previous client',
      ],
    };
    for (const change of [{ issuer: 'https://idp.elsewhere.example' }, { clientId: 'another-client' }]) {
      const res = await app.call('PUT', '/api/sso', {
        token: t.owner.token,
        body: { ...config(), ...change },
      });
      expect({ status: res.status, body: res.body }, JSON.stringify(change)).toEqual({
        status: 400,
        body: secretAgain,
      });
    }
    // Nothing was changed; with the secret re-entered the same change is saved.
    expect((await app.call('GET', '/api/sso', { token: t.owner.token })).body).toMatchObject({
      issuer: idp.issuer,
      clientId: idp.clientId,
    });
    const withSecret = await app.call('PUT', '/api/sso', {
      token: t.owner.token,
      body: { ...config(), clientId: 'another-client', clientSecret: 'its-secret' },
    });
    expect(withSecret.status, withSecret.text).toBe(200);
    expect(withSecret.body).toMatchObject({ clientId: 'another-client', clientSecretSet: true });
    const back = await app.call('PUT', '/api/sso', {
      token: t.owner.token,
      body: { ...config(), clientSecret: idp.clientSecret },
    });
    expect(back.status, back.text).toBe(200);
  });

  it('refuses an unreachable issuer and a discovery document naming another issuer (400)', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    // Registered as the sandboxes' ports are: the connection is really made, and refused.
    allowLoopbackPorts(port);
    const unreachable = await app.call('PUT', '/api/sso', {
      token: other.owner.token,
      body: { ...config(), slug: 'other-co', clientSecret: 's', issuer: `http://127.0.0.1:${port}` },
    });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.code).toBe('VALIDATION_FAILED');
    // One answer whatever listens there (issue 17): no socket error, no status.
    expect(unreachable.body.message).toEqual([
      `issuer: no usable discovery document at http://127.0.0.1:${port}/.well-known/openid-configuration (it must answer 200 with a JSON object)`,
    ]);

    const liar: Server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({
          issuer: 'https://idp.elsewhere.example',
          authorization_endpoint: 'https://idp.elsewhere.example/auth',
          token_endpoint: 'https://idp.elsewhere.example/token',
          jwks_uri: 'https://idp.elsewhere.example/jwks',
        }),
      );
    });
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
    allowLoopbackPorts((liar.address() as AddressInfo).port);
    const liarUrl = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
    try {
      const mismatch = await app.call('PUT', '/api/sso', {
        token: other.owner.token,
        body: { ...config(), slug: 'other-co', clientSecret: 's', issuer: liarUrl },
      });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.message[0]).toContain('names the issuer "https://idp.elsewhere.example"');
    } finally {
      await new Promise<void>((r) => liar.close(() => r()));
    }
    // A non-https issuer off the loopback, and a bad slug, are shape errors.
    const shape = await app.call('PUT', '/api/sso', {
      token: other.owner.token,
      body: { ...config(), slug: 'A!', clientSecret: 's', issuer: 'http://idp.example.com' },
    });
    expect(shape.status).toBe(400);
    expect(shape.body.message.join(' ')).toMatch(/slug must be 3-63 lower-case/);
    expect(shape.body.message.join(' ')).toMatch(/issuer: must be an https URL/);
    expect((await app.call('GET', '/api/sso', { token: other.owner.token })).status).toBe(404);
  });

  it("refuses another tenant's slug (409); changing a slug releases the old one; DELETE frees it", async () => {
    const taken = await app.call('PUT', '/api/sso', {
      token: other.owner.token,
      body: { ...config(), clientSecret: 'other-secret' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('SSO_SLUG_TAKEN');

    const made = await app.call('PUT', '/api/sso', {
      token: other.owner.token,
      body: { ...config(), slug: 'other-one', clientSecret: 'other-secret' },
    });
    expect(made.status, made.text).toBe(200);
    const renamed = await app.call('PUT', '/api/sso', {
      token: other.owner.token,
      body: { ...config(), slug: 'other-two' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.startUrl).toBe(`${app.url}/api/auth/sso/other-two/start`);
    // other-one is free again: tenant A may take it, then give it back.
    const claim = await app.call('PUT', '/api/sso', {
      token: t.owner.token,
      body: { ...config(), slug: 'other-one' },
    });
    expect(claim.status).toBe(200);
    expect((await app.call('PUT', '/api/sso', { token: t.owner.token, body: config() })).status).toBe(200);

    const deleted = await app.call('DELETE', '/api/sso', { token: other.owner.token });
    expect(deleted.status).toBe(204);
    expect((await app.call('GET', '/api/sso', { token: other.owner.token })).status).toBe(404);
    expect((await app.call('DELETE', '/api/sso', { token: other.owner.token })).status).toBe(404);
    const start = await new Browser().get(`${app.url}/api/auth/sso/other-two/start`);
    expect(start.status).toBe(404);
  });
});

describe('start', () => {
  it('redirects to the authorization endpoint with PKCE and sets the browser-binding cookie', async () => {
    const browser = new Browser();
    const res = await browser.get(`${app.url}/api/auth/sso/acme/start`);
    expect(res.status).toBe(302);
    const url = new URL(res.location as string);
    expect(url.origin).toBe(idp.issuer);
    const p = url.searchParams;
    expect(Object.fromEntries(p)).toMatchObject({
      response_type: 'code',
      client_id: idp.clientId,
      redirect_uri: `${app.url}${CALLBACK}`,
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(p.get('state')).toMatch(/^[\w-]{43}$/);
    expect(p.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(p.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(res.setCookies).toHaveLength(1);
    expect(res.setCookies[0]).toMatch(
      /^sso_binding=[\w-]{43}; Path=\/api\/auth\/sso; Max-Age=600; HttpOnly; Secure; SameSite=Lax$/,
    );
  });

  it('answers an unknown slug and a disabled configuration alike (404)', async () => {
    const unknown = await new Browser().get(`${app.url}/api/auth/sso/no-such-tenant/start`);
    await app.call('PUT', '/api/sso', { token: t.owner.token, body: { ...config(), enabled: false } });
    const disabled = await new Browser().get(`${app.url}/api/auth/sso/acme/start`);
    await app.call('PUT', '/api/sso', { token: t.owner.token, body: config() });
    expect(unknown.status).toBe(404);
    expect(disabled.status).toBe(404);
    expect(JSON.parse(unknown.text).code).toBe('SSO_NOT_CONFIGURED');
    expect(JSON.parse(disabled.text).code).toBe('SSO_NOT_CONFIGURED');
    expect(unknown.setCookies).toEqual([]);
  });

  it('refuses a returnTo off the web app (open-redirect guard)', async () => {
    for (const bad of [
      'https://evil.example/x',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
      'https://app.example.test.evil.example/',
    ]) {
      const res = await new Browser().get(
        `${app.url}/api/auth/sso/acme/start?returnTo=${encodeURIComponent(bad)}`,
      );
      expect(res.status, bad).toBe(400);
      expect(JSON.parse(res.text).code).toBe('VALIDATION_FAILED');
      expect(res.setCookies).toEqual([]);
    }
  });
});

describe('sign-in', () => {
  it('creates a new user with the default role in the tenant; the refresh cookie works', async () => {
    account('alice-sub', 'Alice@Acme.test');
    const { res } = await signIn({ returnTo: '/projects?tab=1' });
    expect(res.status, res.text).toBe(302);
    expect(res.location).toBe(`${APP_URL}/projects?tab=1`);
    const refreshCookie = res.setCookies.find((c) => c.startsWith('refresh_token='));
    // Exactly the cookie password login sets.
    const login = await app.login(t.member.email);
    const loginCookie = login.setCookies.find((c) => c.startsWith('refresh_token=')) as string;
    expect(refreshCookie?.replace(/^refresh_token=[^;]+/, '')).toBe(
      loginCookie.replace(/^refresh_token=[^;]+/, ''),
    );
    expect(res.setCookies).toContain(
      'sso_binding=; Path=/api/auth/sso; Max-Age=0; HttpOnly; Secure; SameSite=Lax',
    );

    const users = await app.store.users.list(t.tenantId);
    const alice = users.find((u) => u.email === 'alice@acme.test');
    expect(alice).toMatchObject({ role: 'member', sso: { issuer: idp.issuer, subject: 'alice-sub' } });
    expect(alice?.passwordHash).toBeUndefined();

    const refreshed = await app.call('POST', '/api/auth/refresh', {
      cookie: `refresh_token=${refreshOf(res.setCookies)}`,
    });
    expect(refreshed.status).toBe(200);
    expect(claimsOf(refreshed.body.accessToken)).toMatchObject({
      sub: alice?.id,
      email: 'alice@acme.test',
      tenantId: t.tenantId,
      role: 'member',
    });
    const projects = await app.call('GET', '/api/projects', { token: refreshed.body.accessToken });
    expect(projects.status).toBe(200);

    // No password: password login fails as for a wrong one.
    const pw = await app.login('alice@acme.test', 'any-password-at-all');
    expect(pw.status).toBe(401);
    expect(pw.body.code).toBe('INVALID_CREDENTIALS');
  });

  it('signs an existing user of the tenant in with its own role, and again by its subject', async () => {
    account('admin-sub', t.admin.email.toUpperCase());
    const { res } = await signIn();
    expect(res.status, res.text).toBe(302);
    expect(res.location).toBe(`${APP_URL}/`);
    const refreshed = await app.call('POST', '/api/auth/refresh', {
      cookie: `refresh_token=${refreshOf(res.setCookies)}`,
    });
    expect(claimsOf(refreshed.body.accessToken)).toMatchObject({
      sub: t.admin.id,
      tenantId: t.tenantId,
      role: 'admin',
    });
    // The IdP changes the e-mail (same subject): the same user signs in, no new one is made.
    account('admin-sub', 'renamed-admin@acme.test');
    const before = await userEmails(t.tenantId);
    const again = await signIn();
    expect(again.res.status, again.res.text).toBe(302);
    const claims = claimsOf(
      (
        await app.call('POST', '/api/auth/refresh', {
          cookie: `refresh_token=${refreshOf(again.res.setCookies)}`,
        })
      ).body.accessToken,
    );
    expect(claims.sub).toBe(t.admin.id);
    expect(await userEmails(t.tenantId)).toEqual(before);
    // Another subject claiming the linked user's e-mail is refused.
    account('impostor-sub', t.admin.email);
    await expectRefused(async () => (await signIn()).res, 403, 'SSO_ACCOUNT_NOT_ALLOWED');
  });

  it("makes a user of this tenant for an address another tenant also has, leaving that tenant's user alone", async () => {
    account('other-sub', other.member.email);
    const { res } = await signIn();
    expect(res.status).toBe(302);
    expect(await userEmails(t.tenantId)).toContain(other.member.email);
    // The other tenant's user is neither claimed, linked nor signed out, and still signs in by password.
    expect(await families(other.tenantId)).toBe(3);
    const login = await app.login(other.member.email);
    expect(login.status).toBe(200);
    expect(claimsOf(login.body.accessToken).tenantId).toBe(other.tenantId);
  });

  it('accepts a pending invitation of the address: the invited role, and the invitation is spent', async () => {
    const invited = await app.call('POST', '/api/team/members', {
      token: t.owner.token,
      body: { email: 'ivy@acme.test', role: 'admin' },
    });
    expect(invited.status).toBe(202);
    account('ivy-sub', 'ivy@acme.test');
    const { res } = await signIn();
    expect(res.status).toBe(302);
    const ivy = (await app.store.users.list(t.tenantId)).find((u) => u.email === 'ivy@acme.test');
    expect(ivy?.role).toBe('admin');
    expect(await app.store.invitations.list(t.tenantId)).not.toContainEqual(
      expect.objectContaining({ email: 'ivy@acme.test' }),
    );
  });

  it('takes an invitation whose inviter left since as none: a member, and the invitation spent', async () => {
    const made = await app.store.users.create({
      tenantId: t.tenantId,
      email: 'short-stay-admin@acme.test',
      role: 'admin',
      passwordHash: await hashPassword('short-stay-password'),
      ifRemoved: 'clear',
    });
    if (!made.ok) throw new Error(made.reason);
    const token = (await app.login('short-stay-admin@acme.test', 'short-stay-password')).body.accessToken;
    const invited = await app.call('POST', '/api/team/members', {
      token,
      body: { email: 'vera@acme.test', role: 'admin' },
    });
    expect(invited.status).toBe(202);
    // The admin is removed without the use case's sweep of their invitations (a function that stopped).
    expect((await app.store.users.delete(t.tenantId, made.user.id)).ok).toBe(true);
    account('vera-sub', 'vera@acme.test');
    const { res } = await signIn();
    expect(res.status, res.text).toBe(302);
    const vera = (await app.store.users.list(t.tenantId)).find((u) => u.email === 'vera@acme.test');
    expect(vera?.role).toBe('member');
    expect(await app.store.invitations.list(t.tenantId)).not.toContainEqual(
      expect.objectContaining({ email: 'vera@acme.test' }),
    );
    expect(logged.some((l) => l.includes('invitation withdrawn at sign-in'))).toBe(true);
  });

  it('refuses a domain that is not allowed, and an unverified e-mail; no user is made', async () => {
    account('mallory-sub', 'mallory@blocked.test');
    const body = await expectRefused(async () => (await signIn()).res, 403, 'SSO_DOMAIN_NOT_ALLOWED');
    expect(body.message).toContain('blocked.test');
    account('sub-domain', 'bob@eu.acme.test');
    await expectRefused(async () => (await signIn()).res, 403, 'SSO_DOMAIN_NOT_ALLOWED');
    account('unverified-sub', 'carol@acme.test', false);
    await expectRefused(async () => (await signIn()).res, 403, 'SSO_EMAIL_NOT_VERIFIED');
    expect(await userEmails(t.tenantId)).not.toContain('carol@acme.test');
  });

  it("takes Entra ID's xms_edov (no email_verified claim) as a verified e-mail", async () => {
    idp.accounts.set('entra-sub', { email: 'xena@acme.test', xms_edov: true });
    idp.nextLogin = 'entra-sub';
    const { res } = await signIn();
    expect(res.status).toBe(302);
    expect(await userEmails(t.tenantId)).toContain('xena@acme.test');
    idp.accounts.set('entra-unverified', { email: 'frank@acme.test', xms_edov: false });
    idp.nextLogin = 'entra-unverified';
    await expectRefused(async () => (await signIn()).res, 403, 'SSO_EMAIL_NOT_VERIFIED');
  });

  it("answers the IdP's error (access_denied) clearly", async () => {
    idp.deny = true;
    const body = await expectRefused(async () => (await signIn()).res, 400, 'SSO_PROVIDER_ERROR');
    expect(body.message).toBe('The identity provider did not sign you in: access_denied');
  });
});

describe('after a removal', () => {
  const removeMember = async (email: string) => {
    const user = (await app.store.users.list(t.tenantId)).find((u) => u.email === email);
    const res = await app.call('DELETE', `/api/team/members/${user?.id}`, { token: t.owner.token });
    expect(res.status).toBe(204);
  };

  it('a removed member is not provisioned again at the next sign-in, by address or by subject, until re-invited', async () => {
    account('rita-sub', 'rita@acme.test');
    expect((await signIn()).res.status).toBe(302);
    await removeMember('rita@acme.test');

    // The provider still vouches for Rita: her removal holds all the same.
    await expectRefused(async () => (await signIn()).res, 403, 'SSO_ACCOUNT_NOT_ALLOWED');
    // Nor does a new address asserted for the same subject bring her back.
    account('rita-sub', 'rita.renamed@acme.test');
    await expectRefused(async () => (await signIn()).res, 403, 'SSO_ACCOUNT_NOT_ALLOWED');
    expect(logged.some((l) => l.includes('removed from the tenant'))).toBe(true);

    // An admin invites her again: her next sign-in accepts it, with the invited role.
    const invited = await app.call('POST', '/api/team/members', {
      token: t.admin.token,
      body: { email: 'rita.renamed@acme.test', role: 'member' },
    });
    expect(invited.status).toBe(202);
    const back = await signIn();
    expect(back.res.status, back.res.text).toBe(302);
    const rita = (await app.store.users.list(t.tenantId)).find((u) => u.email === 'rita.renamed@acme.test');
    expect(rita).toMatchObject({ role: 'member', sso: { issuer: idp.issuer, subject: 'rita-sub' } });
    // Her sign-ins go on from then on.
    expect((await signIn()).res.status).toBe(302);
  });

  it('a removed password member is not provisioned by single sign-on either', async () => {
    // Tenant Acme's password member (as the operator makes one), at the provider's domain.
    const email = 'paul@acme.test';
    const made = await app.store.users.create({
      tenantId: t.tenantId,
      email,
      role: 'member',
      ifRemoved: 'clear',
    });
    expect(made.ok).toBe(true);
    await removeMember(email);
    account('paul-sub', email);
    await expectRefused(async () => (await signIn()).res, 403, 'SSO_ACCOUNT_NOT_ALLOWED');
  });
});

describe('the role single sign-on gives', () => {
  it("is member at most: 'admin' and 'owner' are refused as the default role (400 naming defaultRole)", async () => {
    for (const defaultRole of ['admin', 'owner']) {
      const res = await app.call('PUT', '/api/sso', {
        token: t.owner.token,
        body: { ...config(), defaultRole },
      });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: {
          statusCode: 400,
          error: 'Bad Request',
          code: 'VALIDATION_FAILED',
          message: ['defaultRole must be one of: member'],
        },
      });
    }
  });

  it('makes a member even where a configuration saved before says admin, and shows member', async () => {
    await app.db.send(
      new UpdateCommand({
        TableName: app.tableName,
        Key: { pk: `TENANT#${t.tenantId}`, sk: 'SSO' },
        UpdateExpression: 'SET defaultRole = :admin',
        ExpressionAttributeValues: { ':admin': 'admin' },
      }),
    );
    expect((await app.call('GET', '/api/sso', { token: t.owner.token })).body.defaultRole).toBe('member');
    account('walt-sub', 'walt@acme.test');
    const { res } = await signIn();
    expect(res.status, res.text).toBe(302);
    const refreshed = await app.call('POST', '/api/auth/refresh', {
      cookie: `refresh_token=${refreshOf(res.setCookies)}`,
    });
    expect(claimsOf(refreshed.body.accessToken)).toMatchObject({ email: 'walt@acme.test', role: 'member' });
    expect((await app.call('PUT', '/api/sso', { token: t.owner.token, body: config() })).status).toBe(200);
  });
});

describe('state and code', () => {
  it('refuses an unknown state', async () => {
    account('dave-sub', 'dave@acme.test');
    const browser = new Browser();
    const callback = new URL(await toCallback(browser));
    callback.searchParams.set('state', 'A'.repeat(43));
    await expectRefused(() => browser.get(callback.href), 400, 'SSO_STATE_INVALID');
  });

  it('refuses a state opened in another browser (no or another binding cookie): login CSRF', async () => {
    account('erin-sub', 'erin@acme.test');
    const victim = new Browser();
    const attacker = new Browser();
    const attackerCallback = await toCallback(attacker);
    await expectRefused(() => victim.get(attackerCallback), 400, 'SSO_STATE_INVALID');
    // Refused before the attempt was spent: the browser that started it still signs in with it.
    expect((await attacker.get(attackerCallback)).status).toBe(302);

    const host = new URL(app.url).host;
    const other = new Browser();
    other.setCookie(host, 'sso_binding', 'B'.repeat(43));
    const second = await toCallback(new Browser());
    await expectRefused(() => other.get(second), 400, 'SSO_STATE_INVALID');
  });

  it('refuses an attempt past its ten minutes, whether or not DynamoDB has deleted it yet', async () => {
    account('olivia-sub', 'olivia@acme.test');
    const browser = new Browser();
    const callback = await toCallback(browser);
    const base = Date.now();
    const moved = vi.spyOn(clock, 'now').mockImplementation(() => new Date(base + 601_000));
    try {
      await expectRefused(() => browser.get(callback), 400, 'SSO_STATE_INVALID');
    } finally {
      moved.mockRestore();
    }
  });

  it('uses a state once: the same callback URL twice gives one session', async () => {
    account('frank-sub', 'frank@acme.test');
    const browser = new Browser();
    const host = new URL(app.url).host;
    const callback = await toCallback(browser);
    const binding = browser.cookie(host, 'sso_binding') as string;
    expect((await browser.get(callback)).status).toBe(302);
    const families1 = await families(t.tenantId);
    // The success cleared the binding cookie; a replaying browser still has it.
    browser.setCookie(host, 'sso_binding', binding);
    await expectRefused(() => browser.get(callback), 400, 'SSO_STATE_INVALID');
    expect(await families(t.tenantId)).toBe(families1);
  });

  it("passes the IdP's refusal of a redeemed code on (invalid_grant), with no second session", async () => {
    account('grace-sub', 'grace@acme.test');
    const browser = new Browser();
    const first = await toCallback(browser);
    expect((await browser.get(first)).status).toBe(302);
    const second = new URL(await toCallback(browser));
    // A fresh, valid state with the first (redeemed) code.
    second.searchParams.set('code', new URL(first).searchParams.get('code') as string);
    const issued = idp.tokensIssued;
    const body = await expectRefused(() => browser.get(second.href), 400, 'SSO_CODE_REJECTED');
    expect(body.message).toBe('The identity provider refused the code: invalid_grant');
    expect(idp.tokensIssued).toBe(issued);
  });

  it('refuses an iss parameter of another issuer (RFC 9207)', async () => {
    account('heidi-sub', 'heidi@acme.test');
    const browser = new Browser();
    const callback = new URL(await toCallback(browser));
    expect(callback.searchParams.get('iss')).toBe(idp.issuer);
    callback.searchParams.set('iss', 'https://idp.elsewhere.example');
    await expectRefused(() => browser.get(callback.href), 400, 'SSO_ISSUER_MISMATCH');
  });
});

describe('the ID token', () => {
  const withTamper = async (tamper: TestProvider['tamperNextIdToken']) => {
    const browser = new Browser();
    const callback = await toCallback(browser);
    idp.tamperNextIdToken = tamper;
    return browser.get(callback);
  };

  it('is refused with another audience', async () => {
    account('ivan-sub', 'ivan@acme.test');
    const body = await expectRefused(
      () => withTamper({ claims: (c) => ({ ...c, aud: 'another-client' }) }),
      401,
      'SSO_ID_TOKEN_INVALID',
    );
    expect(body.message).toContain('claim aud');
  });

  it('is refused when expired', async () => {
    account('judy-sub', 'judy@acme.test');
    const now = Math.floor(Date.now() / 1000);
    const body = await expectRefused(
      () => withTamper({ claims: (c) => ({ ...c, iat: now - 7200, exp: now - 3600 }) }),
      401,
      'SSO_ID_TOKEN_INVALID',
    );
    expect(body.message).toContain('expired');
  });

  it('is refused with another nonce', async () => {
    account('ken-sub', 'ken@acme.test');
    await expectRefused(
      () => withTamper({ claims: (c) => ({ ...c, nonce: 'not-the-nonce' }) }),
      401,
      'SSO_ID_TOKEN_INVALID',
    );
  });

  it('is refused when signed by a foreign key (the signature is really verified)', async () => {
    account('leo-sub', 'leo@acme.test');
    const body = await expectRefused(
      () => withTamper({ claims: (c) => c, foreignKey: true }),
      401,
      'SSO_ID_TOKEN_INVALID',
    );
    expect(body.message).toContain('signature verification failed');
    // The same claims re-signed with the provider's own key pass: the key alone made the difference.
    account('leo-sub', 'leo@acme.test');
    const ok = await withTamper({ claims: (c) => c });
    expect(ok.status, ok.text).toBe(302);
  });
});

it('never writes the client secret, a code or a state to a log line', () => {
  expect(logged.length).toBeGreaterThan(0);
  expect(logged.some((l) => l.includes('sso sign-in refused'))).toBe(true);
  const all = logged.join('\n');
  expect(all).not.toContain(idp.clientSecret);
  expect(all).not.toContain('other-secret');
  for (const value of secretsSeen) expect(all).not.toContain(value);
});
