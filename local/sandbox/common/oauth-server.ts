/**
 * The OAuth 2.0 authorization-code machinery both sandbox trackers' stand-in authorization servers share
 * (Atlassian's on the Jira sandbox, Microsoft Entra ID's on the Azure DevOps sandbox): the client registration
 * and its settings, one-time short-lived codes (with their PKCE challenge), JWT-shaped access tokens with a
 * lifetime, refresh tokens (rotated on use; whether the old one keeps working is the provider's choice), the
 * test controls (fail the next exchanges, expire every access token, revoke everything) and the counts tests
 * assert on. The providers' wire shapes live in jira/oauth.ts and ado/entra.ts.
 *
 * Time comes from `now` (the sandbox's clock); nothing here needs a test to sleep: `expireAccessTokens()`
 * ends every access token issued so far.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { badControlBody } from './addon.ts';

export type GrantType = 'authorization_code' | 'refresh_token';

export interface OAuthSettings {
  clientId: string;
  clientSecret: string;
  /** Registered callback URLs; empty: any http(s) URL is accepted. */
  redirectUris: string[];
  accessTokenTtlSeconds: number;
  /** The consenting user declines at the authorize step (access_denied back at the redirect URI). */
  decline: boolean;
}

export const OAuthSettingsSchema = z.strictObject({
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  redirectUris: z.array(z.url()),
  accessTokenTtlSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600),
  decline: z.boolean(),
});

export interface OAuthStats {
  authorizationCodeExchanges: number;
  refreshExchanges: number;
  failedExchanges: number;
  bearerRequests: number;
}

/** What the user consented to: who, which scope, for which client. */
export interface Grant {
  clientId: string;
  /** The consenting account (the provider decides what it is: an e-mail, an object id). */
  subject: string;
  /** Space-separated scopes as granted. */
  scope: string;
}

interface CodeRecord extends Grant {
  redirectUri: string;
  expiresAt: number;
  used: boolean;
  codeChallenge?: string;
  codeChallengeMethod?: string;
}

export interface AccessTokenRecord extends Grant {
  token: string;
  expiresAt: number;
  revoked: boolean;
}

interface RefreshTokenRecord extends Grant {
  revoked: boolean;
  /** Set once the token was exchanged, with Atlassian-style rotation (the old one then stops working). */
  rotated: boolean;
}

export interface IssuedTokens {
  accessToken: string;
  expiresIn: number;
  scope: string;
  refreshToken?: string;
}

/** Why a token exchange was refused; the providers map each to their own error. */
export type ExchangeFailure =
  | 'injected'
  | 'unknown_code'
  | 'expired_code'
  | 'used_code'
  | 'redirect_mismatch'
  | 'client_mismatch'
  | 'pkce_mismatch'
  | 'unknown_refresh_token'
  | 'revoked_refresh_token'
  | 'rotated_refresh_token';

export type ExchangeResult = { ok: true; tokens: IssuedTokens } | { ok: false; failure: ExchangeFailure };

