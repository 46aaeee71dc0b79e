import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../functions/platform/passwords.ts';

describe('passwords', () => {
  it('hashes with scrypt, a fresh salt each time, and verifies', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{88}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
  });

  it('refuses malformed or tampered hashes instead of throwing', async () => {
    const h = await hashPassword('secret-password');
    expect(await verifyPassword('secret-password', 'plain-text')).toBe(false);
    expect(await verifyPassword('secret-password', h.replace(/.{4}$/, 'AAAA'))).toBe(false);
    expect(await verifyPassword('secret-password', h.replace('scrypt', 'md5'))).toBe(false);
  });

  it('treats Unicode-equivalent passwords alike (NFKC)', async () => {
    const h = await hashPassword('café-password');
    expect(await verifyPassword('cafe\u0301-password', h)).toBe(true);
  });
});
