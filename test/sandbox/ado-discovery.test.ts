/**
 * The Azure DevOps sandbox's location service against the official client's own source and the official spec:
 * every location id azure-devops-node-api hard-codes for the wit area is announced (or is a resource the 7.1
 * spec does not have), at a resource version the client's requests negotiate to, under a route template the
 * spec has. And the discovery answers themselves, over HTTP.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../local/sandbox/ado/api-routes.ts';
import { areaLocations, RESOURCE_AREAS } from '../../local/sandbox/ado/locations.ts';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { NOT_EMULATED_HEADER, NOT_EMULATED_STATUS } from '../../local/sandbox/common/not-emulated.ts';

const clientDir = dirname(createRequire(import.meta.url).resolve('azure-devops-node-api/WebApi.js'));

/** `getVersioningData("7.1-preview.3", "wit", "<id>", ...)` calls in one of the client's API files. */
function clientLocations(file: string, area: string): Map<string, number> {
  const source = readFileSync(resolve(clientDir, file), 'utf8');
  const out = new Map<string, number>();
  const re = /getVersioningData\("[\d.]+-preview\.(\d+)", "([^"]+)", "([0-9a-f-]{36})"/g;
  for (const m of source.matchAll(re)) {
    if (m[2] !== area) continue;
    const id = m[3] as string;
    out.set(id, Math.max(out.get(id) ?? 0, Number(m[1])));
  }
  return out;
}

/** Resources the client knows that the 7.1 wit spec does not describe (so the sandbox does not announce them). */
const NOT_IN_SPEC = new Set([
  'def3d688-ddf5-4096-9024-69beea15cdbd', // account my work
  '1bc988f4-c15f-4072-ad35-497c87e3a909', // recent activity
  'd60eeb6e-e18c-4478-9e94-a0094e28f41c', // recent mentions
  '0b83df8a-3496-4ddb-ba44-63634f4cda61', // state colors
  '958fde80-115e-43fb-bd65-749c48057faf', // type colors
  'f0f8dc62-3975-48ce-8051-f636b68b52e3', // type colors and icons
  '8637ac8b-5eb6-4f90-b3f7-4f2ff576a459', // type definition export
]);

describe('announced locations', () => {
  it('carry the ids and versions the official client uses', () => {
    const wit = areaLocations('wit') ?? [];
    const byId = new Map(wit.map((l) => [l.id, l]));
    const client = clientLocations('WorkItemTrackingApi.js', 'wit');
    expect(client.size).toBeGreaterThan(30);
    const missing = [...client.keys()].filter((id) => !byId.has(id) && !NOT_IN_SPEC.has(id));
    expect(missing).toEqual([]);
    expect([...NOT_IN_SPEC].filter((id) => !client.has(id))).toEqual([]);
    // A request for resource version N negotiates only if the location's resource version is at least N.
    const tooOld = [...client].filter(([id, v]) => byId.has(id) && byId.get(id)!.resourceVersion < v);
    expect(tooOld).toEqual([]);
    const location = clientLocations('LocationsApi.js', 'Location');
    const announced = new Set((areaLocations('Location') ?? []).map((l) => l.id));
    expect(announced.has('00d9565f-ed9c-4a06-9a50-00e7896ccab4')).toBe(true); // connectionData
    expect(announced.has(RESOURCE_AREAS.Location)).toBe(true);
    expect([...announced].every((id) => location.has(id))).toBe(true);
  });

  it('route to paths of the official spec', () => {
    const specPaths = new Set(
      API_ROUTES.map((r) => (r.split(' ')[1] ?? '').toLowerCase().replace(/\{[^}]+\}/g, '{}')),
    );
    const asSpec = (template: string) =>
      `/{organization}/${template}`
        .replace('{area}', 'wit')
        .toLowerCase()
        .replace(/\{[^}]+\}/g, '{}');
    expect(specPaths.has(asSpec('{project}/_apis/{area}/workitems/{id}'))).toBe(true);
    expect(specPaths.has(asSpec('{project}/_apis/{area}/nosuchresource'))).toBe(false);
    const unknown = (areaLocations('wit') ?? []).filter((l) => {
      const full = asSpec(l.routeTemplate);
      // The last parameter is optional in a route template: either form must be a spec path.
      return !specPaths.has(full) && !specPaths.has(full.replace(/\/\{\}$/, ''));
    });
    expect(unknown.map((l) => l.routeTemplate)).toEqual([]);
  });
});

describe('location service over HTTP', () => {
  let ado: AdoTestSandbox;
  beforeAll(async () => {
    ado = await startAdoSandbox({ items: 10, seed: 4 });
  });
  afterAll(() => ado.close());

  it('answers OPTIONS for the wit area at organisation and project level', async () => {
    for (const path of ['/sandbox-org/_apis/wit', '/sandbox-org/Contoso/_apis/WIT']) {
      const res = await ado.call(path, { method: 'OPTIONS', version: null });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { count: number; value: Record<string, unknown>[] };
      expect(body.count).toBe(body.value.length);
      expect(Object.keys(body.value[0] ?? {}).sort()).toEqual(
        [
          'area',
          'id',
          'maxVersion',
          'minVersion',
          'releasedVersion',
          'resourceName',
          'resourceVersion',
          'routeTemplate',
        ].sort(),
      );
    }
  });

  it('answers an area it does not serve as not emulated, and asks for credentials', async () => {
    const git = await ado.call('/sandbox-org/_apis/git', { method: 'OPTIONS', version: null });
    expect(git.status).toBe(NOT_EMULATED_STATUS);
    expect(git.headers.get(NOT_EMULATED_HEADER)).toBe('true');
    const anonymous = await ado.call('/sandbox-org/_apis/connectionData', { pat: null, version: null });
    expect(anonymous.status).toBe(401);
  });

  it('lists the resource areas with the organisation URL, and one by id', async () => {
    const list = await ado.json<{ value: { id: string; name: string; locationUrl: string }[] }>(
      '/sandbox-org/_apis/resourceAreas',
      { version: '7.2-preview.1' },
    );
    expect(list.value.map((a) => a.name).sort()).toEqual(['Location', 'Test', 'testplan', 'wit', 'work']);
    expect(list.value.every((a) => a.locationUrl === `${ado.url}/sandbox-org/`)).toBe(true);
    const one = await ado.json<{ name: string }>(`/sandbox-org/_apis/ResourceAreas/${RESOURCE_AREAS.wit}`, {
      version: '7.2-preview.1',
    });
    expect(one.name).toBe('wit');
  });
});
