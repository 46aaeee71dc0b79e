import { describe, expect, it } from 'vitest';
import { apiBaseUrl, resolveReturnTo, safeOAuthError } from '../../functions/domain/redirects.ts';
import {
  authorizationUrl,
  isAcceptableIssuer,
  isDomainAllowed,
  SsoConfigSchema,
} from '../../functions/domain/sso.ts';

const APP = 'https://app.example.com';

describe('resolveReturnTo (the open-redirect guard)', () => {
  it('defaults to the web app and resolves paths against it', () => {
    expect(resolveReturnTo(undefined, APP)).toBe(APP);
    expect(resolveReturnTo('', APP)).toBe(APP);
    expect(resolveReturnTo('/projects/1?tab=runs#top', APP)).toBe(`${APP}/projects/1?tab=runs#top`);
    expect(resolveReturnTo('/a/../b', APP)).toBe(`${APP}/b`);
  });

  it("accepts absolute URLs on the web app's origin only", () => {
    expect(resolveReturnTo(`${APP}/x`, APP)).toBe(`${APP}/x`);
    expect(resolveReturnTo('https://APP.example.com/x', APP)).toBe(`${APP}/x`);
    for (const bad of [
      'http://app.example.com/x',
      'https://app.example.com:8443/x',
      'https://app.example.com.evil.example/x',
      'https://user:pw@app.example.com/x',
      'https://evil.example',
      '//evil.example/x',
      '/\\evil.example',
      '\\\\evil.example',
      'javascript:alert(1)',
      'data:text/html,x',
      'projects',
      '/x\n',
      `/${'a'.repeat(2048)}`,
    ])
      expect(resolveReturnTo(bad, APP), bad).toBeUndefined();
  });
});

describe('isDomainAllowed', () => {
  it('matches the exact domain, case-insensitively', () => {
    expect(isDomainAllowed('Alice@Acme.COM', ['acme.com'])).toBe(true);
    expect(isDomainAllowed('a@acme.com', ['other.com', 'ACME.com'])).toBe(true);
    expect(isDomainAllowed('a@eu.acme.com', ['acme.com'])).toBe(false);
    expect(isDomainAllowed('a@badacme.com', ['acme.com'])).toBe(false);
    expect(isDomainAllowed('acme.com', ['acme.com'])).toBe(false);
    expect(isDomainAllowed('a@acme.com@evil.com', ['acme.com'])).toBe(false);
  });
});

describe('SsoConfigSchema', () => {
  const valid = {
    slug: 'acme-corp',
    issuer: 'https://login.acme.com/tenant',
    clientId: 'client',
    clientSecret: 'secret',
    allowedDomains: ['Acme.com'],
    defaultRole: 'member',
  };

  it('accepts a configuration, lower-casing domains and enabling by default', () => {
    expect(SsoConfigSchema.parse(valid)).toEqual({ ...valid, allowedDomains: ['acme.com'], enabled: true });
    expect(SsoConfigSchema.safeParse({ ...valid, clientSecret: undefined }).success).toBe(true);
  });

  it('refuses bad slugs, issuers, domains and the owner role', () => {
    for (const slug of ['ab', 'Acme', '-acme', 'acme-', 'ac_me', 'a'.repeat(64)])
      expect(SsoConfigSchema.safeParse({ ...valid, slug }).success, slug).toBe(false);
    expect(SsoConfigSchema.safeParse({ ...valid, slug: 'a'.repeat(63) }).success).toBe(true);
    for (const issuer of [
      'http://login.acme.com',
      'https://x.com/?a=1',
      'https://x.com/#f',
      'login.acme.com',
    ])
      expect(SsoConfigSchema.safeParse({ ...valid, issuer }).success, issuer).toBe(false);
    expect(SsoConfigSchema.safeParse({ ...valid, allowedDomains: [] }).success).toBe(false);
    expect(SsoConfigSchema.safeParse({ ...valid, allowedDomains: ['*.acme.com'] }).success).toBe(false);
    expect(SsoConfigSchema.safeParse({ ...valid, defaultRole: 'owner' }).success).toBe(false);
    expect(SsoConfigSchema.safeParse({ ...valid, extra: 1 }).success).toBe(false);
  });

  it('allows http issuers on loopback hosts only', () => {
    expect(isAcceptableIssuer('http://127.0.0.1:4000')).toBe(true);
    expect(isAcceptableIssuer('http://localhost:4000/realms/x')).toBe(true);
    expect(isAcceptableIssuer('http://10.0.0.1')).toBe(false);
  });
});

describe('URLs', () => {
  it('builds the authorization request with PKCE, keeping the endpoint own parameters', () => {
    const url = new URL(
      authorizationUrl({
        authorizationEndpoint: 'https://idp.example/authorize?tenant=x',
        clientId: 'c',
        redirectUri: 'https://api.example/api/auth/sso/callback',
        state: 's',
        nonce: 'n',
        codeChallenge: 'cc',
      }),
    );
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: 'x',
      response_type: 'code',
      client_id: 'c',
      redirect_uri: 'https://api.example/api/auth/sso/callback',
      scope: 'openid email profile',
      state: 's',
      nonce: 'n',
      code_challenge: 'cc',
      code_challenge_method: 'S256',
    });
  });

  it('takes the API base from API_URL, else from Host and X-Forwarded-Proto', () => {
    expect(apiBaseUrl('https://api.example.com/', {})).toBe('https://api.example.com');
    expect(apiBaseUrl(undefined, { host: '127.0.0.1:3000' })).toBe('http://127.0.0.1:3000');
    expect(apiBaseUrl(undefined, { host: 'api.example.com', 'x-forwarded-proto': 'https, http' })).toBe(
      'https://api.example.com',
    );
    expect(() => apiBaseUrl(undefined, { host: 'evil.example/path' })).toThrow();
  });

  it('reduces an OAuth error code to its character set', () => {
    expect(safeOAuthError('access_denied')).toBe('access_denied');
    expect(safeOAuthError('bad"\\\n<x>')).toBe('bad<x>');
    expect(safeOAuthError('\n')).toBe('unknown_error');
  });
});
