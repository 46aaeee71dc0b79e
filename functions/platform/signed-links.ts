/**
 * Expiring links signed with a key of the service (HMAC-SHA256): offline, the stand-in for an S3 presigned URL
 * (store/artifact-links.ts). A link names a path, when it expires (seconds since the epoch) and the signature of
 * both; checking it needs the key, so a link cannot be made, lengthened or pointed at another path without it.
 * Pure: no clock, no key store (the caller gives both).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const signatureOf = (key: Uint8Array, path: string, expires: number) =>
  createHmac('sha256', key).update(`${path}\n${expires}`).digest('base64url');

/** The path with its expiry and signature as query parameters (`?expires=...&signature=...`). */
export function signLink(key: Uint8Array, path: string, expires: number): string {
  const at = Math.floor(expires);
  return `${path}?expires=${at}&signature=${signatureOf(key, path, at)}`;
}

/** What a presented link is: good, past its expiry, or not one this key signed (altered, or no signature). */
export type LinkCheck = 'valid' | 'expired' | 'invalid';

/**
 * A link as presented: its path and its query's `expires` and `signature`. The signature is checked before the
 * expiry (an altered expiry is invalid, not expired), and compared in constant time.
 */
export function checkLink(
  key: Uint8Array,
  path: string,
  query: { expires?: string | null | undefined; signature?: string | null | undefined },
  nowSeconds: number,
): LinkCheck {
  const { expires, signature } = query;
  if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return 'invalid';
  const wanted = Buffer.from(signatureOf(key, path, Number(expires)));
  const given = Buffer.from(signature);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return 'invalid';
  return Number(expires) <= nowSeconds ? 'expired' : 'valid';
}
