/**
 * A cookie the browser (or anyone) sends with a malformed percent escape (`%E0%A4%A`, a lone `%`) is skipped:
 * it never turns a request into a 500, on a public route, an authenticated one or the refresh that reads a
 * cookie of its own, and the well-formed cookies beside it are still read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { refreshCookieOf } from '../support/http.ts';

let app: TestApp;
let t: TestTenant;
beforeAll(async () => {
  app = await startTestApp();
  t = await app.createTenant('Cookies');
});
afterAll(() => app.close());

/** Cookies another site on the parent domain (or an old version of the console) may have left behind. */
const BAD = ['tracking=%E0%A4%A', 'broken=100%', 'lone=%'];

describe('a malformed percent escape in a cookie', () => {
  it('does not break GET /api/health', async () => {
    for (const bad of BAD) {
      const res = await app.call('GET', '/api/health', { cookie: bad });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 200,
        body: { status: 'ok', time: expect.any(String) },
      });
    }
  });

  it('does not break an authenticated GET /api/projects', async () => {
    const clean = await app.call('GET', '/api/projects', { token: t.member.token });
    for (const bad of BAD) {
      const res = await app.call('GET', '/api/projects', { token: t.member.token, cookie: `${bad}; a=b` });
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: clean.body });
    }
  });

  it('leaves POST /api/auth/refresh reading the refresh cookie beside it', async () => {
    let refresh = refreshCookieOf(await app.login(t.member.email));
    for (const bad of BAD) {
      const res = await app.call('POST', '/api/auth/refresh', {
        cookie: `${bad}; refresh_token=${refresh}; other=%zz`,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accessToken: expect.any(String) });
      refresh = refreshCookieOf(res);
      expect(refresh).toEqual(expect.any(String));
    }
  });

  it('skips a malformed refresh cookie itself: the answer is "No refresh token", not a 500', async () => {
    const res = await app.call('POST', '/api/auth/refresh', { cookie: 'refresh_token=%E0%A4%A' });
    expect(res.body).toEqual({
      statusCode: 401,
      message: 'No refresh token',
      error: 'Unauthorized',
      code: 'NO_REFRESH_TOKEN',
    });
  });
});
