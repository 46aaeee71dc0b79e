/** `npm run sandbox`: the sandbox trackers alone, so they can outlive a killed service. */
import { z } from 'zod';
import { SANDBOX_DEFAULT_PORTS } from '../local/loopback-ports.ts';
import { sandboxConfigFromEnv } from '../local/sandbox/common/config.ts';
import { startSandboxes } from '../local/sandbox/index.ts';

const Ports = z.object({
  SANDBOX_ADO_PORT: z.coerce.number().int().min(0).max(65535).default(SANDBOX_DEFAULT_PORTS.ado),
  SANDBOX_JIRA_PORT: z.coerce.number().int().min(0).max(65535).default(SANDBOX_DEFAULT_PORTS.jira),
});

async function main() {
  const ports = Ports.parse(process.env);
  const config = { profile: 'realistic' as const, ...sandboxConfigFromEnv() };
  const running = await startSandboxes({
    config,
    adoPort: ports.SANDBOX_ADO_PORT,
    jiraPort: ports.SANDBOX_JIRA_PORT,
  });
  console.log(
    [
      `Azure DevOps sandbox: ${running.ado.url}/${config.ado.org}/${config.ado.project}  (PAT: ${config.ado.pat})`,
      `Jira sandbox:         ${running.jira.url}  (project ${config.jira.projectKey}; ${config.jira.email} / ${config.jira.apiToken})`,
      `${config.items} work items from seed ${config.seed}. Ctrl-C stops them.`,
    ].join('\n'),
  );
  const stop = async () => {
    await running.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err: unknown) => {
  console.error('Could not start the sandboxes:', err instanceof Error ? err.message : err);
  process.exit(1);
});
