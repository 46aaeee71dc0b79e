/** Starts the Azure DevOps sandbox on a free port and calls it over real HTTP (for tests and scripts). */
import type { FastifyInstance } from 'fastify';
import { allowLoopbackPorts } from '../../loopback-ports.ts';
import type { SandboxConfig } from '../common/config.ts';
import type { SandboxControls } from '../common/sandbox-app.ts';
import type { AdoErrorBody } from './errors.ts';
import { adoSandboxState, buildAdoSandbox } from './index.ts';
import type { AdoState } from './state.ts';

export interface AdoCallOptions extends Omit<RequestInit, 'body'> {
  /** Sent as JSON (Content-Type application/json unless a header says otherwise). */
  json?: unknown;
  /** api-version to add when the path has none; null sends none. Default 7.1. */
  version?: string | null;
  /** PAT to send; null sends no Authorization header. Default: the sandbox's PAT. */
  pat?: string | null;
}

export interface AdoTestSandbox {
  /** http://127.0.0.1:port */
  url: string;
  config: SandboxConfig;
  app: FastifyInstance;
  controls: SandboxControls;
  state: AdoState;
  /** A request to `{url}/{org}/{project}/_apis/{path}` (or, when path starts with '/', `{url}{path}`). */
  call(path: string, opts?: AdoCallOptions): Promise<Response>;
  /** `call` and parse the JSON body, failing on a non-2xx status. */
  json<T = Record<string, unknown>>(path: string, opts?: AdoCallOptions): Promise<T>;
  close(): Promise<void>;
}

export async function startAdoSandbox(opts: { items?: number; seed?: number } = {}): Promise<AdoTestSandbox> {
  const config: SandboxConfig = {
    ado: { org: 'sandbox-org', project: 'Contoso', pat: 'test-pat' },
    jira: { email: 'x@example.com', apiToken: 't', projectKey: 'MIG' },
    items: opts.items ?? 200,
    seed: opts.seed ?? 42,
  };
  const { app, controls } = await buildAdoSandbox(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  // The service's clients reach it through the outbound policy: registered as `npm start` registers its sandboxes.
  allowLoopbackPorts(port);
  const call = async (path: string, o: AdoCallOptions = {}) => {
    const { json, version = '7.1', pat = config.ado.pat, headers, ...rest } = o;
    let target = path.startsWith('/')
      ? `${url}${path}`
      : `${url}/${config.ado.org}/${config.ado.project}/_apis/${path}`;
    if (version !== null && !/[?&]api-version=/.test(target)) {
      target += `${target.includes('?') ? '&' : '?'}api-version=${version}`;
    }
    const h = new Headers(headers);
    if (pat !== null) h.set('Authorization', `Basic ${Buffer.from(`:${pat}`).toString('base64')}`);
    if (json !== undefined && !h.has('Content-Type')) h.set('Content-Type', 'application/json');
    return fetch(target, {
      ...rest,
      headers: h,
      body: json === undefined ? undefined : JSON.stringify(json),
    });
  };
  return {
    url,
    config,
    app,
    controls,
    get state() {
      return adoSandboxState(app);
    },
    call,
    async json<T>(path: string, o?: AdoCallOptions) {
      const res = await call(path, o);
      const text = await res.text();
      if (!res.ok) throw new Error(`${o?.method ?? 'GET'} ${path}: ${res.status} ${text.slice(0, 500)}`);
      return JSON.parse(text) as T;
    },
    close: () => app.close(),
  };
}

/** The body of an error response, typed as ADO's error shape. */
export async function readError(res: Response): Promise<AdoErrorBody> {
  return (await res.json()) as AdoErrorBody;
}
