/**
 * A tenant's plugin configuration (URLs, credentials): checked with the plugin's schema when the operator
 * enables it, sealed with the credentials cipher, opened only by the engine when the plugin's phase runs.
 * The sealed value is bound to its tenant and plugin, so copied to another tenant or plugin it does not open.
 */

import { outboundUrlProblem } from '#outbound/validate.ts';
import type { PluginDefinition } from '#phase-kit/context.ts';
import type { CredentialCipher, SealedSecret } from '#platform/credentials-cipher.ts';
import type { EnvInput } from '#platform/env.ts';
import { pluginConfigContext } from '#platform/secret-contexts.ts';
import { describeIssue } from '#platform/validation.ts';

/** A configuration the plugin's schema refuses: one plain sentence per problem, each naming the field. */
export class PluginConfigError extends Error {
  override name = 'PluginConfigError';
  constructor(
    readonly pluginKey: string,
    readonly problems: string[],
  ) {
    super(`the ${pluginKey} configuration is not valid:\n  ${problems.join('\n  ')}`);
  }
}

/** Whether the plugin can be enabled without a configuration: its schema accepts none. */
export function needsConfig(definition: PluginDefinition): boolean {
  return !definition.configSchema.safeParse(undefined).success;
}

/**
 * The configuration as the plugin's schema reads it, or a PluginConfigError listing every problem. The
 * sentences name fields and rules, never the values given (a value may be a secret). The outbound policy's
 * settings come from the process's environment, or from `env`.
 */
export function checkPluginConfig<C>(definition: PluginDefinition<C>, raw: unknown, env?: EnvInput): C {
  const result = definition.configSchema.safeParse(raw, { reportInput: true });
  if (result.success) {
    // A plugin's service URL is reached with the tenant's plugin credential: the outbound policy's rules.
    const url = (result.data as { baseUrl?: unknown } | undefined)?.baseUrl;
    const refused =
      typeof url === 'string' ? outboundUrlProblem('config.baseUrl', url, 'public', env) : undefined;
    if (refused) throw new PluginConfigError(definition.key, [refused]);
    return result.data;
  }
  const problems = result.error.issues.flatMap((i) => describeIssue(i, 'config').split('; '));
  throw new PluginConfigError(definition.key, [...new Set(problems)]);
}

export function sealPluginConfig(
  cipher: CredentialCipher,
  tenantId: string,
  pluginKey: string,
  config: unknown,
): Promise<SealedSecret> {
  return cipher.seal(JSON.stringify(config), pluginConfigContext(tenantId, pluginKey));
}

/** The tenant's configuration for the plugin, opened and parsed; none stored reads as `undefined`. */
export async function openPluginConfig<C>(
  cipher: CredentialCipher,
  definition: PluginDefinition<C>,
  tenantId: string,
  sealed: SealedSecret | undefined,
): Promise<C> {
  const raw = sealed
    ? JSON.parse(await cipher.open(sealed, pluginConfigContext(tenantId, definition.key)))
    : undefined;
  return checkPluginConfig(definition, raw);
}

/**
 * The message with every string of the configuration in it masked: a plugin's error may quote its request
 * (a URL with a token, a header), and its message goes to the run's events, its failure report and the logs.
 */
export function redactConfig(message: string, config: unknown): string {
  const secrets: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string' && v.length >= 4) secrets.push(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) collect(x);
  };
  collect(config);
  // Longest first, so a value containing another is masked whole.
  return secrets.sort((a, b) => b.length - a.length).reduce((m, s) => m.split(s).join('***'), message);
}
