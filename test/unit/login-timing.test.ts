/**
 * The login answers an unknown e-mail only after the same scrypt work as a wrong password, so response time
 * does not reveal which e-mails exist. (The time itself is measured in `npm run bench`, not asserted here.)
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

function storeWith(user: unknown): Store {
  return { users: { findForLogin: async () => user } } as unknown as Store;
}

describe('login timing', () => {
  it('runs scrypt against a dummy hash for an unknown e-mail', async () => {
    const verify = vi.mocked(passwords.verifyPassword);
    verify.mockClear();
    await expect(login(storeWith(undefined), 'nobody@example.com', 'some-password')).rejects.toMatchObject({
      statusCode: 401,
      code: 'INVALID_CREDENTIALS',
    });
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]?.[1]).toMatch(/^scrypt\$32768\$/);
  });

  it('runs the same comparison for a known e-mail with a wrong password', async () => {
    const verify = vi.mocked(passwords.verifyPassword);
    verify.mockClear();
    const passwordHash = await passwords.hashPassword('the-right-password');
    await expect(
      login(
        storeWith({ id: 'u', tenantId: 't', email: 'a@b.co', role: 'owner', passwordHash }),
        'a@b.co',
        'wrong-password',
      ),
    ).rejects.toMatchObject({ statusCode: 401, code: 'INVALID_CREDENTIALS' });
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
    await expect(login(storeWith(ssoUser), 'a@b.co', 'any-password')).rejects.toMatchObject({
      statusCode: 401,
      code: 'INVALID_CREDENTIALS',
    });
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]?.[1]).toMatch(/^scrypt\$32768\$/);
  });
});
