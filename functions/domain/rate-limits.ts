/**
 * Who a rate limit counts: a client address (an IPv6 client by its /64), and for password login the e-mail
 * address and the address with its tenant. Pure: the counting itself is the store's (RATE# windows).
 */
import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { LoginFailureLimits } from '#platform/config.ts';

/**
 * The client a per-address limit counts. An IPv6 address stands for its /64: one host (one customer line, one
 * cloud instance) is routinely given a whole /64, so counting single addresses would hand it 2^64 budgets. An
 * IPv4-mapped IPv6 address is its IPv4 address; anything unparseable is counted as it is.
 */
export function clientOf(sourceIp: string): string {
  if (!ipaddr.isValid(sourceIp)) return sourceIp;
  const parsed = ipaddr.parse(sourceIp);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${v6.toString()}/64`).toString()}/64`;
}

/** Failed logins are counted in fixed windows of this length (an account's lock lasts at most this long). */
export const LOGIN_FAILURE_WINDOW_SECONDS = 15 * 60;

export interface LoginCounter {
  /** The counter's name (a RATE# bucket). */
  bucket: 'login-address' | 'login-account';
  /** Whose: a SHA-256, so the table holds no list of the addresses attacked. */
  subject: string;
  /** Failed logins allowed in a window. */
  limit: number;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * The counters one password login counts against, keyed by what the request names (never by what the table
 * holds), so a known and an unknown address take the same path.
 */
export function loginCounters(email: string, tenantId: string | undefined, limits: LoginFailureLimits) {
  const address = email.trim().toLowerCase();
  return [
    { bucket: 'login-address', subject: sha256(address), limit: limits.perAddress },
    { bucket: 'login-account', subject: sha256(`${address}\n${tenantId ?? '*'}`), limit: limits.perAccount },
  ] satisfies LoginCounter[];
}
