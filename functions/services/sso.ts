/**
 * Enterprise single sign-on (OpenID Connect, authorization code with PKCE): the start of a browser's sign-in
 * and its completion at the callback. A sign-in either passes every check and ends in the same session
 * password login gives, or leaves nothing behind (no user, no link, no refresh-token family). Failures are
 * logged with their reason, never with a code, token, state or secret. The configuration: ./sso-config.ts.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import {
  DiscoveryError,
  discover,
  exchangeCode,
  IdTokenError,
  TokenRequestError,
  verifyIdToken,
} from '#adapters/oidc-client.ts';
import { resolveReturnTo, safeOAuthError } from '#domain/redirects.ts';
import {
  authorizationUrl,
  callbackUrl,
  emailDomain,
  isDomainAllowed,
  SSO_ATTEMPT_TTL_SECONDS,
  SSO_PROVISIONED_ROLE,
} from '#domain/sso.ts';
import { nowEpochSeconds } from '#platform/clock.ts';
import { config } from '#platform/config.ts';
import { type CredentialCipher, credentialCipher } from '#platform/credentials-cipher.ts';
import { errors, type HttpError } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { ssoSecretContext } from '#platform/secret-contexts.ts';
import { sha256Url } from '#platform/tokens.ts';
import type { Store } from '#store/index.ts';
import type { Invitation } from '#store/invitations.ts';
import type { SsoConfig } from '#store/sso.ts';
import type { SsoIdentity, User } from '#store/users.ts';
import { type Session, startSession } from './auth.ts';
import { inviterStillAllows } from './invitations.ts';

const sha256 = sha256Url;
const random = () => randomBytes(32).toString('base64url');

export interface StartedSignIn {
  location: string;
  /** The browser-binding cookie's value; only its hash is stored. */
  binding: string;
}

/** Records a one-time attempt and answers where to send the browser (the provider's authorization endpoint). */
export async function startSignIn(
  store: Store,
  slug: string,
  returnToParam: string | undefined,
  apiBase: string,
): Promise<StartedSignIn> {
  const returnTo = resolveReturnTo(returnToParam, config().appUrl);
  if (!returnTo)
    throw errors.validation([`returnTo must be a path or a URL of the web app (${config().appUrl})`]);
  const tenantId = await store.sso.tenantOfSlug(slug);
  const settings = tenantId ? await store.sso.getConfig(tenantId) : undefined;
  // An unknown slug and a disabled configuration answer alike.
  if (!settings?.enabled) throw errors.ssoNotConfigured(`Single sign-on is not available for ${slug}`);
  let metadata: Awaited<ReturnType<typeof discover>>;
  try {
    metadata = await discover(settings.issuer);
  } catch (err) {
    logger.warn('sso start failed: discovery', {
      tenantId: settings.tenantId,
      reason: (err as Error).message,
    });
    throw errors.ssoProviderUnavailable();
  }
  const state = random();
  const nonce = random();
  const codeVerifier = random();
  const binding = random();
  const redirectUri = callbackUrl(apiBase);
  await store.sso.createAttempt(sha256(state), {
    tenantId: settings.tenantId,
    issuer: settings.issuer,
    nonce,
    codeVerifier,
    redirectUri,
    returnTo,
    bindingHash: sha256(binding),
    expiresAt: nowEpochSeconds() + SSO_ATTEMPT_TTL_SECONDS,
  });
  const location = authorizationUrl({
    authorizationEndpoint: metadata.authorizationEndpoint,
    clientId: settings.clientId,
    redirectUri,
    state,
    nonce,
    codeChallenge: sha256(codeVerifier),
  });
  return { location, binding };
}

export interface CallbackInput {
  state?: string | undefined;
  code?: string | undefined;
  iss?: string | undefined;
  error?: string | undefined;
  binding?: string | undefined;
}

export interface CompletedSignIn {
  session: Session;
  returnTo: string;
}

/** Logs the refusal's reason (no secret values) and answers the error to throw. */
function refuse(error: HttpError, reason: string, tenantId?: string): HttpError {
  logger.warn('sso sign-in refused', { code: error.code, reason, ...(tenantId ? { tenantId } : {}) });
  return error;
}

const sameHash = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The callback: consumes the attempt, exchanges the code, verifies the ID token, then signs the user in. */
export async function completeSignIn(
  store: Store,
  input: CallbackInput,
  cipher: () => CredentialCipher = credentialCipher,
): Promise<CompletedSignIn> {
  if (!input.state) throw refuse(errors.ssoStateInvalid(), 'no state');
  const stateHash = sha256(input.state);
  // The browser binding is checked before the attempt is spent: a stranger replaying the redirect cannot
  // spoil the sign-in of the browser that started it.
  const found = await store.sso.getAttempt(stateHash);
  if (!found) throw refuse(errors.ssoStateInvalid(), 'unknown or used state');
  if (!input.binding || !sameHash(sha256(input.binding), found.bindingHash))
    throw refuse(errors.ssoStateInvalid(), 'browser binding cookie missing or different', found.tenantId);
  const attempt = await store.sso.consumeAttempt(stateHash);
  if (!attempt) throw refuse(errors.ssoStateInvalid(), 'unknown or used state');
  const { tenantId } = attempt;
  if (attempt.expiresAt <= nowEpochSeconds()) throw refuse(errors.ssoStateInvalid(), 'expired', tenantId);
  if (input.error) {
    const oauthError = safeOAuthError(input.error);
    throw refuse(errors.ssoProviderError(oauthError), `provider error ${oauthError}`, tenantId);
  }
  if (!input.code) throw refuse(errors.validation(['code is required']), 'no code', tenantId);
  const settings = await store.sso.getConfig(tenantId);
  if (!settings?.enabled || settings.issuer !== attempt.issuer)
    throw refuse(errors.ssoNotConfigured(), 'configuration removed or changed during sign-in', tenantId);
  // RFC 9207: an `iss` in the response must be our provider's (mix-up defence).
  if (input.iss !== undefined && input.iss !== settings.issuer)
    throw refuse(errors.ssoIssuerMismatch(), 'iss parameter mismatch', tenantId);

  const claims = await idTokenClaims(settings, attempt, input.code, cipher);
  const identity: SsoIdentity = { issuer: settings.issuer, subject: String(claims.sub) };
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
  // Microsoft Entra ID sends no email_verified: its optional claim xms_edov says the domain owner verified it.
  const verified = claims.email_verified === true || claims.xms_edov === true;
  if (!email || !emailDomain(email) || !verified)
    throw refuse(errors.ssoEmailNotVerified(), 'no verified e-mail', tenantId);
  const domain = emailDomain(email) as string;
  if (!isDomainAllowed(email, settings.allowedDomains))
    throw refuse(errors.ssoDomainNotAllowed(domain), `domain ${domain} not allowed`, tenantId);

  const user = await userFor(store, settings, identity, email);
  const session = await startSession(store, user);
  logger.info('sso sign-in', { tenantId, userId: user.id });
  return { session, returnTo: attempt.returnTo };
}

