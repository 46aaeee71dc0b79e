/**
 * The cookies the API sets, built in one place so password login and single sign-on send exactly the same
 * refresh cookie.
 */
import { REFRESH_TOKEN_TTL_SECONDS } from './tokens.ts';

export const REFRESH_COOKIE = 'refresh_token';
/** The refresh cookie goes back only to the auth endpoints, never to the rest of the API. */
const REFRESH_COOKIE_PATH = '/api/auth';

export const refreshCookie = (token: string) =>
  `${REFRESH_COOKIE}=${token}; Path=${REFRESH_COOKIE_PATH}; Max-Age=${REFRESH_TOKEN_TTL_SECONDS}; HttpOnly; Secure; SameSite=Strict`;
export const clearedRefreshCookie = () =>
  `${REFRESH_COOKIE}=; Path=${REFRESH_COOKIE_PATH}; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;

export const SSO_BINDING_COOKIE = 'sso_binding';
const SSO_COOKIE_PATH = '/api/auth/sso';

/**
 * Binds a sign-in attempt to the browser that started it. Lax, not Strict: it must come back on the identity
 * provider's top-level redirect to the callback.
 */
export const ssoBindingCookie = (value: string, maxAgeSeconds: number) =>
  `${SSO_BINDING_COOKIE}=${value}; Path=${SSO_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;
export const clearedSsoBindingCookie = () =>
  `${SSO_BINDING_COOKIE}=; Path=${SSO_COOKIE_PATH}; Max-Age=0; HttpOnly; Secure; SameSite=Lax`;

export const OAUTH_BINDING_COOKIE = 'tms_oauth_binding';
/** Where the tracker providers send the browser back (GET, public): the binding cookie goes only there. */
export const OAUTH_CALLBACK_PATH = '/api/connections/oauth/callback';

/** Binds a tracker OAuth connection attempt to the browser that started it (Lax for the same reason). */
export const oauthBindingCookie = (value: string, maxAgeSeconds: number) =>
  `${OAUTH_BINDING_COOKIE}=${value}; Path=${OAUTH_CALLBACK_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;

/**
 * The request's `Cookie` header as name -> value, the first of a repeated name winning. A cookie whose value is
 * not valid percent-encoding (`%E0%A4%A`, a lone `%`) is skipped: any site on a parent domain can set one, and
 * it must not cost the request (it used to be a 500 on every route).
 */
export function parseCookieHeader(header: string | undefined): Record<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (cookies.has(name)) continue;
    const value = decodedOrUndefined(part.slice(eq + 1).trim());
    if (value !== undefined) cookies.set(name, value);
  }
  return Object.fromEntries(cookies);
}

function decodedOrUndefined(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
