/**
 * What the service operator does outside the API: tenants, their users and plugin enablement. Used by the
 * operator CLI and by the offline runtime's demo seed. Input is validated before anything is written.
 */
import * as z from 'zod';
import { findPlugin, PLUGIN_KEYS } from '#domain/plugins.ts';
import { hashPassword } from '#platform/passwords.ts';
import { ROLES } from '#platform/tokens.ts';
import { describeIssue } from '#platform/validation.ts';
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

const TenantInput = z.object({ name: z.string().trim().min(1).max(200) });
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

export async function setPluginEnabled(
  store: Store,
  input: { tenantId: string; pluginKey: string },
  enabled: boolean,
): Promise<void> {
  const valid = check(PluginInput, input);
  if (!findPlugin(valid.pluginKey)) {
    throw new OperatorError(`unknown plugin ${valid.pluginKey}; known plugins: ${PLUGIN_KEYS.join(', ')}`);
  }
  if (!(await store.tenants.get(valid.tenantId)))
    throw new OperatorError(`tenant ${valid.tenantId} does not exist`);
  if (enabled) await store.plugins.enable(valid.tenantId, valid.pluginKey);
  else await store.plugins.disable(valid.tenantId, valid.pluginKey);
}
