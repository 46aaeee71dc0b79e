/** The demo tenant seeded on first start: one owner, one admin, one member, all with the same password. */

import { credentialCipher } from '../functions/platform/credentials-cipher.ts';
import type { Role } from '../functions/platform/tokens.ts';
import { createTenant, createUser } from '../functions/services/operator.ts';
import { createProject } from '../functions/services/projects.ts';
import type { Store } from '../functions/store/index.ts';
import type { SandboxConfig } from './sandbox/common/config.ts';

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
    if (await store.users.findInTenant(tenant.id, u.email)) continue;
    await createUser(store, { tenantId: tenant.id, email: u.email, password: DEMO_PASSWORD, role: u.role });
    created = true;
  }
  return { tenantId: tenant.id, created };
}

export const DEMO_PROJECT_NAME = 'Demo: Contoso Boards to Jira';

/**
 * The demo project, pointed at the sandbox trackers with their credentials sealed as a real project's are.
 * Not yet tested: `POST /api/connectors/test {type, projectId}` tests the stored credentials and connects it.
 */
export async function seedDemoProject(
  store: Store,
  tenantId: string,
  sandbox: { adoUrl: string; jiraUrl: string; config: SandboxConfig },
): Promise<string> {
  const existing = (await store.projects.list(tenantId)).find((p) => p.name === DEMO_PROJECT_NAME);
  if (existing) return existing.id;
  const project = await createProject(store, tenantId, {
    name: DEMO_PROJECT_NAME,
    sourceSystem: 'AZURE_DEVOPS',
    targetSystem: 'JIRA_CLOUD',
    description: 'Points at the sandbox trackers started by npm start',
  });
  const { ado, jira } = sandbox.config;
  const connections = {
    source: {
      credentials: {
        organization_url: `${sandbox.adoUrl}/${ado.org}`,
        project: ado.project,
        personal_access_token: ado.pat,
      },
      summary: { organizationUrl: `${sandbox.adoUrl}/${ado.org}`, projectName: ado.project },
    },
    target: {
      credentials: {
        base_url: sandbox.jiraUrl,
        email: jira.email,
        api_token: jira.apiToken,
        project_key: jira.projectKey,
      },
      summary: { baseUrl: sandbox.jiraUrl, email: jira.email, projectKey: jira.projectKey },
    },
  } as const;
  for (const kind of ['source', 'target'] as const) {
    const { credentials, summary } = connections[kind];
    await store.connections.put(tenantId, project.id, {
      kind,
      ok: false,
      message: 'not tested yet',
      testedAt: null,
      summary,
      sealed: await credentialCipher().seal(JSON.stringify(credentials), {
        tenantId,
        projectId: project.id,
        kind,
      }),
    });
  }
  return project.id;
}
