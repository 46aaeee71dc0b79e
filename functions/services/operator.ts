/**
 * What the service operator does outside the API: tenants, their users and plugin enablement. Used by the
 * operator CLI and by the offline runtime's demo seed. Input is validated before anything is written.
 */
import * as z from 'zod';
import { plainName } from '#domain/plain-text.ts';
import { findPlugin, PLUGIN_KEYS } from '#domain/plugins.ts';
import type { PluginDefinition } from '#phase-kit/context.ts';
import { type CredentialCipher, credentialCipher } from '#platform/credentials-cipher.ts';
import type { EnvInput } from '#platform/env.ts';
import { hashPassword } from '#platform/passwords.ts';
import { ROLES } from '#platform/tokens.ts';
import { describeIssue } from '#platform/validation.ts';
import { checkPluginConfig, needsConfig, PluginConfigError, sealPluginConfig } from '#plugins/config.ts';
import type { Store } from '#store/index.ts';
import type { Tenant } from '#store/tenants.ts';
import type { User } from '#store/users.ts';

export class OperatorError extends Error {
  override name = 'OperatorError';
}

function check<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value, { reportInput: true });
  if (!r.success) throw new OperatorError(r.error.issues.map((i) => describeIssue(i, 'input')).join('; '));
  return r.data;
}

const TenantInput = z.object({ name: plainName(200) });
const UserInput = z.object({
  tenantId: z.string().min(1),
  email: z.email().max(254),
  password: z.string().min(8).max(1024),
  role: z.enum(ROLES),
});
const PluginInput = z.object({ tenantId: z.string().min(1), pluginKey: z.string().min(1) });

export async function createTenant(store: Store, input: { name: string }): Promise<Tenant> {
  return store.tenants.create(check(TenantInput, input).name);
}

export async function createUser(
  store: Store,
  input: { tenantId: string; email: string; password: string; role: string },
): Promise<User> {
  const valid = check(UserInput, input);
  if (!(await store.tenants.get(valid.tenantId)))
    throw new OperatorError(`tenant ${valid.tenantId} does not exist`);
  const created = await store.users.create({
    tenantId: valid.tenantId,
    email: valid.email,
    role: valid.role,
    passwordHash: await hashPassword(valid.password),
    ifRemoved: 'clear',
  });
  if (created.ok) return created.user;
  throw new OperatorError(
    created.reason === 'email-taken'
      ? `a user with e-mail ${valid.email} already exists`
      : `tenant ${valid.tenantId} does not exist`,
  );
}

export async function listUsers(store: Store, tenantId: string): Promise<User[]> {
  if (!(await store.tenants.get(tenantId))) throw new OperatorError(`tenant ${tenantId} does not exist`);
  return store.users.list(tenantId);
}

/**
 * Enables or disables a plugin for a tenant. Enabling takes the plugin's configuration (`config`: the parsed
 * JSON the operator gave; undefined when none): checked with the plugin's schema, sealed, and stored in place of
 * any earlier one. Nothing is written when the configuration is refused, and no message quotes a value of it.
 */
export async function setPluginEnabled(
  store: Store,
  input: { tenantId: string; pluginKey: string; config?: unknown },
  enabled: boolean,
  opts: {
    definitions?: readonly PluginDefinition[];
    cipher?: () => CredentialCipher;
    /** Whose outbound policy checks the configuration's URL (default: the process's environment). */
    env?: EnvInput;
  } = {},
): Promise<void> {
  const valid = check(PluginInput, { tenantId: input.tenantId, pluginKey: input.pluginKey });
  if (!findPlugin(valid.pluginKey)) {
    throw new OperatorError(`unknown plugin ${valid.pluginKey}; known plugins: ${PLUGIN_KEYS.join(', ')}`);
  }
  if (!enabled && input.config !== undefined)
    throw new OperatorError('a configuration is given when enabling a plugin, not when disabling it');
  if (!(await store.tenants.get(valid.tenantId)))
    throw new OperatorError(`tenant ${valid.tenantId} does not exist`);
  if (!enabled) {
    await store.plugins.disable(valid.tenantId, valid.pluginKey);
    return;
  }
  // Loaded here, not with the module: the plugins bring the ADF converter and their trackers' clients (~0.3 CPU-s),
  // which every other operator command, the offline seed and each test that makes a tenant would load for nothing.
  const definitions = opts.definitions ?? (await import('#plugins/index.ts')).PLUGIN_DEFINITIONS;
  const definition = definitions.find((d) => d.key === valid.pluginKey);
  if (input.config === undefined) {
    if (definition && needsConfig(definition)) {
      // What is missing, listed as for a bad configuration: parsing an empty one names every required field.
      const problems = missingConfigProblems(definition, opts.env);
      throw new OperatorError(
        `${valid.pluginKey} needs its configuration (--config-file FILE or --config JSON):\n  ${problems.join('\n  ')}`,
      );
    }
    await store.plugins.enable(valid.tenantId, valid.pluginKey);
    return;
  }
  if (!definition) {
    throw new OperatorError(
      `this engine has no module for ${valid.pluginKey} yet, so its configuration cannot be checked: not stored`,
    );
  }
  let config: unknown;
  try {
    config = checkPluginConfig(definition, input.config, opts.env);
  } catch (err) {
    if (err instanceof PluginConfigError) throw new OperatorError(err.message);
    throw err;
  }
  let cipher: CredentialCipher;
  try {
    cipher = (opts.cipher ?? credentialCipher)();
  } catch (err) {
    throw new OperatorError((err as Error).message);
  }
  const sealed = await sealPluginConfig(cipher, valid.tenantId, valid.pluginKey, config);
  await store.plugins.enable(valid.tenantId, valid.pluginKey, sealed);
}

function missingConfigProblems(definition: PluginDefinition, env: EnvInput | undefined): string[] {
  try {
    checkPluginConfig(definition, {}, env);
    return ['config is required'];
  } catch (err) {
    if (err instanceof PluginConfigError) return err.problems;
    throw err;
  }
}
