/** The Azure DevOps sandbox (placeholder: the sandbox issue fills it in). */
import type { FastifyInstance } from 'fastify';
import type { SandboxConfig } from '../common/config.ts';
import { createSandboxApp, type SandboxControls } from '../common/sandbox-app.ts';

export async function buildAdoSandbox(
  config: SandboxConfig,
): Promise<{ app: FastifyInstance; controls: SandboxControls }> {
  return createSandboxApp(
    {
      name: 'ado',
      throttleHeaders: (s) => ({ 'Retry-After': String(s), 'X-RateLimit-Delay': String(s) }),
      errorBody: (status) => ({
        message:
          status === 429 ? 'Request was blocked due to exceeding usage of resource' : 'Service Unavailable',
      }),
      seed: () => undefined,
    },
    { items: config.items, seed: config.seed },
  );
}
