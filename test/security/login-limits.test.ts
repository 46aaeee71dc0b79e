/**
 * Sign-in limits beyond one client address (issue 29, point 9), through HTTP: failed logins are counted per
 * e-mail address, and per address and tenant, from whichever client addresses they come, so spreading a
 * guessing attack over many addresses buys nothing; a success never wipes the failures counted; IPv6 clients
 * are counted by their /64 (one host holds the whole /64); and refresh has a budget of its own, larger than
 * login's, so an office behind one NAT address keeps its sessions while its login budget is spent.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { clock } from '../../functions/platform/clock.ts';
import { type Gateway, startGateway } from '../../local/gateway.ts';
import { startTestApp, TEST_PASSWORD, type TestApp, type TestTenant } from '../support/app.ts';
import { http, refreshCookieOf } from '../support/http.ts';

/** Per client address and minute, for this file: small, so a test can spend a budget quickly. */
const LOGIN_PER_MINUTE = 20;
const REFRESH_PER_MINUTE = 60;
/**
 * Failed logins per address and tenant, and per address, in 15 minutes: below the defaults (10, 30), since an
 * unknown address's failure costs a full scrypt comparison (the login's uniform timing).
 */
const FAILURES_PER_ACCOUNT = 5;
const FAILURES_PER_ADDRESS = 12;
const ACCOUNT_WINDOW_SECONDS = 15 * 60;

let app: TestApp;
let t: TestTenant;
/** A second gateway over the same handlers and table, whose client address is the `X-Client-Address` header. */
let v6: Gateway;

beforeAll(async () => {
  app = await startTestApp({
    AUTH_RATE_LIMIT_PER_MINUTE: String(LOGIN_PER_MINUTE),
    REFRESH_RATE_LIMIT_PER_MINUTE: String(REFRESH_PER_MINUTE),
    LOGIN_FAILURES_PER_ACCOUNT: String(FAILURES_PER_ACCOUNT),
    LOGIN_FAILURES_PER_ADDRESS: String(FAILURES_PER_ADDRESS),
  });
  t = await app.createTenant('Limits');
  v6 = await startGateway({
    port: 0,
    clientAddress: (req) => String(req.headers['x-client-address']),
  });
});
afterAll(async () => {
  await v6.close();
  await app.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Moves the service clock to one second into a fresh 15-minute window (the `n`th from now), so a test's counts
 * neither straddle a window's end nor meet another test's. Returns the window's start, epoch seconds.
 */
function freshWindow(n: number): number {
  const start = (Math.floor(Date.now() / 1000 / ACCOUNT_WINDOW_SECONDS) + n) * ACCOUNT_WINDOW_SECONDS;
  vi.spyOn(clock, 'now').mockImplementation(() => new Date((start + 1) * 1000));
  return start;
}

const login = (email: string, password: string, from: string, tenantId?: string) =>
  app.call('POST', '/api/auth/login', {
    body: { email, password, ...(tenantId ? { tenantId } : {}) },
    localAddress: from,
  });

/** Five client addresses taking turns, as an attacker spreading attempts would. */
const spread = (i: number) => `127.0.0.${31 + (i % 5)}`;

const invalid = {
  statusCode: 401,
  message: 'Invalid credentials',
  error: 'Unauthorized',
  code: 'INVALID_CREDENTIALS',
};

/** The 429 of a locked address: the whole window's rest to wait, whatever password was sent. */
function expectLocked(res: Awaited<ReturnType<typeof login>>, limit: number, windowStart: number) {
  const retryAfter = ACCOUNT_WINDOW_SECONDS - 1;
  expect({ status: res.status, body: res.body }).toEqual({
    status: 429,
    body: {
      statusCode: 429,
      message: `Too many failed sign-ins for this e-mail address; retry in ${retryAfter} seconds`,
      error: 'Too Many Requests',
      code: 'RATE_LIMITED',
    },
  });
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expect(res.headers['x-ratelimit-reset']).toBe(String(windowStart + ACCOUNT_WINDOW_SECONDS));
}

describe('failed logins counted per account', () => {
  it('locks an address after its failures from five client addresses, even to its right password; others sign in', async () => {
    const windowStart = freshWindow(1);
    for (let i = 0; i < FAILURES_PER_ACCOUNT; i++) {
      const res = await login(t.member.email, `wrong-password-${i}`, spread(i));
      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: invalid });
    }
    expectLocked(await login(t.member.email, TEST_PASSWORD, '127.0.0.36'), FAILURES_PER_ACCOUNT, windowStart);

    // The attack did not touch anyone else, from the very client addresses it used.
    const other = await login(t.admin.email, TEST_PASSWORD, spread(0));
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ accessToken: expect.any(String) });

    // An address nobody has is locked alike: the answers tell nothing about which addresses exist.
    const nobody = `nobody-${randomUUID().slice(0, 8)}@example.com`;
    for (let i = 0; i < FAILURES_PER_ACCOUNT; i++) {
      const res = await login(nobody, `wrong-password-${i}`, spread(i));
      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: invalid });
    }
    expectLocked(await login(nobody, 'wrong-password', spread(0)), FAILURES_PER_ACCOUNT, windowStart);

    // The lock ends with its window.
    freshWindow(2);
    expect((await login(t.member.email, TEST_PASSWORD, '127.0.0.36')).status).toBe(200);
  });

  it('counts the address across tenants: naming another tenant each time buys no fresh attempts', async () => {
    const windowStart = freshWindow(3);
    for (let i = 0; i < FAILURES_PER_ADDRESS; i++) {
      const res = await login(t.owner.email, 'wrong-password', spread(i), randomUUID());
      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: invalid });
    }
    expectLocked(
      await login(t.owner.email, TEST_PASSWORD, '127.0.0.36', t.tenantId),
      FAILURES_PER_ADDRESS,
      windowStart,
    );
    expectLocked(await login(t.owner.email, TEST_PASSWORD, '127.0.0.36'), FAILURES_PER_ADDRESS, windowStart);
  });

  it('keeps the failures counted when the right password gets in between', async () => {
    const windowStart = freshWindow(4);
    for (let i = 0; i < FAILURES_PER_ACCOUNT - 1; i++)
      expect((await login(t.admin.email, 'wrong-password', spread(i))).status).toBe(401);
    // The success counts for nothing either way: it neither adds a failure nor takes any away.
    expect((await login(t.admin.email, TEST_PASSWORD, spread(0))).status).toBe(200);
    expect((await login(t.admin.email, 'wrong-password', spread(1))).status).toBe(401);
    expectLocked(await login(t.admin.email, TEST_PASSWORD, spread(2)), FAILURES_PER_ACCOUNT, windowStart);
  });
});

