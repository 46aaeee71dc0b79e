/**
 * Starts both sandbox trackers: Azure DevOps on SANDBOX_ADO_PORT (3001), Jira on SANDBOX_JIRA_PORT (3002).
 * Used by `npm start` (unless SANDBOX=off) and alone by `npm run sandbox`.
 */
import type { FastifyInstance } from 'fastify';
import type { EnvName } from '../../functions/platform/env.ts';
import { buildAdoSandbox } from './ado/index.ts';
import { OAUTH_DEFAULTS, type SandboxConfig } from './common/config.ts';
import type { SandboxControls } from './common/sandbox-app.ts';
import { buildJiraSandbox } from './jira/index.ts';
import { registerTimesheetsSandbox } from './timesheets/index.ts';
import { registerTimetrackerSandbox } from './timetracker/index.ts';

export interface RunningSandbox {
  url: string;
  app: FastifyInstance;
  controls: SandboxControls;
}

export interface RunningSandboxes {
  ado: RunningSandbox;
  jira: RunningSandbox;
  stop(): Promise<void>;
}

async function listen(app: FastifyInstance, port: number, host: string): Promise<string> {
  await app.listen({ port, host });
  const address = app.server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${actual}`;
}

export async function startSandboxes(opts: {
  config: SandboxConfig;
  adoPort: number;
  jiraPort: number;
  host?: string;
}): Promise<RunningSandboxes> {
  const host = opts.host ?? '127.0.0.1';
  const ado = await buildAdoSandbox(opts.config);
  registerTimetrackerSandbox(ado.app, ado.controls); // 7pace, an ADO extension: <ado>/_7pace/api
  registerTimesheetsSandbox(ado.app, ado.controls); // Harvest-style timesheets: <ado>/_timesheets/v2
  const jira = await buildJiraSandbox(opts.config);
  const adoUrl = await listen(ado.app, opts.adoPort, host);
  const jiraUrl = await listen(jira.app, opts.jiraPort, host);
  return {
    ado: { url: adoUrl, ...ado },
    jira: { url: jiraUrl, ...jira },
    async stop() {
      await Promise.all([ado.app.close(), jira.app.close()]);
    },
  };
}

/**
 * The service's OAuth settings that point at the sandboxes: Atlassian's authorization server and API gateway
 * are the Jira sandbox, Entra ID the ADO sandbox, with the sandboxes' registered clients.
 */
export function sandboxOAuthEnv(
  sandboxes: Pick<RunningSandboxes, 'ado' | 'jira'>,
  config: Pick<SandboxConfig, 'oauth'>,
): Partial<Record<EnvName, string>> {
  const oauth = config.oauth ?? OAUTH_DEFAULTS;
  return {
    ATLASSIAN_AUTH_URL: sandboxes.jira.url,
    ATLASSIAN_API_URL: sandboxes.jira.url,
    ATLASSIAN_CLIENT_ID: oauth.atlassian.clientId,
    ATLASSIAN_CLIENT_SECRET: oauth.atlassian.clientSecret,
    ENTRA_AUTHORITY_URL: sandboxes.ado.url,
    ENTRA_TENANT: oauth.entra.tenantId,
    ENTRA_CLIENT_ID: oauth.entra.clientId,
    ENTRA_CLIENT_SECRET: oauth.entra.clientSecret,
  };
}
