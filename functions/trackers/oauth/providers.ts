/**
 * The two OAuth 2.0 authorization servers the trackers use: Atlassian (auth.atlassian.com: JSON token requests,
 * rotating refresh tokens, the API gateway's accessible-resources) and Microsoft Entra ID (the v2.0 endpoints of
 * login.microsoftonline.com: form-encoded token requests, PKCE). Their URLs are configuration, so the sandbox
 * trackers can serve them offline. Token endpoint calls retry network errors and 5xx (cockatiel); a 4xx is the
 * provider's refusal (OAuthRefusal), never retried. No token or secret reaches a log line or an error message.
 */
import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import * as z from 'zod';
import { safeOAuthError } from '#domain/redirects.ts';
import {
  ATLASSIAN_SCOPES,
  type AtlassianSite,
  ENTRA_ADO_SCOPE,
  expiryOf,
  type OAuthProvider,
} from '#domain/tracker-oauth.ts';
import { OutboundRefused, outboundFetch, readTextCapped } from '#outbound/fetch.ts';
import { nowMs } from '#platform/clock.ts';

export interface OAuthTokens {
  accessToken: string;
  /** Absent when the provider kept the old one (Entra may; Atlassian always rotates). */
  refreshToken?: string;
  expiresAt: string;
  obtainedAt: string;
  scope: string;
}

/** The provider refused the grant (invalid_grant, access_denied, invalid_client ...): reconnecting is the fix. */
export class OAuthRefusal extends Error {
  override name = 'OAuthRefusal';
  constructor(
    readonly provider: OAuthProvider,
    readonly status: number,
    /** The OAuth error code: never a secret. */
    readonly error: string,
  ) {
    super(`${provider} refused the token exchange with ${status} ${error}`);
  }
}

/** The provider could not be reached or kept failing (network, 5xx) after retries: worth trying later. */
export class OAuthUnavailable extends Error {
  override name = 'OAuthUnavailable';
  constructor(
    readonly provider: OAuthProvider,
    reason: string,
  ) {
    super(`${provider} token endpoint unavailable: ${reason}`);
  }
}

export interface OAuthClientSettings {
  clientId: string;
  clientSecret: string;
}

export interface OAuthEndpoints {
  /** Atlassian: the authorization server (https://auth.atlassian.com). */
  atlassianAuthUrl: string;
  /** Atlassian: the API gateway (https://api.atlassian.com): accessible-resources and /ex/jira/{cloudId}. */
  atlassianApiUrl: string;
  /** Entra: the authority host (https://login.microsoftonline.com). */
  entraAuthorityUrl: string;
  /** Entra: the directory (tenant id, or `organizations` for any work account). */
  entraTenant: string;
}

export interface AuthorizeParams {
  state: string;
  redirectUri: string;
  /** PKCE S256 challenge (sent where the provider takes one). */
  codeChallenge: string;
}

export interface OAuthProviderClient {
  readonly name: OAuthProvider;
  authorizeUrl(p: AuthorizeParams): string;
  exchangeCode(code: string, redirectUri: string, codeVerifier: string): Promise<OAuthTokens>;
  refresh(refreshToken: string): Promise<OAuthTokens>;
}

const TokenResponse = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.coerce.number().positive(),
  scope: z.string().default(''),
});

const TIMEOUT_MS = 15_000;
/** A token response is a few kilobytes. */
const TOKEN_MAX_BYTES = 256 * 1024;
const trim = (url: string) => url.replace(/\/+$/, '');

class Transient extends Error {}

const policy = retry(
  handleWhen((e) => e instanceof Transient),
  { maxAttempts: 2, backoff: new ExponentialBackoff({ initialDelay: 200, maxDelay: 2_000 }) },
);

