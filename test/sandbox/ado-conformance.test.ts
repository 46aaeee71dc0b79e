/**
 * The Azure DevOps sandbox against the official Work Item Tracking 7.1 spec: every served route exists there,
 * and real responses from every route match the documented schemas. Adding a route without a sample here
 * fails the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdoCallOptions,
  type AdoTestSandbox,
  startAdoSandbox,
} from '../../local/sandbox/ado/testing.ts';
import { type Conformance, loadConformance } from '../support/openapi-conformance.ts';

let ado: AdoTestSandbox;
let conformance: Conformance;
beforeAll(async () => {
  [ado, conformance] = await Promise.all([
    startAdoSandbox({ items: 400, seed: 8 }),
    loadConformance(['ado-wit']),
  ]);
});
afterAll(() => ado.close());

interface Sample {
  route: string;
  path: string;
  opts?: AdoCallOptions;
}

const PATCH_HEADERS = { 'Content-Type': 'application/json-patch+json' };

function samples(): Sample[] {
  const world = ado.state.world;
  const heavy = world.workItems.find((i) => i.commentCount > 200)!;
  const withFiles = world.workItems.find((i) => i.attachments.length > 0)!;
  const testCase = world.workItems.find((i) => i.type === 'Test Case' && i.sharedStepRefs)!;
  const revised = world.workItems.find((i) => i.rev >= 3)!;
  const image = world.workItems.find((i) => i.inlineImages.length > 0)!.inlineImages[0]!;
  const wiql = (query: string): AdoCallOptions => ({ method: 'POST', json: { query } });
  return [
    {
      route: 'POST /:organization/:project/_apis/wit/wiql',
      path: 'wit/wiql',
      opts: wiql(
        'SELECT [System.Id], [System.Title] FROM WorkItems WHERE [System.TeamProject] = @project ORDER BY [System.ChangedDate] DESC',
      ),
    },
    {
      route: 'POST /:organization/:project/_apis/wit/wiql',
      path: 'wit/wiql?$top=5',
      opts: wiql("SELECT [System.Id] FROM WorkItems WHERE [System.State] = 'Nothing'"),
    },
    {
      route: 'POST /:organization/:project/:team/_apis/wit/wiql',
      path: '/sandbox-org/Contoso/Contoso%20Team/_apis/wit/wiql',
      opts: wiql("SELECT [System.Id] FROM WorkItems WHERE [System.AreaPath] UNDER 'Contoso\\Web'"),
    },
    { route: 'GET /:organization/:project/_apis/wit/workitems/:id', path: `wit/workitems/${withFiles.id}` },
    {
      route: 'GET /:organization/:project/_apis/wit/workitems/:id',
      path: `wit/workitems/${withFiles.id}?$expand=all`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workitems/:id',
      path: `wit/workitems/${testCase.id}?$expand=relations`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workitems/:id',
      path: `wit/workitems/${heavy.id}?fields=System.Title,System.CommentCount`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workitems',
      path: `wit/workitems?ids=1,2,3,${testCase.id}&$expand=links`,
    },
    {
      route: 'POST /:organization/:project/_apis/wit/workitemsbatch',
      path: 'wit/workitemsbatch',
      opts: { method: 'POST', json: { ids: Array.from({ length: 200 }, (_, i) => i + 1), $expand: 'all' } },
    },
    {
      route: 'POST /:organization/:project/_apis/wit/workitemsbatch',
      path: 'wit/workitemsbatch',
      opts: {
        method: 'POST',
        json: { ids: [4, 5], fields: ['System.Id', 'System.AssignedTo', 'Custom.ReviewedBy'] },
      },
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workItems/:id/revisions',
      path: `wit/workItems/${revised.id}/revisions?$expand=all`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/reporting/workitemrevisions',
      path: 'wit/reporting/workitemrevisions?$expand=fields&includeIdentityRef=true&$maxPageSize=20',
    },
    {
      route: 'POST /:organization/:project/_apis/wit/reporting/workitemrevisions',
      path: 'wit/reporting/workitemrevisions?continuationToken=40',
      opts: { method: 'POST', json: { types: ['Bug'], fields: ['System.Title', 'System.State'] } },
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workItems/:id/revisions/:revisionNumber',
      path: `wit/workItems/${revised.id}/revisions/2`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workItems/:id/updates',
      path: `wit/workItems/${revised.id}/updates?$top=5`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workItems/:id/updates/:updateNumber',
      path: `wit/workItems/${testCase.id}/updates/1`,
    },
    {
      route: 'PATCH /:organization/:project/_apis/wit/workitems/:id',
      path: 'wit/workitems/9',
      opts: {
        method: 'PATCH',
        headers: PATCH_HEADERS,
        json: [{ op: 'add', path: '/fields/System.Title', value: 'Conformant' }],
      },
    },
    {
      route: 'PATCH /:organization/:project/_apis/wit/workitems/:id',
      path: 'wit/workitems/9?$expand=relations',
      opts: {
        method: 'PATCH',
        headers: PATCH_HEADERS,
        json: [
          {
            op: 'add',
            path: '/relations/-',
            value: { rel: 'System.LinkTypes.Related', url: 'https://x/_apis/wit/workItems/3' },
          },
        ],
      },
    },
    {
      route: 'POST /:organization/:project/_apis/wit/workitems/$:type',
      path: 'wit/workitems/$User%20Story?$expand=all',
      opts: {
        method: 'POST',
        headers: PATCH_HEADERS,
        json: [
          { op: 'add', path: '/fields/System.Title', value: 'Created for conformance' },
          {
            op: 'add',
            path: '/relations/-',
            value: { rel: 'System.LinkTypes.Hierarchy-Reverse', url: 'https://x/_apis/wit/workItems/2' },
          },
        ],
      },
    },
    {
      route: 'POST /:organization/:project/_apis/wit/workItems/:workItemId/comments',
      path: `wit/workItems/${heavy.id}/comments`,
      opts: { method: 'POST', json: { text: '<div>Conformant comment</div>' }, version: '7.1-preview.4' },
    },
    {
      route: 'POST /:organization/:project/_apis/wit/attachments',
      path: 'wit/attachments?fileName=notes.txt',
      // The body is the file; a JSON string is as good a stream of bytes as any.
      opts: { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, json: 'notes' },
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workItems/:workItemId/comments',
      path: `wit/workItems/${heavy.id}/comments`,
      opts: { version: '7.1-preview.4' },
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workItems/:workItemId/comments',
      path: `wit/workItems/${heavy.id}/comments?order=asc&includeDeleted=true&$expand=renderedText`,
      opts: { version: '7.1-preview.4' },
    },
    {
      route: 'GET /:organization/:project/_apis/wit/attachments/:id',
      path: `wit/attachments/${withFiles.attachments[0]!.id}`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/attachments/:id',
      path: `wit/attachments/${image.id}?fileName=${image.name}&download=true`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/classificationnodes',
      path: 'wit/classificationnodes?$depth=10',
    },
    {
      route: 'GET /:organization/:project/_apis/wit/classificationnodes',
      path: `wit/classificationnodes?ids=${world.iterations.sprints[3]!.id}`,
    },
    {
      route: 'GET /:organization/:project/_apis/wit/classificationnodes/:structureGroup/:path',
      path: 'wit/classificationnodes/iterations/Release%201?$depth=2',
    },
    {
      route: 'GET /:organization/:project/_apis/wit/classificationnodes/:structureGroup/:path',
      path: 'wit/classificationnodes/areas/Platform%2FData?$depth=5',
    },
    { route: 'GET /:organization/:project/_apis/wit/workitemtypes', path: 'wit/workitemtypes' },
    {
      route: 'GET /:organization/:project/_apis/wit/workitemtypes/:type',
      path: 'wit/workitemtypes/Test%20Case',
    },
    {
      route: 'GET /:organization/:project/_apis/wit/workitemtypes/:type/states',
      path: 'wit/workitemtypes/User%20Story/states',
    },
    { route: 'GET /:organization/:project/_apis/wit/fields', path: 'wit/fields' },
    {
      route: 'GET /:organization/:project/_apis/wit/fields/:fieldNameOrRefName',
      path: 'wit/fields/Custom.CustomerTier',
    },
    {
      route: 'GET /:organization/_apis/wit/workitemrelationtypes',
      path: '/sandbox-org/_apis/wit/workitemrelationtypes?api-version=7.1',
    },
  ];
}

describe('Azure DevOps sandbox conformance (wit 7.1)', () => {
  it('serves only routes the spec has, with the same method', () => {
    expect(ado.controls.routes.length).toBeGreaterThan(10);
    const unknown = ado.controls.routes.filter((r) => !conformance.hasRoute(r.method, r.path));
    expect(unknown).toEqual([]);
  });

  it('the checker does catch a wrong body (so the next test can fail)', () => {
    const problems = conformance.checkResponse({
      method: 'GET',
      path: '/sandbox-org/Contoso/_apis/wit/workitems/1',
      status: 200,
      body: { id: 'one', rev: '2', fields: 'none' },
    });
    expect(problems.length).toBeGreaterThan(0);
  });

  it('answers every route with responses that match the spec', async () => {
    const all = samples();
    const served = ado.controls.routes.map((r) => `${r.method} ${r.path}`);
    expect([...new Set(all.map((s) => s.route))].sort()).toEqual([...new Set(served)].sort());
    const problems: string[] = [];
    for (const s of all) {
      const res = await ado.call(s.path, s.opts);
      const path = new URL(res.url).pathname;
      const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
      const body = json ? await res.json() : undefined;
      if (!json) await res.arrayBuffer();
      expect(res.status, `${s.route} ${s.path}`).toBe(200);
      problems.push(
        ...conformance.checkResponse({ method: s.opts?.method ?? 'GET', path, status: res.status, body }),
      );
    }
    expect(problems).toEqual([]);
  });
});