async function idTokenClaims(
  settings: SsoConfig,
  attempt: { nonce: string; codeVerifier: string; redirectUri: string },
  code: string,
  cipher: () => CredentialCipher,
): Promise<JWTPayload> {
  const { tenantId } = settings;
  try {
    const metadata = await discover(settings.issuer);
    const clientSecret = await cipher().open(settings.clientSecret, ssoSecretContext(tenantId));
    const idToken = await exchangeCode(
      metadata,
      { clientId: settings.clientId, clientSecret },
      { code, redirectUri: attempt.redirectUri, codeVerifier: attempt.codeVerifier },
    );
    return await verifyIdToken(metadata, idToken, { clientId: settings.clientId, nonce: attempt.nonce });
  } catch (err) {
    if (err instanceof TokenRequestError) {
      if (err.oauthError) {
        const oauthError = safeOAuthError(err.oauthError);
        throw refuse(errors.ssoCodeRejected(oauthError), `${err.reason}: ${oauthError}`, tenantId);
      }
      throw refuse(errors.ssoProviderUnavailable(), err.reason, tenantId);
    }
    if (err instanceof IdTokenError)
      throw refuse(errors.ssoIdTokenInvalid(err.message), `id token: ${err.message}`, tenantId);
    if (err instanceof DiscoveryError) throw refuse(errors.ssoProviderUnavailable(), err.message, tenantId);
    throw err;
  }
}

/**
 * The user to sign in: the one linked to this provider identity; else this tenant's user with the e-mail
 * (linked now, unless it is linked to another identity of the provider); else a new user with no password:
 * the invited role when the address has a pending invitation (which this accepts), else a member, unless the
 * address or the identity was removed from the tenant (then nobody is made until someone invites it again).
 * Only this tenant's users are looked at: addresses are unique per tenant, so what a tenant's own provider
 * asserts makes or finds a user of that tenant alone, and never claims, blocks or reveals another tenant's
 * user with the same address (docs/security.md).
 */
async function userFor(
  store: Store,
  settings: SsoConfig,
  identity: SsoIdentity,
  email: string,
): Promise<User> {
  const { tenantId } = settings;
  const linked = await store.users.findBySsoIdentity(tenantId, identity);
  if (linked) return linked;
  const existing = await store.users.findInTenant(tenantId, email);
  if (existing) {
    if (existing.sso && existing.sso.issuer === identity.issuer && existing.sso.subject !== identity.subject)
      throw refuse(
        errors.ssoAccountNotAllowed(),
        'e-mail linked to another subject of the provider',
        tenantId,
      );
    if (!(await store.users.linkSsoIdentity(tenantId, existing.id, identity)))
      throw refuse(errors.ssoAccountNotAllowed(), 'identity link refused (linked meanwhile)', tenantId);
    return { ...existing, sso: identity };
  }
  // An invited address signing in through the tenant's provider accepts its invitation (the latest one whose
  // inviter may still send it): the invited role. The others are spent with it.
  const invitation = await validInvitation(store, await store.invitations.takeForAddress(tenantId, email));
  const created = await store.users.create({
    tenantId,
    email,
    role: invitation?.role ?? SSO_PROVISIONED_ROLE,
    sso: identity,
    ifRemoved: invitation ? 'clear' : 'refuse',
  });
  if (!created.ok)
    throw refuse(
      errors.ssoAccountNotAllowed(),
      created.reason === 'removed'
        ? 'removed from the tenant: not provisioned again until the address is invited'
        : `user not created: ${created.reason}`,
      tenantId,
    );
  logger.info('sso user created', {
    tenantId,
    userId: created.user.id,
    role: created.user.role,
    ...(invitation ? { invitationId: invitation.id } : {}),
  });
  return created.user;
}

/** The latest of the invitations whose inviter may still send it; undefined when none. */
async function validInvitation(store: Store, taken: Invitation[]): Promise<Invitation | undefined> {
  for (const invitation of [...taken].reverse()) {
    if (await inviterStillAllows(store, invitation)) return invitation;
    logger.warn('invitation withdrawn at sign-in: its inviter may no longer send it', {
      tenantId: invitation.tenantId,
      invitationId: invitation.id,
    });
  }
  return undefined;
}
