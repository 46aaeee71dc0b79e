/** What tests need to talk to running sandboxes: their credentials in the API's shape, and their controls. */
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

/**
 * A run start body (POST /api/migrations/project/{id}/start) for the sandboxes, with attachments and comments
 * off so a lifecycle test stays short; `source` overrides source fields (a rotated PAT, a type filter).
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
      options: { migrate_attachments: false, migrate_comments: false },
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
