/** The demo tenant seeded on first start: one owner, one admin, one member, all with the same password. */

import type { Role } from '../functions/platform/tokens.ts';
import { createTenant, createUser } from '../functions/services/operator.ts';
import type { Store } from '../functions/store/index.ts';

export const DEMO_TENANT_NAME = 'Demo Company';
export const DEMO_PASSWORD = 'demo-password-2026';
export const DEMO_USERS: { email: string; role: Role }[] = [
  { email: 'owner@demo.example.com', role: 'owner' },
  { email: 'admin@demo.example.com', role: 'admin' },
  { email: 'member@demo.example.com', role: 'member' },
];

/** Idempotent: a second start (or a start after a crash mid-seed) completes what is missing, nothing more. */
export async function seedDemo(store: Store): Promise<{ tenantId: string; created: boolean }> {
  const existing = (await store.tenants.list()).find((t) => t.name === DEMO_TENANT_NAME);
  const tenant = existing ?? (await createTenant(store, { name: DEMO_TENANT_NAME }));
  let created = !existing;
  for (const u of DEMO_USERS) {
    if (await store.users.findByEmail(u.email)) continue;
    await createUser(store, { tenantId: tenant.id, email: u.email, password: DEMO_PASSWORD, role: u.role });
    created = true;
  }
  return { tenantId: tenant.id, created };
}
