/** Classification nodes, work item types and states, fields and relation types, through real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

interface Node {
  id: number;
  identifier: string;
  name: string;
  structureType: 'area' | 'iteration';
  hasChildren: boolean;
  children?: Node[];
  path: string;
  attributes?: { startDate: string; finishDate: string };
  url: string;
}
interface List<T> {
  count: number;
  value: T[];
}

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 150 });
});
afterAll(() => ado.close());

const walk = (n: Node): Node[] => [n, ...(n.children ?? []).flatMap(walk)];
const DAY = 86_400_000;

describe('classification nodes', () => {
  it('answers both roots, expanding children to $depth', async () => {
    const flat = await ado.json<List<Node>>('wit/classificationnodes');
    expect(flat.value.map((n) => [n.structureType, n.path, n.hasChildren, n.children])).toEqual([
      ['area', '\\Contoso\\Area', true, undefined],
      ['iteration', '\\Contoso\\Iteration', true, undefined],
    ]);
    const one = await ado.json<List<Node>>('wit/classificationnodes?$depth=1');
    expect(one.value[0]!.children!.length).toBeGreaterThan(1);
    expect(one.value[0]!.children!.every((c) => c.children === undefined)).toBe(true);
    const deep = await ado.json<List<Node>>('wit/classificationnodes?$depth=10');
    const areaDepth = Math.max(...walk(deep.value[0]!).map((n) => n.path.split('\\').length - 3));
    expect(areaDepth).toBeGreaterThanOrEqual(4);
  });

  it('has past, current and future sprints with dates, and iterations without dates', async () => {
    const tree = await ado.json<Node>('wit/classificationnodes/iterations?$depth=5');
    const nodes = walk(tree);
    const dated = nodes.filter((n) => n.attributes?.startDate);
    const now = Date.now();
    const start = (n: Node) => Date.parse(n.attributes!.startDate);
    const finish = (n: Node) => Date.parse(n.attributes!.finishDate);
    expect(dated.some((n) => finish(n) + DAY < now)).toBe(true);
    expect(dated.some((n) => start(n) <= now && now < finish(n) + 3 * DAY)).toBe(true);
    expect(dated.some((n) => start(n) > now)).toBe(true);
    expect(dated.every((n) => /T00:00:00Z$/.test(n.attributes!.startDate) && finish(n) > start(n))).toBe(
      true,
    );
    expect(nodes.some((n) => n !== tree && !n.attributes)).toBe(true);
  });

  it('answers a node by path, raw or encoded, in any case, with its structure segment in path', async () => {
    const area = await ado.json<Node>('wit/classificationnodes/Areas/Web/Backend/API');
    expect(area).toMatchObject({
      name: 'API',
      structureType: 'area',
      path: '\\Contoso\\Area\\Web\\Backend\\API',
      hasChildren: false,
    });
    const encoded = await ado.json<Node>('wit/classificationnodes/areas/Web%2FBackend%2FAPI');
    expect(encoded.id).toBe(area.id);
    const sprint = await ado.json<Node>('wit/classificationNodes/iterations/release%201/sprint%202');
    expect(sprint.path).toBe('\\Contoso\\Iteration\\Release 1\\Sprint 2');
    expect(sprint.attributes).toBeDefined();
    const unicode = await ado.json<Node>(
      `wit/classificationnodes/areas/${encodeURIComponent('R&D – Ünïcode Lab')}`,
    );
    expect(unicode.name).toBe('R&D – Ünïcode Lab');
    expect((await ado.call('wit/classificationnodes/areas/Nope')).status).toBe(404);
    expect((await ado.call('wit/classificationnodes/teams/Nope')).status).toBe(400);
  });

  it('uses the node paths work items carry (without the structure segment)', async () => {
    const tree = await ado.json<Node>('wit/classificationnodes/areas?$depth=10');
    const paths = new Set(
      walk(tree).map((n) => n.path.replace('\\Contoso\\Area', 'Contoso').replace(/^\\/, '')),
    );
    const items = await ado.json<List<{ fields: Record<string, string> }>>(
      'wit/workitems?ids=1,2,3,4,5,6,7,8&fields=System.AreaPath',
    );
    for (const i of items.value) expect(paths).toContain(i.fields['System.AreaPath']);
  });
});

describe('work item types and states', () => {
  it('lists the Agile types with their states and categories', async () => {
    const types =
      await ado.json<
        List<{ name: string; referenceName: string; states: { name: string; category: string }[] }>
      >('wit/workitemtypes');
    const names = types.value.map((t) => t.name);
    for (const t of ['Epic', 'Feature', 'User Story', 'Task', 'Bug', 'Issue', 'Test Case', 'Shared Steps']) {
      expect(names).toContain(t);
    }
    const categories = new Set(types.value.flatMap((t) => t.states.map((s) => s.category)));
    expect([...categories].sort()).toEqual(['Completed', 'InProgress', 'Proposed', 'Removed', 'Resolved']);
    const story = await ado.json<{ referenceName: string; fields: { referenceName: string }[] }>(
      'wit/workitemtypes/User%20Story',
    );
    expect(story.referenceName).toBe('Microsoft.VSTS.WorkItemTypes.UserStory');
    expect(story.fields.map((f) => f.referenceName)).toContain('Microsoft.VSTS.Scheduling.StoryPoints');
    expect((await ado.call('wit/workitemtypes/Nope')).status).toBe(404);
  });

  it('answers the states of a type with their categories', async () => {
    const bug = await ado.json<List<{ name: string; category: string; color: string }>>(
      'wit/workitemtypes/Bug/states',
    );
    expect(bug.value.map((s) => [s.name, s.category])).toEqual([
      ['New', 'Proposed'],
      ['Active', 'InProgress'],
      ['Resolved', 'Resolved'],
      ['Closed', 'Completed'],
    ]);
    const task = await ado.json<List<{ name: string; category: string }>>('wit/workitemtypes/task/states');
    expect(task.value.find((s) => s.name === 'Removed')?.category).toBe('Removed');
    const tc = await ado.json<List<{ name: string }>>('wit/workitemtypes/Test%20Case/states');
    expect(tc.value.map((s) => s.name)).toEqual(['Design', 'Ready', 'Closed']);
  });
});

describe('fields', () => {
  it('lists system and custom fields with their types', async () => {
    const fields =
      await ado.json<List<{ referenceName: string; type: string; isIdentity: boolean; isPicklist: boolean }>>(
        'wit/fields',
      );
    const custom = fields.value.filter((f) => f.referenceName.startsWith('Custom.'));
    expect(custom.length).toBeGreaterThanOrEqual(6);
    expect(new Set(custom.map((f) => f.type)).size).toBeGreaterThanOrEqual(6);
    expect(custom.some((f) => f.isIdentity)).toBe(true);
    expect(custom.some((f) => f.isPicklist)).toBe(true);
    expect(fields.value.find((f) => f.referenceName === 'System.Description')?.type).toBe('html');
    const one = await ado.json<{ name: string }>('wit/fields/Custom.GoLiveDate');
    expect(one.name).toBe('Go-Live Date');
    expect((await ado.json<{ referenceName: string }>('wit/fields/Story%20Points')).referenceName).toBe(
      'Microsoft.VSTS.Scheduling.StoryPoints',
    );
    expect((await ado.call('wit/fields/Custom.Nope')).status).toBe(404);
  });

  it('lists the relation types at organisation level', async () => {
    const types = await ado.json<List<{ referenceName: string; attributes: { usage: string } }>>(
      '/sandbox-org/_apis/wit/workitemrelationtypes?api-version=7.1',
      { version: null },
    );
    const refs = types.value.map((t) => t.referenceName);
    expect(refs).toEqual(
      expect.arrayContaining([
        'System.LinkTypes.Hierarchy-Reverse',
        'AttachedFile',
        'Microsoft.VSTS.Common.TestedBy-Forward',
      ]),
    );
  });
});
