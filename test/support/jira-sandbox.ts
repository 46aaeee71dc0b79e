/**
 * For the Jira sandbox's own tests: a sandbox on a free port for the file, reset to its start state before
 * every test, closed after the file. `onUrl` receives its base URL once it listens.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { allowLoopbackPorts } from '../../local/loopback-ports.ts';
import type { SandboxConfig } from '../../local/sandbox/common/config.ts';
import { buildJiraSandbox } from '../../local/sandbox/jira/index.ts';
import { http } from './http.ts';

export function useJiraSandbox(config: SandboxConfig, onUrl: (url: string) => void): void {
  let close: () => Promise<void> = async () => undefined;
  let url = '';
  beforeAll(async () => {
    const { app } = await buildJiraSandbox(config);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    url = `http://127.0.0.1:${port}`;
    allowLoopbackPorts(port);
    close = () => app.close();
    onUrl(url);
  });
  afterAll(async () => close());
  beforeEach(async () => {
    await http(url, 'POST', '/_sandbox/reset');
  });
}
