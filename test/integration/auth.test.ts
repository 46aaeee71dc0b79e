import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { clock } from '../../functions/platform/clock.ts';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';
import { claimsOf, refreshCookieOf } from '../support/http.ts';

let app: TestApp;
let acme: TestTenant;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.createTenant('Acme');
});
afterAll(async () => app.close());
afterEach(() => vi.restoreAllMocks());

/** Moves the service clock forward; the process clock (and the SDKs) are left alone. */
function advanceClock(ms: number) {
  const base = Date.now();
  vi.spyOn(clock, 'now').mockImplementation(() => new Date(base + ms + (Date.now() - base)));
}

const invalidToken = {
  statusCode: 401,
  message: 'Invalid or expired access token',
  error: 'Unauthorized',
  code: 'UNAUTHORIZED',
};

describe('POST /api/auth/login', () => {
  it('answers an access token and a refresh cookie scoped to the auth path', async () => {
    const res = await app.login(acme.owner.email);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['accessToken']);
    const cookie = res.setCookies.find((c) => c.startsWith('refresh_token='));
    expect(cookie).toMatch(
      /^refresh_token=[\w-]{43}; Path=\/api\/auth; Max-Age=2592000; HttpOnly; Secure; SameSite=Strict$/,
    );
  });

  it('issues a 15-minute JWT carrying sub, email, tenantId and role', async () => {
    const res = await app.login(acme.admin.email);
    const claims = claimsOf(res.body.accessToken);
    expect(claims).toMatchObject({
      sub: acme.admin.id,
      email: acme.admin.email,
      tenantId: acme.tenantId,
      role: 'admin',
    });
    expect(claims.exp as number).toBe((claims.iat as number) + 15 * 60);
    expect(JSON.parse(Buffer.from(res.body.accessToken.split('.')[0], 'base64url').toString())).toMatchObject(
      {
        alg: 'HS256',
      },
    );
  });

  it('rejects a malformed body with every problem listed', async () => {
    const res = await app.call('POST', '/api/auth/login', {
      body: { email: 'not-an-email', password: 'short' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      message: ['email must be a valid e-mail address', 'password must be at least 8 characters'],
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
    });
  });

  it('names missing fields, unknown fields, broken JSON and a wrong content type', async () => {
    const missing = await app.call('POST', '/api/auth/login', { body: { extra: true } });
    expect(missing.body.message).toEqual([
      'email is required',
      'password is required',
      'extra is not a known field',
    ]);
    const empty = await app.call('POST', '/api/auth/login');
    expect(empty.status).toBe(400);
    expect(empty.body.message).toEqual(['body is required']);
    const broken = await app.call('POST', '/api/auth/login', { rawBody: '{"email":' });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ message: ['body must be valid JSON'], code: 'VALIDATION_FAILED' });
    const form = await app.call('POST', '/api/auth/login', {
      rawBody: 'email=a',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers a wrong password and an unknown e-mail identically', async () => {
    const wrong = await app.login(acme.owner.email, 'wrong-password-123');
    const unknown = await app.login('nobody@example.com', 'wrong-password-123');
    const expected = {
      statusCode: 401,
      message: 'Invalid credentials',
      error: 'Unauthorized',
      code: 'INVALID_CREDENTIALS',
    };
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(expected);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(expected);
    expect(wrong.setCookies).toEqual([]);
  });

  it('matches e-mails case-insensitively', async () => {
    const res = await app.login(acme.member.email.toUpperCase());
    expect(res.status).toBe(200);
  });
});

describe('access tokens on protected routes', () => {
  it('refuses a missing, malformed or non-Bearer token with UNAUTHORIZED', async () => {
    const variants: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer' },
      { Authorization: 'Basic abc' },
      { Authorization: 'Bearer abc.def.ghi' },
    ];
    for (const headers of variants) {
      const res = await app.call('GET', '/api/projects', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(invalidToken);
    }
  });

  it('refuses a token whose payload was tampered with', async () => {
    const [h, p, s] = acme.member.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, role: 'owner' })).toString('base64url');
    const res = await app.call('GET', '/api/billing', { token: `${h}.${forged}.${s}` });
    expect(res.body).toEqual(invalidToken);
  });

  it('refuses an unsigned token (alg none)', async () => {
    const claims = claimsOf(acme.owner.token);
    const unsigned = new UnsecuredJWT(claims).encode();
    const res = await app.call('GET', '/api/projects', { token: unsigned });
    expect(res.body).toEqual(invalidToken);
  });

  it('refuses a token signed with another key', async () => {
    const claims = claimsOf(acme.owner.token);
    const other = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('another-key-another-key-another-key!!'));
    const res = await app.call('GET', '/api/projects', { token: other });
    expect(res.body).toEqual(invalidToken);
  });

  it('refuses a token signed with our key for another issuer or audience', async () => {
    const { iat, exp, ...rest } = claimsOf(acme.owner.token);
    const foreign = await new SignJWT(rest)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .setIssuer('someone-else')
      .sign(app.jwtSecret);
    expect((await app.call('GET', '/api/projects', { token: foreign })).body).toEqual(invalidToken);
  });

  it('answers TOKEN_EXPIRED once 15 minutes have passed, and accepts the token just before', async () => {
    const token = (await app.login(acme.owner.email)).body.accessToken;
    advanceClock(14 * 60 * 1000);
    expect((await app.call('GET', '/api/projects', { token })).status).toBe(200);
    vi.restoreAllMocks();
    advanceClock(15 * 60 * 1000 + 1000);
    const res = await app.call('GET', '/api/projects', { token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ ...invalidToken, code: 'TOKEN_EXPIRED' });
  });
});