/** POSTs to a token endpoint: the tokens, an OAuthRefusal for a 4xx, OAuthUnavailable when it cannot answer. */
async function tokenRequest(
  provider: OAuthProvider,
  url: string,
  body: { json: Record<string, string> } | { form: Record<string, string> },
): Promise<OAuthTokens> {
  let response: Response;
  try {
    response = await policy.execute(async () => {
      let r: Response;
      try {
        // The outbound policy: the providers' hosts are on the tracker allow-list (functions/outbound/rules.ts).
        // No redirect is followed: the body carries the client secret and the code or refresh token, and the
        // token endpoint answers itself (RFC 6749 section 3.2 names one endpoint; a 3xx is an error here).
        r = await outboundFetch(url, {
          destination: 'tracker',
          redirect: 'error',
          method: 'POST',
          headers: {
            Accept: 'application/json',
            'Content-Type': 'json' in body ? 'application/json' : 'application/x-www-form-urlencoded',
          },
          body: 'json' in body ? JSON.stringify(body.json) : new URLSearchParams(body.form).toString(),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (err) {
        if (err instanceof OutboundRefused) throw err;
        throw new Transient(err instanceof Error ? err.name : 'network error');
      }
      if (r.status >= 500 || r.status === 429) {
        await r.body?.cancel();
        throw new Transient(`answered ${r.status}`);
      }
      return r;
    });
  } catch (err) {
    throw new OAuthUnavailable(provider, err instanceof Error ? err.message : 'unreachable');
  }
  const payload = (await readTextCapped(response, TOKEN_MAX_BYTES)
    .then((text) => JSON.parse(text))
    .catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    const error =
      typeof payload.error === 'string' ? safeOAuthError(payload.error) : `http_${response.status}`;
    throw new OAuthRefusal(provider, response.status, error);
  }
  const parsed = TokenResponse.safeParse(payload);
  if (!parsed.success) throw new OAuthRefusal(provider, response.status, 'malformed_token_response');
  const t = parsed.data;
  // One instant for both: read twice, the clock could tick between, and the token's lifetime (which decides when
  // it is refreshed) came out a millisecond short.
  const obtained = nowMs();
  return {
    accessToken: t.access_token,
    ...(t.refresh_token ? { refreshToken: t.refresh_token } : {}),
    expiresAt: expiryOf(t.expires_in, obtained),
    obtainedAt: new Date(obtained).toISOString(),
    scope: t.scope,
  };
}

export class AtlassianOAuth implements OAuthProviderClient {
  readonly name = 'atlassian' as const;
  constructor(
    private readonly client: OAuthClientSettings,
    private readonly endpoints: Pick<OAuthEndpoints, 'atlassianAuthUrl' | 'atlassianApiUrl'>,
  ) {}

  authorizeUrl(p: AuthorizeParams): string {
    const url = new URL(`${trim(this.endpoints.atlassianAuthUrl)}/authorize`);
    url.search = new URLSearchParams({
      audience: 'api.atlassian.com',
      client_id: this.client.clientId,
      scope: ATLASSIAN_SCOPES,
      redirect_uri: p.redirectUri,
      state: p.state,
      response_type: 'code',
      prompt: 'consent',
    }).toString();
    return url.toString();
  }

  exchangeCode(code: string, redirectUri: string): Promise<OAuthTokens> {
    return tokenRequest('atlassian', `${trim(this.endpoints.atlassianAuthUrl)}/oauth/token`, {
      json: {
        grant_type: 'authorization_code',
        client_id: this.client.clientId,
        client_secret: this.client.clientSecret,
        code,
        redirect_uri: redirectUri,
      },
    });
  }

  refresh(refreshToken: string): Promise<OAuthTokens> {
    return tokenRequest('atlassian', `${trim(this.endpoints.atlassianAuthUrl)}/oauth/token`, {
      json: {
        grant_type: 'refresh_token',
        client_id: this.client.clientId,
        client_secret: this.client.clientSecret,
        refresh_token: refreshToken,
      },
    });
  }

  /** The Jira sites the grant reaches. A 401 here is a refusal like the token endpoint's. */
  async accessibleResources(accessToken: string): Promise<AtlassianSite[]> {
    const response = await outboundFetch(
      `${trim(this.endpoints.atlassianApiUrl)}/oauth/token/accessible-resources`,
      {
        destination: 'tracker',
        headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      },
    ).catch((err: unknown) => {
      throw new OAuthUnavailable('atlassian', err instanceof Error ? err.name : 'unreachable');
    });
    if (response.status >= 500) throw new OAuthUnavailable('atlassian', `answered ${response.status}`);
    if (!response.ok) throw new OAuthRefusal('atlassian', response.status, 'accessible_resources_refused');
    const sites = z
      .array(z.object({ id: z.string(), url: z.string(), name: z.string().default('') }))
      .safeParse(
        await readTextCapped(response)
          .then((text) => JSON.parse(text))
          .catch(() => undefined),
      );
    if (!sites.success)
      throw new OAuthRefusal('atlassian', response.status, 'malformed_accessible_resources');
    return sites.data;
  }

  /** Where Jira's REST API answers a 3LO token: the gateway, never the site's own host. */
  apiBaseUrl(cloudId: string): string {
    return `${trim(this.endpoints.atlassianApiUrl)}/ex/jira/${encodeURIComponent(cloudId)}`;
  }
}

export class EntraOAuth implements OAuthProviderClient {
  readonly name = 'entra' as const;
  constructor(
    private readonly client: OAuthClientSettings,
    private readonly endpoints: Pick<OAuthEndpoints, 'entraAuthorityUrl' | 'entraTenant'>,
  ) {}

  private endpoint(kind: 'authorize' | 'token'): string {
    const tenant = encodeURIComponent(this.endpoints.entraTenant);
    return `${trim(this.endpoints.entraAuthorityUrl)}/${tenant}/oauth2/v2.0/${kind}`;
  }

  authorizeUrl(p: AuthorizeParams): string {
    const url = new URL(this.endpoint('authorize'));
    url.search = new URLSearchParams({
      client_id: this.client.clientId,
      response_type: 'code',
      redirect_uri: p.redirectUri,
      response_mode: 'query',
      scope: ENTRA_ADO_SCOPE,
      state: p.state,
      code_challenge: p.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return url.toString();
  }

  exchangeCode(code: string, redirectUri: string, codeVerifier: string): Promise<OAuthTokens> {
    return tokenRequest('entra', this.endpoint('token'), {
      form: {
        grant_type: 'authorization_code',
        client_id: this.client.clientId,
        client_secret: this.client.clientSecret,
        code,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
        scope: ENTRA_ADO_SCOPE,
      },
    });
  }

  refresh(refreshToken: string): Promise<OAuthTokens> {
    return tokenRequest('entra', this.endpoint('token'), {
      form: {
        grant_type: 'refresh_token',
        client_id: this.client.clientId,
        client_secret: this.client.clientSecret,
        refresh_token: refreshToken,
        scope: ENTRA_ADO_SCOPE,
      },
    });
  }
}
