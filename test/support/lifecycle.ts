/**
 * Bringing a project far enough along its status flow (functions/domain/lifecycle.ts) for a test about
 * something else. Two ways:
 * - `markProjectStatus`: an arrangement through the store, for tests of runs, streams and reports that use no
 *   trackers. The flow itself is proven over HTTP in test/integration/project-lifecycle.test.ts.
 * - `prepareProjectOverHttp`: the real path (connect both trackers, scan, confirm the suggested mappings, accept
 *   the quote with the instant provider), for tests that run the service as a separate process.
 */
import type { ProjectStatus } from '../../functions/domain/projects.ts';
import type { Store } from '../../functions/store/index.ts';
import type { TestApp, TestTenant } from './app.ts';

/** Sets the project's status directly (arrangement only: see the module comment). */
export async function markProjectStatus(
  store: Store,
  tenantId: string,
  projectId: string,
  status: ProjectStatus = 'READY',
): Promise<void> {
  const project = await store.projects.get(tenantId, projectId);
  if (!project) throw new Error(`markProjectStatus: no project ${projectId}`);
  if (!(await store.projects.transition(tenantId, projectId, [project.status], status)))
    throw new Error(`markProjectStatus: project ${projectId} moved meanwhile`);
}

/** A project created over HTTP by the tenant's owner, then marked READY (paid, by arrangement); its id. */
export async function readyProject(app: TestApp, tenant: TestTenant, name: string): Promise<string> {
  const res = await app.call('POST', '/api/projects', {
    token: tenant.owner.token,
    body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  if (res.status !== 201) throw new Error(`project not created: ${res.status} ${res.text}`);
  // The flow to READY over HTTP is project-lifecycle.test.ts's.
  await markProjectStatus(app.store, tenant.tenantId, res.body.id, 'READY');
  return res.body.id;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
}
export interface CallAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers checked by the caller
  body: any;
}
export type ApiCall = (method: string, path: string, options?: CallOptions) => Promise<CallAnswer>;

/** The spec's connector credentials of both trackers (test/support/sandbox-fixtures.ts `sandboxCredentials`). */
export interface TrackerCredentials {
  source: Record<string, unknown>;
  target: Record<string, unknown>;
}

async function expectOk(
  call: ApiCall,
  method: string,
  path: string,
  options: CallOptions,
): Promise<CallAnswer> {
  const res = await call(method, path, options);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/**
 * DRAFT -> READY through the API: each step's answer is checked, so a broken step fails the caller's test with
 * the API's own message. `ownerToken` accepts the quote (owner only); returns the statuses seen on the way.
 */
export async function prepareProjectOverHttp(
  call: ApiCall,
  ownerToken: string,
  projectId: string,
  credentials: TrackerCredentials,
): Promise<ProjectStatus[]> {
  const token = ownerToken;
  const seen: ProjectStatus[] = [];
  const status = async () => {
    const s = (await expectOk(call, 'GET', `/api/projects/${projectId}`, { token })).body.status;
    seen.push(s);
    return s;
  };
  await status();
  for (const kind of ['source', 'target'] as const) {
    const res = await expectOk(call, 'POST', '/api/connectors/test', {
      token,
      body: { type: kind === 'source' ? 'azure_devops' : 'jira', projectId, credentials: credentials[kind] },
    });
    if (res.body.success !== true) throw new Error(`connection test (${kind}) failed: ${res.body.message}`);
  }
  await status();
  const scan = await expectOk(call, 'POST', '/api/connectors/scan', {
    token,
    body: { type: 'azure_devops', projectId },
  });
  if (scan.body.scanId && scan.body.status !== 'COMPLETED') await waitForScan(call, token, scan.body.scanId);
  await status();
  const suggested = (await expectOk(call, 'GET', `/api/projects/${projectId}/mappings`, { token })).body;
  const { types, states, fields, users, linkTypes } = suggested;
  await expectOk(call, 'PUT', `/api/projects/${projectId}/mappings`, {
    token,
    body: { types, states, fields, users, linkTypes },
  });
  await expectOk(call, 'POST', `/api/projects/${projectId}/mappings/confirm`, { token });
  await status();
  const quote = (await expectOk(call, 'GET', `/api/projects/${projectId}/quote`, { token })).body;
  await expectOk(call, 'POST', `/api/projects/${projectId}/quote/accept`, {
    token,
    body: { quoteId: quote.id },
  });
  await status();
  return seen;
}

async function waitForScan(call: ApiCall, token: string, scanId: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const res = await expectOk(call, 'GET', `/api/audit/${scanId}`, { token });
    if (res.body.status === 'COMPLETED') return;
    if (res.body.status === 'FAILED') throw new Error(`scan ${scanId} failed: ${res.body.message}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`scan ${scanId} did not finish`);
}
