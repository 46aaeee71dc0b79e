/**
 * The one OpenID Connect relying-party client: discovery (cached per issuer), the authorization code exchange
 * and ID token verification with jose. Nothing here logs a code, token or secret; failures are typed so the
 * service can word them.
 */
import { createRemoteJWKSet, customFetch, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { OutboundRefused, outboundFetch, outboundRules, readTextCapped } from '#outbound/fetch.ts';
import { checkUrl, REFUSED_MESSAGE } from '#outbound/rules.ts';
import { nowMs } from '#platform/clock.ts';

const DISCOVERY_TTL_MS = 10 * 60_000;
/** A discovery document is a few kilobytes: anything much larger is not one. */
const DISCOVERY_MAX_BYTES = 512 * 1024;
const HTTP_TIMEOUT_MS = 10_000;
/** Asymmetric algorithms only: a client secret (HS*) or `none` never signs an ID token we accept. */
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const DEFAULT_ALGORITHMS = ['RS256', 'ES256'];
const CLOCK_TOLERANCE_SECONDS = 60;

export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  algorithms: string[];
  /** client_secret_basic unless the provider offers only client_secret_post. */
  tokenAuthMethod: 'client_secret_basic' | 'client_secret_post';
}

/** Discovery failed or the document does not fit: `problems` are sentences for the owner. */
export class DiscoveryError extends Error {
  override name = 'DiscoveryError';
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

/** The token endpoint answered an OAuth error (`oauthError`), or could not be used at all (no `oauthError`). */
export class TokenRequestError extends Error {
  override name = 'TokenRequestError';
  constructor(
    readonly reason: string,
    readonly oauthError?: string,
  ) {
    super(reason);
  }
}

export class IdTokenError extends Error {
  override name = 'IdTokenError';
}

const discoveryCache = new Map<string, { at: number; metadata: ProviderMetadata }>();
const jwksCache = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * A provider's endpoint under the outbound policy: any public host (a tenant names its own provider), https in
 * prod, no redirect followed (the provider's own endpoints answer directly).
 */
const providerFetch = (url: string, init: RequestInit = {}) =>
  outboundFetch(url, {
    ...init,
    destination: 'public',
    redirect: 'error',
    signal: init.signal ?? AbortSignal.timeout(HTTP_TIMEOUT_MS),
  });

/** Reads and checks `<issuer>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0, section 4). */
export async function discover(issuer: string, opts: { fresh?: boolean } = {}): Promise<ProviderMetadata> {
  const cached = discoveryCache.get(issuer);
  if (!opts.fresh && cached && nowMs() - cached.at < DISCOVERY_TTL_MS) return cached.metadata;
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let doc: Record<string, unknown>;
  try {
    const res = await providerFetch(url, { headers: { Accept: 'application/json' } });
    // One answer for a missing, failing, unreachable or refused document: the tenant picks the URL, so the
    // answer must not tell what listens there (no status, no socket error).
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`answered ${res.status}`);
    }
    doc = JSON.parse(await readTextCapped(res, DISCOVERY_MAX_BYTES)) as Record<string, unknown>;
    if (typeof doc !== 'object' || doc === null) throw new Error('not a JSON object');
  } catch (err) {
    if (err instanceof OutboundRefused) throw new DiscoveryError([`issuer: ${REFUSED_MESSAGE}`]);
    throw new DiscoveryError([
      `issuer: no usable discovery document at ${url} (it must answer 200 with a JSON object)`,
    ]);
  }
  const metadata = checkMetadata(issuer, url, doc);
  discoveryCache.set(issuer, { at: nowMs(), metadata });
  return metadata;
}

function checkMetadata(issuer: string, url: string, doc: Record<string, unknown>): ProviderMetadata {
  const problems: string[] = [];
  if (doc.issuer !== issuer)
    problems.push(
      `issuer: the discovery document at ${url} names the issuer ${JSON.stringify(doc.issuer)}, not ${issuer} (they must be equal exactly)`,
    );
  // The endpoints the document names are requested (token, JWKS) or shown to browsers (authorization): the
  // same policy as the issuer, checked before anything is saved.
  const rules = outboundRules();
  for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'])
    if (!str(doc[field])) problems.push(`issuer: the discovery document has no ${field}`);
    else if (!checkUrl(doc[field], rules, 'public').ok)
      problems.push(`issuer: the discovery document's ${field}: ${REFUSED_MESSAGE}`);
  const challenge = doc.code_challenge_methods_supported;
  if (Array.isArray(challenge) && !challenge.includes('S256'))
    problems.push('issuer: the provider does not support PKCE with S256 (code_challenge_methods_supported)');
  const offered = Array.isArray(doc.id_token_signing_alg_values_supported)
    ? doc.id_token_signing_alg_values_supported.filter((a): a is string => ASYMMETRIC.includes(String(a)))
    : DEFAULT_ALGORITHMS;
  if (offered.length === 0)
    problems.push('issuer: the provider signs ID tokens with no asymmetric algorithm we accept');
  const methods = doc.token_endpoint_auth_methods_supported;
  const onlyPost =
    Array.isArray(methods) &&
    !methods.includes('client_secret_basic') &&
    methods.includes('client_secret_post');
  if (Array.isArray(methods) && !methods.includes('client_secret_basic') && !onlyPost)
    problems.push('issuer: the token endpoint takes neither client_secret_basic nor client_secret_post');
  if (problems.length) throw new DiscoveryError(problems);
  return {
    issuer,
    authorizationEndpoint: doc.authorization_endpoint as string,
    tokenEndpoint: doc.token_endpoint as string,
    jwksUri: doc.jwks_uri as string,
    algorithms: offered,
    tokenAuthMethod: onlyPost ? 'client_secret_post' : 'client_secret_basic',
  };
}