describe('client addresses', () => {
  const fromV6 = (address: string) =>
    http(v6.url, 'POST', '/api/auth/login', {
      body: { email: 'x@example.com', password: 'short' },
      headers: { 'X-Client-Address': address },
    });

  it('counts two IPv6 addresses of one /64 in one window, and another /64 in its own', async () => {
    freshWindow(5);
    const sameNetwork = ['2001:db8:1:2::a', '2001:db8:1:2:ffff:ffff:ffff:fffe'];
    for (let i = 1; i <= LOGIN_PER_MINUTE; i++) {
      const res = await fromV6(sameNetwork[i % 2] as string);
      expect(res.status).toBe(400);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(LOGIN_PER_MINUTE - i));
    }
    const limited = await fromV6('2001:db8:1:2::1');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');

    const otherNetwork = await fromV6('2001:db8:1:3::a');
    expect(otherNetwork.status).toBe(400);
    expect(otherNetwork.headers['x-ratelimit-remaining']).toBe(String(LOGIN_PER_MINUTE - 1));
  });
});

describe('refresh', () => {
  it("keeps its own, larger budget: sessions refresh while the address's login budget is spent", async () => {
    freshWindow(6);
    const from = '127.0.0.41';
    let cookie = refreshCookieOf(await login(t.member.email, TEST_PASSWORD, from));
    for (let i = 1; i < LOGIN_PER_MINUTE; i++)
      expect((await login('x@example.com', 'short', from)).status).toBe(400);
    const loginLimited = await login(t.member.email, TEST_PASSWORD, from);
    expect(loginLimited.status).toBe(429);

    for (let i = 1; i <= REFRESH_PER_MINUTE; i++) {
      const res = await app.call('POST', '/api/auth/refresh', {
        cookie: `refresh_token=${cookie}`,
        localAddress: from,
      });
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe(String(REFRESH_PER_MINUTE));
      expect(res.headers['x-ratelimit-remaining']).toBe(String(REFRESH_PER_MINUTE - i));
      cookie = refreshCookieOf(res);
    }
    const refreshLimited = await app.call('POST', '/api/auth/refresh', {
      cookie: `refresh_token=${cookie}`,
      localAddress: from,
    });
    expect(refreshLimited.status).toBe(429);
    expect(refreshLimited.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    expect(refreshLimited.headers['x-ratelimit-limit']).toBe(String(REFRESH_PER_MINUTE));
  });
});
