/** The sandboxes' identities, from the environment with documented defaults (README: Sandbox trackers). */
import { z } from 'zod';
import type { SandboxProfile } from './limits/install.ts';

/** The OAuth clients the sandboxes' stand-in authorization servers know (README: Sandbox trackers, OAuth). */
export interface SandboxOAuthConfig {
  atlassian: { clientId: string; clientSecret: string };
  entra: { clientId: string; clientSecret: string; tenantId: string };
}

export const OAUTH_DEFAULTS: SandboxOAuthConfig = {
  atlassian: { clientId: 'sandbox-atlassian-client', clientSecret: 'sandbox-atlassian-secret' },
  entra: {
    clientId: 'sandbox-entra-client',
    clientSecret: 'sandbox-entra-secret',
    tenantId: 'sandbox-tenant',
  },
};

const Env = z.object({
  SANDBOX_ADO_ORG: z.string().min(1).default('sandbox-org'),
  SANDBOX_ADO_PROJECT: z.string().min(1).default('Contoso'),
  SANDBOX_ADO_PAT: z.string().min(1).default('sandbox-ado-pat'),
  SANDBOX_JIRA_EMAIL: z.string().min(1).default('migrator@sandbox.example.com'),
  SANDBOX_JIRA_API_TOKEN: z.string().min(1).default('sandbox-jira-token'),
  SANDBOX_JIRA_PROJECT_KEY: z
    .string()
    .regex(/^[A-Z][A-Z0-9]{1,9}$/)
    .default('MIG'),
  /** The Jira site's further projects (comma-separated keys), after SANDBOX_JIRA_PROJECT_KEY: none by default. */
  SANDBOX_JIRA_OTHER_PROJECT_KEYS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[A-Z][A-Z0-9]{1,9}$/))),
  SANDBOX_ATLASSIAN_CLIENT_ID: z.string().min(1).default(OAUTH_DEFAULTS.atlassian.clientId),
  SANDBOX_ATLASSIAN_CLIENT_SECRET: z.string().min(1).default(OAUTH_DEFAULTS.atlassian.clientSecret),
  SANDBOX_ENTRA_CLIENT_ID: z.string().min(1).default(OAUTH_DEFAULTS.entra.clientId),
  SANDBOX_ENTRA_CLIENT_SECRET: z.string().min(1).default(OAUTH_DEFAULTS.entra.clientSecret),
  SANDBOX_ENTRA_TENANT_ID: z.string().min(1).default(OAUTH_DEFAULTS.entra.tenantId),
  SANDBOX_ITEMS: z.coerce.number().int().min(0).max(200_000).default(200),
  SANDBOX_SEED: z.coerce.number().int().default(42),
  /** realistic: the real services' rate limits and latency; off: none (docs/engine-and-limits.md). */
  SANDBOX_PROFILE: z.enum(['realistic', 'off']).optional(),
});

export interface SandboxConfig {
  ado: { org: string; project: string; pat: string };
  /** `otherProjectKeys`: the site's further projects, after `projectKey` (none when absent). */
  jira: { email: string; apiToken: string; projectKey: string; otherProjectKeys?: string[] };
  /** Absent: OAUTH_DEFAULTS. */
  oauth?: SandboxOAuthConfig;
  items: number;
  seed: number;
  /** Rate limits and latency (local/sandbox/common/limits); absent: off, as tests want them. */
  profile?: SandboxProfile;
}

export function sandboxConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `Invalid sandbox configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const e = parsed.data;
  return {
    ado: { org: e.SANDBOX_ADO_ORG, project: e.SANDBOX_ADO_PROJECT, pat: e.SANDBOX_ADO_PAT },
    jira: {
      email: e.SANDBOX_JIRA_EMAIL,
      apiToken: e.SANDBOX_JIRA_API_TOKEN,
      projectKey: e.SANDBOX_JIRA_PROJECT_KEY,
      ...(e.SANDBOX_JIRA_OTHER_PROJECT_KEYS.length
        ? { otherProjectKeys: e.SANDBOX_JIRA_OTHER_PROJECT_KEYS }
        : {}),
    },
    oauth: {
      atlassian: { clientId: e.SANDBOX_ATLASSIAN_CLIENT_ID, clientSecret: e.SANDBOX_ATLASSIAN_CLIENT_SECRET },
      entra: {
        clientId: e.SANDBOX_ENTRA_CLIENT_ID,
        clientSecret: e.SANDBOX_ENTRA_CLIENT_SECRET,
        tenantId: e.SANDBOX_ENTRA_TENANT_ID,
      },
    },
    items: e.SANDBOX_ITEMS,
    seed: e.SANDBOX_SEED,
    ...(e.SANDBOX_PROFILE ? { profile: e.SANDBOX_PROFILE } : {}),
  };
}
