/**
 * Every route of the official specs, walked over HTTP: either the sandbox serves it (and then the conformance
 * tests hold its answers against the spec) or it answers the "not emulated" marker — never the real service's
 * "no such route", which would tell a client the API lacks what only the sandbox lacks. Also checks that the
 * route lists the sandboxes carry (api-routes.ts) are the ones the specs give.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES as ADO_ROUTES } from '../../local/sandbox/ado/api-routes.ts';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import {
  NOT_EMULATED_HEADER,
  NOT_EMULATED_PREFIX,
  NOT_EMULATED_STATUS,
  routeShape,
} from '../../local/sandbox/common/not-emulated.ts';
import type { SandboxControls } from '../../local/sandbox/common/sandbox-app.ts';
import { specRoutes } from '../../local/sandbox/common/spec-routes.ts';
import { API_ROUTES as JIRA_ROUTES } from '../../local/sandbox/jira/api-routes.ts';
import { buildJiraSandbox } from '../../local/sandbox/jira/index.ts';
import { SPECS_DIR } from '../support/openapi-conformance.ts';

const servedShapes = (controls: SandboxControls) =>
  new Set(controls.routes.map((r) => routeShape(r.method, r.path)));

interface Walked {
  route: string;
  status: number;
  problem?: string;
}

async function walk(
  routes: readonly string[],
  served: Set<string>,
  request: (method: string, path: string) => Promise<Response>,
  fill: (name: string) => string,
): Promise<{ served: string[]; problems: Walked[] }> {
  const hit: string[] = [];
  const problems: Walked[] = [];
  for (const route of routes) {
    const [method = '', template = ''] = route.split(' ');
    if (served.has(routeShape(method, template))) {
      hit.push(route);
      continue;
    }
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(fill(name)));
    const res = await request(method, path);
    const text = await res.text();
    const marked =
      res.status === NOT_EMULATED_STATUS &&
      res.headers.get(NOT_EMULATED_HEADER) === 'true' &&
      (method === 'HEAD' || text.includes(`${NOT_EMULATED_PREFIX} ${method} `));
    if (!marked) problems.push({ route, status: res.status, problem: text.slice(0, 160) });
  }
  return { served: hit, problems };
}

describe('route lists', () => {
  it('are the official specs', () => {
    expect(ADO_ROUTES).toEqual(specRoutes(SPECS_DIR, 'ado'));
    expect(JIRA_ROUTES).toEqual(specRoutes(SPECS_DIR, 'jira'));
  });
});

describe('Azure DevOps sandbox: every spec route', () => {
  let ado: AdoTestSandbox;
  beforeAll(async () => {
    ado = await startAdoSandbox({ items: 20, seed: 3 });
  });
  afterAll(() => ado.close());

  it('is served or answered "not emulated"', async () => {
    const served = servedShapes(ado.controls);
    const fill = (name: string) =>
      ({
        organization: ado.config.ado.org,
        project: ado.config.ado.project,
        team: ado.state.teamName,
        type: 'Task',
      })[name] ?? '1';
    const result = await walk(
      ADO_ROUTES,
      served,
      (method, path) =>
        ado.call(path, { method, ...(['POST', 'PUT', 'PATCH'].includes(method) ? { json: {} } : {}) }),
      fill,
    );
    expect(result.problems).toEqual([]);
    // Everything the sandbox serves is one of the walked routes (the conformance test validates those).
    expect(result.served.length).toBe(served.size);
  });

  it('answers a chunked attachment upload, which only the real service takes, "not emulated"', async () => {
    const res = await ado.call('wit/attachments?fileName=big.bin&uploadType=Chunked', {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      json: '',
    });
    expect(res.status).toBe(NOT_EMULATED_STATUS);
    expect(res.headers.get(NOT_EMULATED_HEADER)).toBe('true');
    expect(((await res.json()) as { message: string }).message).toContain(`${NOT_EMULATED_PREFIX} POST`);
  });

  it('keeps the real "no such route" answer for paths the API does not have', async () => {
    const res = await ado.call('wit/nosuchresource');
    expect(res.status).toBe(404);
    expect(res.headers.get(NOT_EMULATED_HEADER)).toBeNull();
  });
});

describe('Jira sandbox: every spec route', () => {
  const config = sandboxConfigFromEnv({});
  const auth = `Basic ${Buffer.from(`${config.jira.email}:${config.jira.apiToken}`).toString('base64')}`;
  let base = '';
  let controls: SandboxControls;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const built = await buildJiraSandbox(config);
    await built.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(built.app.server.address() as { port: number }).port}`;
    controls = built.controls;
    close = () => built.app.close();
  });
  afterAll(async () => close());

  const request = (method: string, path: string) =>
    fetch(
      `${base}${path}`,
      ['POST', 'PUT', 'PATCH'].includes(method)
        ? { method, headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: '{}' }
        : { method, headers: { Authorization: auth } },
    );

  it('is served or answered "not emulated"', async () => {
    const served = servedShapes(controls);
    const fill = (name: string) =>
      ({ issueIdOrKey: `${config.jira.projectKey}-1`, projectIdOrKey: config.jira.projectKey })[name] ?? '1';
    const result = await walk(JIRA_ROUTES, served, request, fill);
    expect(result.problems).toEqual([]);
    expect(result.served.length).toBe(served.size);
  });

  it('answers /rest/api/2 as not emulated, and keeps 405 and 404 for what Jira does not have', async () => {
    const v2 = await request('GET', `/rest/api/2/issue/${config.jira.projectKey}-1`);
    expect(v2.status).toBe(NOT_EMULATED_STATUS);
    expect(((await v2.json()) as { errorMessages: string[] }).errorMessages[0]).toBe(
      `${NOT_EMULATED_PREFIX} GET /rest/api/2/issue/${config.jira.projectKey}-1`,
    );
    expect((await request('PATCH', `/rest/api/3/project/${config.jira.projectKey}`)).status).toBe(405);
    const unknown = await request('GET', '/rest/api/3/nosuchresource');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get(NOT_EMULATED_HEADER)).toBeNull();
  });
});
