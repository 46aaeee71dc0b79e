import { describe, expect, it } from 'vitest';
import { checkLink, signLink } from '../../functions/platform/signed-links.ts';

const key = Buffer.alloc(32, 7);
const other = Buffer.alloc(32, 8);
const path = '/api/artifact-links/abc';

function parts(link: string) {
  const url = new URL(link, 'http://127.0.0.1');
  return {
    path: url.pathname,
    query: { expires: url.searchParams.get('expires'), signature: url.searchParams.get('signature') },
  };
}

describe('signed links (the offline stand-in for presigned URLs)', () => {
  it('a link is good until its expiry, then expired', () => {
    // Prepare
    const link = parts(signLink(key, path, 1_000));
    // Act, Assess
    expect(checkLink(key, link.path, link.query, 999)).toBe('valid');
    expect(checkLink(key, link.path, link.query, 1_000)).toBe('expired');
    expect(checkLink(key, link.path, link.query, 5_000)).toBe('expired');
  });

  it('an altered path, expiry or signature, another key or a missing part is invalid', () => {
    const link = parts(signLink(key, path, 1_000));
    expect(checkLink(key, `${path}x`, link.query, 10)).toBe('invalid');
    expect(checkLink(key, link.path, { ...link.query, expires: '2000' }, 10)).toBe('invalid');
    expect(checkLink(key, link.path, { ...link.query, signature: `${link.query.signature}A` }, 10)).toBe(
      'invalid',
    );
    const flipped = `${link.query.signature?.slice(0, -1)}${link.query.signature?.endsWith('A') ? 'B' : 'A'}`;
    expect(checkLink(key, link.path, { ...link.query, signature: flipped }, 10)).toBe('invalid');
    expect(checkLink(other, link.path, link.query, 10)).toBe('invalid');
    expect(checkLink(key, link.path, { expires: link.query.expires }, 10)).toBe('invalid');
    expect(checkLink(key, link.path, { signature: link.query.signature }, 10)).toBe('invalid');
    expect(checkLink(key, link.path, { ...link.query, expires: '1e3' }, 10)).toBe('invalid');
  });

  it('the same path and expiry sign the same; the link carries no key', () => {
    expect(signLink(key, path, 1_000)).toBe(signLink(key, path, 1_000.9));
    expect(signLink(key, path, 1_000)).not.toContain(key.toString('base64url'));
  });
});