/** application/x-www-form-urlencoded, as RFC 6749 section 2.3.1 wants the Basic credentials encoded. */
const formEncode = (s: string) => new URLSearchParams({ v: s }).toString().slice(2);

/** The authorization code grant with PKCE; answers the ID token. */
export async function exchangeCode(
  metadata: ProviderMetadata,
  client: { clientId: string; clientSecret: string },
  grant: { code: string; redirectUri: string; codeVerifier: string },
): Promise<string> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: grant.code,
    redirect_uri: grant.redirectUri,
    code_verifier: grant.codeVerifier,
  });
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
  };
  if (metadata.tokenAuthMethod === 'client_secret_post') {
    body.set('client_id', client.clientId);
    body.set('client_secret', client.clientSecret);
  } else {
    const basic = `${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`;
    headers.Authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  }
  let res: Response;
  let json: Record<string, unknown> | undefined;
  try {
    res = await providerFetch(metadata.tokenEndpoint, { method: 'POST', headers, body });
    json = await readTextCapped(res, DISCOVERY_MAX_BYTES)
      .then((text) => JSON.parse(text) as Record<string, unknown>)
      .catch(() => undefined);
  } catch (err) {
    throw new TokenRequestError(
      err instanceof OutboundRefused
        ? 'token endpoint refused by the outbound policy'
        : 'token endpoint unreachable',
    );
  }
  if (!res.ok) {
    if (res.status >= 400 && res.status < 500 && str(json?.error))
      throw new TokenRequestError(`token endpoint answered ${res.status}`, json.error);
    throw new TokenRequestError(`token endpoint answered ${res.status}`);
  }
  if (!str(json?.id_token)) throw new TokenRequestError('token response has no id_token');
  return json.id_token;
}

function jwksOf(uri: string) {
  let jwks = jwksCache.get(uri);
  if (!jwks) {
    // jose fetches the key set with the outbound policy's fetch too (its customFetch option, jose 6).
    jwks = createRemoteJWKSet(new URL(uri), {
      timeoutDuration: HTTP_TIMEOUT_MS,
      [customFetch]: async (url, options) => {
        // Read here, within the size cap; jose then parses the copy.
        const res = await providerFetch(url, options);
        const text = await readTextCapped(res, DISCOVERY_MAX_BYTES);
        return new Response(text, { status: res.status, headers: res.headers });
      },
    });
    jwksCache.set(uri, jwks);
  }
  return jwks;
}

/**
 * Signature (the provider's JWKS, its algorithms), issuer, audience, expiry (60 s tolerance), nonce, and `azp`
 * when the token names several audiences (OpenID Connect Core 3.1.3.7).
 */
export async function verifyIdToken(
  metadata: ProviderMetadata,
  idToken: string,
  expected: { clientId: string; nonce: string },
): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, jwksOf(metadata.jwksUri), {
      issuer: metadata.issuer,
      audience: expected.clientId,
      algorithms: metadata.algorithms,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(nowMs()),
      requiredClaims: ['sub', 'iat', 'exp'],
    }));
  } catch (err) {
    throw new IdTokenError(joseReason(err));
  }
  if (payload.nonce !== expected.nonce) throw new IdTokenError('nonce mismatch');
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (audiences.length > 1 && payload.azp !== expected.clientId) throw new IdTokenError('azp mismatch');
  if (payload.azp !== undefined && payload.azp !== expected.clientId) throw new IdTokenError('azp mismatch');
  return payload;
}

/** jose's error, as a short reason without any part of the token. */
function joseReason(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `claim ${err.claim} is not as expected`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the provider matches';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (err instanceof joseErrors.JWKSTimeout) return 'the key set could not be fetched in time';
  if (err instanceof joseErrors.JOSEError) return err.code;
  return 'malformed';
}
