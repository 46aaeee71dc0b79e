/**
 * The login answers an unknown e-mail only after the same work as a wrong password (the account's counters,
 * one scrypt comparison), so response time does not reveal which e-mails exist. (The time itself is measured in `npm run bench`, not asserted here.)
 */
import { describe, expect, it, vi } from 'vitest';

vi.mock('../../functions/platform/passwords.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../functions/platform/passwords.ts')>();
  return { ...real, verifyPassword: vi.fn(real.verifyPassword) };
});
vi.mock('../../functions/platform/config.ts', () => ({
  config: () => ({ jwtSecret: new Uint8Array(32) }),
}));

const { login } = await import('../../functions/services/auth.ts');
const passwords = await import('../../functions/platform/passwords.ts');

import type { Store } from '../../functions/store/index.ts';

const LIMITS = { perAccount: 10, perAddress: 30 };

/** A store whose only user is `user`; its rate counters note what they counted, all far under any limit. */
function storeWith(user: unknown): Store & { counted: string[] } {
  const counted: string[] = [];
  return {
    counted,
    users: { findForLogin: async () => user },
    rateLimits: {
      hit: async (bucket: string) => {
        counted.push(bucket);
        return { count: 1, windowStart: 0, resetAt: 900 };
      },
      giveBack: async () => undefined,
    },
  } as unknown as Store & { counted: string[] };
}

describe('login timing', () => {
  it('runs scrypt against a dummy hash for an unknown e-mail', async () => {
    const verify = vi.mocked(passwords.verifyPassword);
    verify.mockClear();
    const store = storeWith(undefined);
    await expect(
      login(store, { email: 'nobody@example.com', password: 'some-password' }, LIMITS),
    ).rejects.toMatchObject({ statusCode: 401, code: 'INVALID_CREDENTIALS' });
    expect(store.counted).toEqual(['login-address', 'login-account']);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]?.[1]).toMatch(/^scrypt\$32768\$/);
  });

  it('runs the same comparison for a known e-mail with a wrong password', async () => {
    const verify = vi.mocked(passwords.verifyPassword);
    verify.mockClear();
    const passwordHash = await passwords.hashPassword('the-right-password');
    const store = storeWith({ id: 'u', tenantId: 't', email: 'a@b.co', role: 'owner', passwordHash });
    await expect(login(store, { email: 'a@b.co', password: 'wrong-password' }, LIMITS)).rejects.toMatchObject(
      { statusCode: 401, code: 'INVALID_CREDENTIALS' },
    );
    expect(store.counted).toEqual(['login-address', 'login-account']);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]?.[1]).toBe(passwordHash);
  });

  it('runs the dummy comparison for a user made by single sign-on (no password), and refuses alike', async () => {
    const verify = vi.mocked(passwords.verifyPassword);
    verify.mockClear();
    const ssoUser = {
      id: 'u',
      tenantId: 't',
      email: 'a@b.co',
      role: 'member',
      sso: { issuer: 'i', subject: 's' },
    };
    await expect(
      login(storeWith(ssoUser), { email: 'a@b.co', password: 'any-password' }, LIMITS),
    ).rejects.toMatchObject({ statusCode: 401, code: 'INVALID_CREDENTIALS' });
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]?.[1]).toMatch(/^scrypt\$32768\$/);
  });
});
