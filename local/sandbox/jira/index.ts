/** The Jira Cloud sandbox (placeholder: the sandbox issue fills it in). */
import type { FastifyInstance } from 'fastify';
import type { SandboxConfig } from '../common/config.ts';
import { createSandboxApp, type SandboxControls } from '../common/sandbox-app.ts';

export async function buildJiraSandbox(
  config: SandboxConfig,
): Promise<{ app: FastifyInstance; controls: SandboxControls }> {
  return createSandboxApp(
    {
      name: 'jira',
      throttleHeaders: (s) => ({ 'Retry-After': String(s) }),
      errorBody: () => ({ errorMessages: ['Service unavailable'], errors: {} }),
      seed: () => undefined,
    },
    { items: config.items, seed: config.seed },
  );
}
