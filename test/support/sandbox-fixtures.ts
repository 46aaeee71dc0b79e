/** What tests need to talk to running sandboxes: their credentials in the API's shape, and their controls. */
import { credentialCipher } from '../../functions/platform/credentials-cipher.ts';
import type { Store } from '../../functions/store/index.ts';
import type { SandboxConfig } from '../../local/sandbox/common/config.ts';
import type { RunningSandboxes } from '../../local/sandbox/index.ts';

/** The spec's source and target credentials for the sandboxes. */
export function sandboxCredentials(sb: RunningSandboxes, config: SandboxConfig) {
  return {
    source: {
      organization_url: `${sb.ado.url}/${config.ado.org}`,
      project: config.ado.project,
      personal_access_token: config.ado.pat,
    },
    target: {
      base_url: sb.jira.url,
      email: config.jira.email,
      api_token: config.jira.apiToken,
      project_key: config.jira.projectKey,
    },
  };
}

/** Stores the sandboxes' credentials sealed on the project (`kinds` of them), as a connected project's are. */
export async function storeSandboxConnections(
  store: Store,
  project: { tenantId: string; projectId: string },
  credentials: ReturnType<typeof sandboxCredentials>,
  kinds: readonly ('source' | 'target')[] = ['source', 'target'],
): Promise<void> {
  const { tenantId, projectId } = project;
  for (const kind of kinds)
    await store.connections.put(tenantId, projectId, {
      kind,
      ok: true,
      message: 'connected',
      testedAt: new Date().toISOString(),
      summary: {},
      sealed: await credentialCipher().seal(JSON.stringify(credentials[kind]), { tenantId, projectId, kind }),
    });
}

/**
 * A run start body (POST /api/migrations/project/{id}/start) for the sandboxes, with attachments, comments and the
 * verification at its end off so a lifecycle test stays short; `source` overrides source fields (a rotated PAT, a type filter).
 */
export function sandboxStartBody(
  sb: RunningSandboxes,
  config: SandboxConfig,
  source: Record<string, unknown> = {},
) {
  const { target } = sandboxCredentials(sb, config);
  return {
    type: 'FULL',
    enginePayload: {
      source: { org: config.ado.org, project: config.ado.project, pat: config.ado.pat, ...source },
      target,
      // Not verified at its end either: the verification's own tests verify.
      options: { migrate_attachments: false, migrate_comments: false, verify: false },
    },
  };
}

/** Calls a sandbox control endpoint (`/_sandbox/...`); a refusal fails the test with the sandbox's answer. */
export async function sandboxControl(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : null,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}