export interface OAuthServerOptions {
  defaults: OAuthSettings;
  now?: () => number;
  /** Atlassian: the exchanged refresh token stops working at once. Entra: it stays valid. */
  rotation: 'invalidate-old' | 'keep-old';
  /** Claims of the JWT-shaped access token (the server adds nothing of its own). */
  claims(grant: Grant, iat: number, exp: number): Record<string, unknown>;
  /** JOSE header of the access token. */
  header?: Record<string, unknown>;
  /** Prefix of refresh tokens, for readability in logs. */
  refreshTokenPrefix?: string;
  /** Lifetime of authorization codes, seconds (both providers: 10 minutes). */
  codeTtlSeconds?: number;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');

/** A UUID-shaped id, stable for a text. */
export function stableUuid(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** RFC 7636 S256: base64url(sha256(verifier)). */
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export const hasScope = (scope: string, wanted: string) => scope.split(/\s+/).includes(wanted);

export class OAuthServer {
  settings: OAuthSettings;
  stats: OAuthStats = OAuthServer.zeroStats();
  /** Armed failures: the next `count` exchanges of `grant` answer invalid_grant. */
  failNext: { count: number; grant: GrantType | 'any' } = { count: 0, grant: 'any' };
  private codes = new Map<string, CodeRecord>();
  private accessTokens = new Map<string, AccessTokenRecord>();
  private refreshTokens = new Map<string, RefreshTokenRecord>();
  readonly now: () => number;

  constructor(private readonly opts: OAuthServerOptions) {
    this.settings = { ...opts.defaults, redirectUris: [...opts.defaults.redirectUris] };
    this.now = opts.now ?? Date.now;
  }

  private static zeroStats(): OAuthStats {
    return { authorizationCodeExchanges: 0, refreshExchanges: 0, failedExchanges: 0, bearerRequests: 0 };
  }

  /** Back to the configured defaults: settings, no tokens, no armed failures, zero counts. */
  reset(): void {
    this.settings = { ...this.opts.defaults, redirectUris: [...this.opts.defaults.redirectUris] };
    this.stats = OAuthServer.zeroStats();
    this.failNext = { count: 0, grant: 'any' };
    this.codes.clear();
    this.accessTokens.clear();
    this.refreshTokens.clear();
  }

  isClient(clientId: string | undefined): boolean {
    return clientId === this.settings.clientId;
  }

  secretMatches(secret: string | undefined): boolean {
    return secret === this.settings.clientSecret;
  }

  /** An http(s) URL, and one of the registered ones when any are registered. */
  redirectAllowed(uri: string | undefined): uri is string {
    if (!uri) return false;
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    return this.settings.redirectUris.length === 0 || this.settings.redirectUris.includes(uri);
  }

  issueCode(
    grant: Grant & { redirectUri: string; codeChallenge?: string; codeChallengeMethod?: string },
  ): string {
    const code = randomToken(24);
    const ttl = this.opts.codeTtlSeconds ?? 600;
    this.codes.set(code, { ...grant, expiresAt: this.now() + ttl * 1000, used: false });
    return code;
  }

  /** Consumes an armed failure for this grant, if one is armed. */
  private injectedFailure(grant: GrantType): boolean {
    const f = this.failNext;
    if (f.count <= 0 || (f.grant !== 'any' && f.grant !== grant)) return false;
    this.failNext = { ...f, count: f.count - 1 };
    return true;
  }

  /** Counts a token request refused before its grant was looked at (malformed, client authentication). */
  countRefusal(): void {
    this.stats.failedExchanges++;
  }

  private refused(failure: ExchangeFailure): ExchangeResult {
    this.stats.failedExchanges++;
    return { ok: false, failure };
  }

  /** The authorization_code grant; the client is already authenticated. */
  redeemCode(input: {
    clientId: string;
    code: string | undefined;
    redirectUri: string | undefined;
    codeVerifier?: string | undefined;
    /** Entra may narrow the scope at the token step; absent: the authorized scope. */
    scope?: string | undefined;
  }): ExchangeResult {
    if (this.injectedFailure('authorization_code')) return this.refused('injected');
    const record = input.code ? this.codes.get(input.code) : undefined;
    if (!record) return this.refused('unknown_code');
    if (record.clientId !== input.clientId) return this.refused('client_mismatch');
    if (record.used) return this.refused('used_code');
    if (this.now() >= record.expiresAt) return this.refused('expired_code');
    if (record.redirectUri !== input.redirectUri) return this.refused('redirect_mismatch');
    if (record.codeChallenge !== undefined) {
      const verifier = input.codeVerifier ?? '';
      const expected = record.codeChallengeMethod === 'plain' ? verifier : s256(verifier);
      if (!verifier || expected !== record.codeChallenge) return this.refused('pkce_mismatch');
    }
    record.used = true;
    this.stats.authorizationCodeExchanges++;
    const grant = { clientId: record.clientId, subject: record.subject, scope: input.scope ?? record.scope };
    return { ok: true, tokens: this.issueTokens(grant, hasScope(record.scope, 'offline_access')) };
  }

  /** The refresh_token grant; the client is already authenticated. A refused token is never consumed. */
  refresh(input: {
    clientId: string;
    refreshToken: string | undefined;
    scope?: string | undefined;
  }): ExchangeResult {
    if (this.injectedFailure('refresh_token')) return this.refused('injected');
    const record = input.refreshToken ? this.refreshTokens.get(input.refreshToken) : undefined;
    if (!record) return this.refused('unknown_refresh_token');
    if (record.clientId !== input.clientId) return this.refused('client_mismatch');
    if (record.revoked) return this.refused('revoked_refresh_token');
    if (record.rotated) return this.refused('rotated_refresh_token');
    if (this.opts.rotation === 'invalidate-old') record.rotated = true;
    this.stats.refreshExchanges++;
    const grant = { clientId: record.clientId, subject: record.subject, scope: input.scope ?? record.scope };
    const tokens = this.issueTokens(grant, true);
    // The new refresh token carries the consent's scope (offline_access included), whatever the access token got.
    if (tokens.refreshToken) {
      const issued = this.refreshTokens.get(tokens.refreshToken);
      if (issued) issued.scope = record.scope;
    }
    return { ok: true, tokens };
  }

  private issueTokens(grant: Grant, withRefresh: boolean): IssuedTokens {
    const ttl = this.settings.accessTokenTtlSeconds;
    const iat = Math.floor(this.now() / 1000);
    const header = this.opts.header ?? { alg: 'RS256', typ: 'JWT' };
    const accessToken = [
      b64url(header),
      b64url(this.opts.claims(grant, iat, iat + ttl)),
      randomToken(64), // a signature nobody can verify: the token is opaque to its holder anyway
    ].join('.');
    this.accessTokens.set(accessToken, {
      ...grant,
      token: accessToken,
      expiresAt: this.now() + ttl * 1000,
      revoked: false,
    });
    const tokens: IssuedTokens = { accessToken, expiresIn: ttl, scope: grant.scope };
    if (withRefresh) {
      const refreshToken = `${this.opts.refreshTokenPrefix ?? ''}${randomToken(48)}`;
      this.refreshTokens.set(refreshToken, { ...grant, revoked: false, rotated: false });
      tokens.refreshToken = refreshToken;
    }
    return tokens;
  }

  /** The live access token presented as `Authorization: Bearer ...`; undefined when absent, unknown, expired or revoked. */
  authenticate(authorization: string | undefined): AccessTokenRecord | undefined {
    const token = bearerToken(authorization);
    const record = token ? this.accessTokens.get(token) : undefined;
    if (!record || record.revoked || this.now() >= record.expiresAt) return undefined;
    return record;
  }

  /** Every access token issued so far expires now (tokens issued later live their full lifetime). */
  expireAccessTokens(): number {
    const now = this.now();
    let count = 0;
    for (const t of this.accessTokens.values()) {
      if (t.expiresAt > now) {
        t.expiresAt = now;
        count++;
      }
    }
    return count;
  }

  /** The user removed the app: every access and refresh token issued so far stops working. */
  revokeAll(): { accessTokens: number; refreshTokens: number } {
    for (const t of this.accessTokens.values()) t.revoked = true;
    for (const t of this.refreshTokens.values()) t.revoked = true;
    return { accessTokens: this.accessTokens.size, refreshTokens: this.refreshTokens.size };
  }
}

/** The token of an `Authorization: Bearer <token>` header, if that is what it is. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

const FailNextSchema = z.strictObject({
  count: z.number().int().min(0).max(1000).optional(),
  grant: z.enum(['authorization_code', 'refresh_token', 'any']).optional(),
});

/**
 * The OAuth test controls under `/_sandbox/{name}/oauth` (see README, Sandbox trackers), and the reset: a
 * `POST /_sandbox/reset` brings the settings back to the configured defaults and forgets every token.
 * `extra` validates provider-only settings (Entra's tenantId) kept beside the shared ones.
 */
export function registerOAuthControls<X extends Record<string, unknown>>(
  app: FastifyInstance,
  server: OAuthServer,
  name: string,
  extra?: { schema: z.ZodType<Partial<X>>; get(): X; set(value: Partial<X>): void; reset(): void },
): void {
  const base = `/_sandbox/${name}/oauth`;
  app.addHook('onRequest', async (req) => {
    if (req.method === 'POST' && req.url.split('?')[0] === '/_sandbox/reset') {
      server.reset();
      extra?.reset();
    }
  });
  const describe = () => ({ ...server.settings, ...(extra?.get() ?? {}) });
  app.get(base, async () => describe());
  app.put(base, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const sharedKeys = Object.keys(OAuthSettingsSchema.shape);
    const shared: Record<string, unknown> = {};
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body)) (sharedKeys.includes(k) ? shared : rest)[k] = v;
    const parsed = OAuthSettingsSchema.partial().safeParse(shared);
    if (!parsed.success) return badControlBody(reply, parsed.error);
    let extraValue: Partial<X> | undefined;
    if (extra) {
      const e = extra.schema.safeParse(rest);
      if (!e.success) return badControlBody(reply, e.error);
      extraValue = e.data;
    } else if (Object.keys(rest).length > 0) {
      return reply.code(400).send({ message: Object.keys(rest).map((k) => `${k}: unknown setting`) });
    }
    server.settings = { ...server.settings, ...parsed.data };
    if (extra && extraValue) extra.set(extraValue);
    return describe();
  });
  app.post(`${base}/fail-next`, async (req, reply) => {
    const parsed = FailNextSchema.safeParse(req.body ?? {});
    if (!parsed.success) return badControlBody(reply, parsed.error);
    server.failNext = { count: parsed.data.count ?? 1, grant: parsed.data.grant ?? 'any' };
    return server.failNext;
  });
  app.post(`${base}/expire-access-tokens`, async () => ({ expired: server.expireAccessTokens() }));
  app.post(`${base}/revoke`, async () => ({ revoked: server.revokeAll() }));
  app.get(`${base}/stats`, async () => server.stats);
}