describe('POST /api/auth/refresh', () => {
  it('answers 401 "No refresh token" without the cookie', async () => {
    const res = await app.call('POST', '/api/auth/refresh');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      statusCode: 401,
      message: 'No refresh token',
      error: 'Unauthorized',
      code: 'NO_REFRESH_TOKEN',
    });
  });

  it('rotates the cookie and answers a working access token', async () => {
    const first = refreshCookieOf(await app.login(acme.owner.email));
    const res = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${first}` });
    expect(res.status).toBe(200);
    const second = refreshCookieOf(res);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(res.setCookies[0]).toMatch(/HttpOnly; Secure; SameSite=Strict$/);
    expect((await app.call('GET', '/api/projects', { token: res.body.accessToken })).status).toBe(200);
    const third = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${second}` });
    expect(third.status).toBe(200);
  });

  it('revokes the whole family when a used refresh token comes back', async () => {
    const first = refreshCookieOf(await app.login(acme.owner.email));
    const rotated = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${first}` });
    const second = refreshCookieOf(rotated);
    const replay = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${first}` });
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({
      statusCode: 401,
      code: 'REFRESH_TOKEN_REUSED',
      error: 'Unauthorized',
    });
    const legit = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${second}` });
    expect(legit.status).toBe(401);
    expect(legit.body.code).toBe('REFRESH_TOKEN_INVALID');
    // Another login is another family, untouched.
    const other = refreshCookieOf(await app.login(acme.owner.email));
    expect((await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${other}` })).status).toBe(
      200,
    );
  });

  it('stores only a hash of the refresh token', async () => {
    const token = refreshCookieOf(await app.login(acme.admin.email)) as string;
    const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
    const all = await app.db.send(new ScanCommand({ TableName: app.tableName }));
    expect(JSON.stringify(all.Items)).not.toContain(token);
  });

  it('refuses an unknown token and one older than 30 days', async () => {
    const unknown = await app.call('POST', '/api/auth/refresh', { cookie: 'refresh_token=made-up' });
    expect(unknown.body).toMatchObject({ statusCode: 401, code: 'REFRESH_TOKEN_INVALID' });
    const token = refreshCookieOf(await app.login(acme.member.email));
    advanceClock(30 * 24 * 3600 * 1000 + 1000);
    const res = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${token}` });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('REFRESH_TOKEN_INVALID');
  });

  it('ends the refresh family on a role change; the next login carries the new role', async () => {
    const tenant = await app.createTenant('Rolechange');
    const cookie = refreshCookieOf(await app.login(tenant.member.email));
    const promoted = await app.call('PATCH', `/api/team/members/${tenant.member.id}`, {
      token: tenant.owner.token,
      body: { role: 'admin' },
    });
    expect(promoted.status).toBe(200);
    const res = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${cookie}` });
    expect(res.status).toBe(401);
    expect(claimsOf((await app.login(tenant.member.email)).body.accessToken).role).toBe('admin');
  });

  it('logout revokes the family and clears the cookie', async () => {
    const token = refreshCookieOf(await app.login(acme.owner.email));
    const out = await app.call('POST', '/api/auth/logout', { cookie: `refresh_token=${token}` });
    expect(out.status).toBe(204);
    expect(out.setCookies[0]).toMatch(/^refresh_token=; Path=\/api\/auth; Max-Age=0/);
    const res = await app.call('POST', '/api/auth/refresh', { cookie: `refresh_token=${token}` });
    expect(res.status).toBe(401);
  });
});

describe('rate limits on login and refresh (dev: 100 per minute per client address)', () => {
  it('counts per address and answers 429 with Retry-After and X-RateLimit headers past the limit', async () => {
    const from = '127.0.0.21';
    // Pin the clock inside one window so the test cannot straddle a minute boundary.
    const windowStart = Math.floor(Date.now() / 60_000) * 60_000 + 120_000;
    vi.spyOn(clock, 'now').mockImplementation(() => new Date(windowStart + 1_000));
    for (let i = 1; i <= 100; i++) {
      const res = await app.call('POST', '/api/auth/login', {
        body: { email: 'x@example.com', password: 'p' },
        localAddress: from,
      });
      expect(res.status).toBe(400);
      expect(res.headers['x-ratelimit-limit']).toBe('100');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(100 - i));
    }
    const limited = await app.call('POST', '/api/auth/login', {
      body: { email: 'x@example.com', password: 'p' },
      localAddress: from,
    });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED' });
    expect(limited.headers['retry-after']).toBe('59');
    expect(limited.headers['x-ratelimit-limit']).toBe('100');
    expect(limited.headers['x-ratelimit-reset']).toBe(String(windowStart / 1000 + 60));
    // The refresh endpoint has its own budget, and another address is not affected.
    expect((await app.call('POST', '/api/auth/refresh', { localAddress: from })).status).toBe(401);
    expect(
      (
        await app.call('POST', '/api/auth/login', {
          body: { email: 'x@example.com', password: 'p' },
          localAddress: '127.0.0.22',
        })
      ).status,
    ).toBe(400);
    // The next window starts afresh.
    vi.restoreAllMocks();
    vi.spyOn(clock, 'now').mockImplementation(() => new Date(windowStart + 61_000));
    const next = await app.login(acme.owner.email, TEST_PASSWORD, from);
    expect(next.status).toBe(200);
  });

  it('does not limit other endpoints', async () => {
    for (let i = 0; i < 120; i++) {
      const res = await app.call('GET', '/api/health', { localAddress: '127.0.0.23' });
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
