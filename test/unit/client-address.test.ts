/** Who a per-client rate limit counts (functions/domain/rate-limits.ts clientOf). */
import { describe, expect, it } from 'vitest';
import { clientOf } from '../../functions/domain/rate-limits.ts';

describe('clientOf', () => {
  it('counts an IPv6 address by its /64, however it is written', () => {
    expect(clientOf('2001:db8:1:2::a')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:DB8:1:2:FFFF:FFFF:FFFF:FFFE')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:0db8:0001:0003:0000:0000:0000:000a')).toBe('2001:db8:1:3::/64');
  });

  it('counts an IPv4 address, and an IPv4-mapped IPv6 one, as the IPv4 address', () => {
    expect(clientOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts what it cannot parse as it is', () => {
    expect(clientOf('unknown')).toBe('unknown');
  });
});
