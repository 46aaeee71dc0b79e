/**
 * Enterprise single sign-on (OpenID Connect), the pure rules: the configuration's shape, which e-mails a
 * tenant's provider may sign in, where a browser may be sent back to, and the URLs of the flow.
 */
import * as z from 'zod';

/**
 * The role single sign-on gives a person it provisions just in time (no invitation): member, always. An
 * identity provider vouches for who someone is, not for what they may manage here; an admin or owner is
 * made by an invitation or a role change, which a person of the tenant decided.
 */
export const SSO_PROVISIONED_ROLE = 'member';
/** What a configuration's `defaultRole` may hold: `admin` from before is read, and provisions a member too. */
export type SsoRole = 'admin' | typeof SSO_PROVISIONED_ROLE;

/** The browser's sign-in attempt lives this long: the IdP round trip, a login and maybe an MFA prompt. */
export const SSO_ATTEMPT_TTL_SECONDS = 10 * 60;
export const SSO_CALLBACK_PATH = '/api/auth/sso/callback';
export const SSO_COOKIE_PATH = '/api/auth/sso';
export const SSO_SCOPE = 'openid email profile';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https, or http on a loopback host (a provider on the same machine, as offline and in tests). */
export function isAcceptableIssuer(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.search || url.hash || url.username || url.password) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const SsoConfigSchema = z.strictObject({
  slug: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/,
      'must be 3-63 lower-case letters, digits or hyphens, starting and ending with a letter or digit',
    ),
  issuer: z
    .string()
    .max(2048)
    .refine(
      isAcceptableIssuer,
      'must be an https URL (http only on a loopback host), without query or fragment',
    ),
  clientId: z.string().trim().min(1).max(255),
  clientSecret: z.string().min(1).max(1024).optional(),
  allowedDomains: z
    .array(z.string().trim().toLowerCase().regex(DOMAIN, 'must be a domain name such as example.com'))
    .min(1)
    .max(50),
  defaultRole: z.enum([SSO_PROVISIONED_ROLE]),
  enabled: z.boolean().default(true),
});
export type SsoConfigInput = z.infer<typeof SsoConfigSchema>;

/** The domain part of an e-mail, lower-cased; undefined for something that is no e-mail. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return undefined;
  return email.slice(at + 1).toLowerCase();
}

/** Exact domain match, case-insensitive: `example.com` does not admit `sub.example.com` or `badexample.com`. */
export function isDomainAllowed(email: string, allowedDomains: readonly string[]): boolean {
  const domain = emailDomain(email);
  return domain !== undefined && allowedDomains.some((d) => d.toLowerCase() === domain);
}

export const callbackUrl = (apiBase: string) => `${apiBase}${SSO_CALLBACK_PATH}`;
export const startUrl = (apiBase: string, slug: string) => `${apiBase}/api/auth/sso/${slug}/start`;

export interface AuthorizationRequest {
  authorizationEndpoint: string;
  clientId: string;
  redirectUri: string;
  state: string;
  nonce: string;
  codeChallenge: string;
}

/** The authorization code request with PKCE (S256); the endpoint's own query parameters are kept. */
export function authorizationUrl(r: AuthorizationRequest): string {
  const url = new URL(r.authorizationEndpoint);
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: r.clientId,
    redirect_uri: r.redirectUri,
    scope: SSO_SCOPE,
    state: r.state,
    nonce: r.nonce,
    code_challenge: r.codeChallenge,
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}
