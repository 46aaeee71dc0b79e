/**
 * The kinds of sealed secret and the context each is sealed with: the AES-GCM additional authenticated data
 * (credentials-cipher.ts) and, in AWS, the KMS encryption context of its data key. One entry of the context tells
 * the kinds apart (`kind`, or `purpose` for a plugin's configuration); the stack's IAM conditions pin it
 * (`kms:EncryptionContext:<key>`, lib/data-access.ts), so a function may seal or open only the kinds it handles.
 *
 * These are the contexts the values have always been sealed with: a context that changed would leave every
 * stored value unopenable, so a new discriminator would need a versioned envelope (and both contexts granted
 * until every value is sealed again).
 */

/** The context entry that names a kind, and its values. */
export interface SecretKindMark {
  key: string;
  values: readonly string[];
}

export const SECRET_KINDS = {
  /** A project's tracker connection: a pasted token or an OAuth grant, of the source or the target. */
  trackerCredentials: { key: 'kind', values: ['source', 'target'] },
  /** A background scan's inline source credentials, kept on the scan's record while it runs. */
  scanCredentials: { key: 'kind', values: ['scan-source'] },
  /** A tenant's single sign-on client secret. */
  ssoClientSecret: { key: 'kind', values: ['sso-client-secret'] },
  /** A tenant's plugin configuration (URLs and tokens), sealed by the operator CLI. */
  pluginConfig: { key: 'purpose', values: ['plugin-config'] },
} as const satisfies Record<string, SecretKindMark>;

export type SecretKind = keyof typeof SECRET_KINDS;

/** A project's sealed tracker credentials are bound to it (every writer seals with this). */
export const credentialContext = (tenantId: string, projectId: string, kind: 'source' | 'target') => ({
  tenantId,
  projectId,
  kind,
});

/** A background scan's sealed inline credentials are bound to the scan. */
export const scanCredentialContext = (tenantId: string, scanId: string) => ({
  tenantId,
  scanId,
  kind: 'scan-source',
});

/** A tenant's sealed SSO client secret opens only for this tenant and this use. */
export const ssoSecretContext = (tenantId: string) => ({ tenantId, kind: 'sso-client-secret' });

/** A plugin's sealed configuration is bound to its tenant and plugin. */
export const pluginConfigContext = (tenantId: string, pluginKey: string) => ({
  purpose: 'plugin-config',
  tenantId,
  pluginKey,
});
