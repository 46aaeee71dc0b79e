/**
 * The two URLs every browser redirect leg needs (sign-in, tracker connections): where the API is, for the
 * redirect URI an identity provider calls back, where the browser may be sent afterwards (the web app only:
 * no open redirect), and what of a provider's `error` parameter may be shown or logged. Pure.
 */

/** Control characters and backslashes: browsers strip or reinterpret them, so a path could become a host. */
const hasUnsafeCharacter = (s: string) =>
  [...s].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/**
 * Where the browser goes afterwards: a relative path (resolved against the web app) or an absolute URL on
 * the web app's own origin. Anything else is refused: the start URL must not be an open redirect.
 * Returns the absolute URL, or undefined when refused.
 */
export function resolveReturnTo(returnTo: string | undefined, appUrl: string): string | undefined {
  if (returnTo === undefined || returnTo === '') return appUrl;
  if (returnTo.length > 2048 || hasUnsafeCharacter(returnTo)) return undefined;
  const app = new URL(appUrl);
  if (returnTo.startsWith('/')) {
    // `//evil.example` and `/\evil.example` are other hosts to a browser.
    if (returnTo.startsWith('//')) return undefined;
    const url = new URL(returnTo, app.origin);
    return url.origin === app.origin ? url.href : undefined;
  }
  let url: URL;
  try {
    url = new URL(returnTo);
  } catch {
    return undefined;
  }
  return url.origin === app.origin && !url.username && !url.password ? url.href : undefined;
}

/**
 * The API's own base URL, for the redirect URI: API_URL when configured, else the request's own Host and
 * scheme (X-Forwarded-Proto, as a proxy in front of the local gateway sets it).
 */
export function apiBaseUrl(configured: string | undefined, headers: Record<string, string>): string {
  if (configured) return configured.replace(/\/+$/, '');
  const host = headers.host ?? '';
  if (!/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:]+\](:\d{1,5})?$/i.test(host))
    throw new Error('request has no usable Host header');
  const proto = (headers['x-forwarded-proto'] ?? 'http').split(',')[0]?.trim().toLowerCase();
  return `${proto === 'https' ? 'https' : 'http'}://${host}`;
}

/** An OAuth error code as a provider sent it, reduced to its defined character set (RFC 6749 appendix A.7). */
export function safeOAuthError(value: string): string {
  const clean = value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '').slice(0, 64);
  return clean || 'unknown_error';
}
