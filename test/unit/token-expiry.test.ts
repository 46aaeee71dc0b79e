/** The console's reading of its access token's expiry (web/src/api/tokenExpiry.ts). */
import { describe, expect, it } from 'vitest';
import { expiresWithin } from '../../web/src/api/tokenExpiry.ts';

const jwt = (claims: object) =>
  `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.signature`;

describe('expiresWithin', () => {
  const now = Date.UTC(2026, 10, 26, 8, 0, 0);
  it('reads the exp claim', () => {
    const token = jwt({ sub: 'u', exp: now / 1000 + 600 });
    expect(expiresWithin(token, 60_000, now)).toBe(false);
    expect(expiresWithin(token, 700_000, now)).toBe(true);
    expect(expiresWithin(jwt({ exp: now / 1000 - 1 }), 0, now)).toBe(true);
  });

  it('counts a token it cannot read as expiring', () => {
    expect(expiresWithin('not-a-jwt', 60_000, now)).toBe(true);
    expect(expiresWithin('a.!!!.c', 60_000, now)).toBe(true);
    expect(expiresWithin(jwt({ sub: 'no exp' }), 60_000, now)).toBe(true);
  });
});
