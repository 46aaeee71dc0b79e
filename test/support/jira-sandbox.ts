/**
 * A Jira sandbox of its own on a free loopback port, reachable through the outbound policy: for the Jira
 * sandbox's own tests (useJiraSandbox), and as another company's site beside a test's sandboxes (startJiraSite).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';
import type { SandboxConfig } from '../../local/sandbox/common/config.ts';
import { buildJiraSandbox } from '../../local/sandbox/jira/index.ts';
import { http } from './http.ts';

/** A Jira sandbox listening on a free port, its port registered as the runtime registers its sandboxes'. */
export async function startJiraSite(config: SandboxConfig): Promise<{ app: FastifyInstance; url: string }> {
  const { app } = await buildJiraSandbox(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  allowLoopbackPorts(port);
  return { app, url: `http://127.0.0.1:${port}` };
}

/** For the Jira sandbox's own tests: reset to its start state before every test, closed after the file. */
export function useJiraSandbox(config: SandboxConfig, onUrl: (url: string) => void): void {
  let close: () => Promise<void> = async () => undefined;
  let url = '';
  beforeAll(async () => {
    const site = await startJiraSite(config);
    url = site.url;
    close = () => site.app.close();
    onUrl(url);
  });
  afterAll(async () => close());
  beforeEach(async () => {
    await http(url, 'POST', '/_sandbox/reset');
  });
}
