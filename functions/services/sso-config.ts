/**
 * A tenant owner's single sign-on configuration: its OpenID Connect provider, checked by discovery before it
 * is stored; the client secret sealed, never answered or logged; the slug unique across tenants.
 */

import { DiscoveryError, discover } from '#adapters/oidc-client.ts';
import { callbackUrl, SSO_PROVISIONED_ROLE, type SsoConfigInput, startUrl } from '#domain/sso.ts';
import { nowIso } from '#platform/clock.ts';
import { type CredentialCipher, credentialCipher } from '#platform/credentials-cipher.ts';
import { errors } from '#platform/errors.ts';
import { logger } from '#platform/logger.ts';
import { ssoSecretContext } from '#platform/secret-contexts.ts';
import type { Store } from '#store/index.ts';
import type { SsoConfig } from '#store/sso.ts';

export interface SsoConfigView {
  slug: string;
  issuer: string;
  clientId: string;
  clientSecretSet: boolean;
  allowedDomains: string[];
  /** What single sign-on provisions: member (a configuration saved with `admin` before provisions members too). */
  defaultRole: typeof SSO_PROVISIONED_ROLE;
  enabled: boolean;
  /** Register this at the identity provider as the client's redirect URI. */
  redirectUri: string;
  /** Give this to the tenant's users: it starts their sign-in. */
  startUrl: string;
  createdAt: string;
  updatedAt: string;
}

function view(c: SsoConfig, apiBase: string): SsoConfigView {
  return {
    slug: c.slug,
    issuer: c.issuer,
    clientId: c.clientId,
    clientSecretSet: Boolean(c.clientSecret),
    allowedDomains: c.allowedDomains,
    defaultRole: SSO_PROVISIONED_ROLE,
    enabled: c.enabled,
    redirectUri: callbackUrl(apiBase),
    startUrl: startUrl(apiBase, c.slug),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

export async function getConfig(store: Store, tenantId: string, apiBase: string): Promise<SsoConfigView> {
  const current = await store.sso.getConfig(tenantId);
  if (!current) throw errors.ssoNotConfigured();
  return view(current, apiBase);
}

/**
 * Creates or replaces the configuration. The issuer is checked by its discovery document first; the secret is
 * required the first time and whenever the issuer or the client id changes, and kept when omitted otherwise.
 * The slug is claimed in the same transaction.
 */
export async function saveConfig(
  store: Store,
  tenantId: string,
  input: SsoConfigInput,
  apiBase: string,
  cipher: () => CredentialCipher = credentialCipher,
): Promise<SsoConfigView> {
  const previous = await store.sso.getConfig(tenantId);
  if (!previous && input.clientSecret === undefined)
    throw errors.validation(['clientSecret is required when single sign-on is first configured']);
  // The secret is sent to the issuer's token endpoint: kept across a change of client, it would go to whatever
  // provider a stolen owner session names.
  if (
    previous &&
    input.clientSecret === undefined &&
    (input.issuer !== previous.issuer || input.clientId !== previous.clientId)
  )
    throw errors.validation([
      'clientSecret is required when the issuer or the client id changes: the stored secret belongs to the previous client',
    ]);
  try {
    await discover(input.issuer, { fresh: true });
  } catch (err) {
    if (err instanceof DiscoveryError) throw errors.validation(err.problems);
    throw err;
  }
  const clientSecret =
    input.clientSecret === undefined
      ? (previous as SsoConfig).clientSecret
      : await cipher().seal(input.clientSecret, ssoSecretContext(tenantId));
  const now = nowIso();
  const next: SsoConfig = {
    tenantId,
    slug: input.slug,
    issuer: input.issuer,
    clientId: input.clientId,
    clientSecret,
    allowedDomains: [...new Set(input.allowedDomains)],
    defaultRole: input.defaultRole,
    enabled: input.enabled,
    createdAt: previous?.createdAt ?? now,
    updatedAt: now,
  };
  const saved = await store.sso.putConfig(next, previous);
  if (!saved.ok) {
    if (saved.reason === 'slug-taken') throw errors.ssoSlugTaken(input.slug);
    throw errors.validation(['the configuration changed while it was being saved: try again']);
  }
  logger.info('sso configuration saved', { tenantId, issuer: next.issuer, enabled: next.enabled });
  return view(next, apiBase);
}

export async function deleteConfig(store: Store, tenantId: string): Promise<void> {
  if (!(await store.sso.deleteConfig(tenantId))) throw errors.ssoNotConfigured();
  logger.info('sso configuration deleted', { tenantId });
}
