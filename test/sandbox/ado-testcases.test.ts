/** Test Case and Shared Steps content: the steps XML, shared step references, parameters and data source. */
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

interface WorkItem {
  id: number;
  fields: Record<string, unknown>;
  relations?: { rel: string; url: string }[];
}

let ado: AdoTestSandbox;
let cases: WorkItem[];
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 600, seed: 21 });
  const res = await ado.call('wit/wiql', {
    method: 'POST',
    json: {
      query:
        "SELECT [System.Id] FROM WorkItems WHERE [System.WorkItemType] = 'Test Case' ORDER BY [System.Id]",
    },
  });
  const ids = ((await res.json()) as { workItems: { id: number }[] }).workItems.map((w) => w.id);
  const batch = await ado.call('wit/workitemsbatch', {
    method: 'POST',
    json: { ids: ids.slice(0, 200), $expand: 'relations' },
  });
  cases = ((await batch.json()) as { value: WorkItem[] }).value;
});
afterAll(() => ado.close());

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  preserveOrder: true,
  parseTagValue: false,
  trimValues: false,
});

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };
const tag = (n: Node) => Object.keys(n).find((k) => k !== ':@')!;
const kids = (n: Node) => n[tag(n)] as Node[];
const text = (n: Node) =>
  kids(n)
    .map((k) => String((k as { '#text'?: string })['#text'] ?? ''))
    .join('');

/** Every step and compref in document order, nested ones included. */
function elements(nodes: Node[]): Node[] {
  return nodes.flatMap((n) =>
    tag(n) === 'compref' ? [n, ...elements(kids(n))] : tag(n) === 'step' ? [n] : [],
  );
}

describe('test case steps', () => {
  it('stores steps as ADO writes them', () => {
    const withSteps = cases.filter((c) => typeof c.fields['Microsoft.VSTS.TCM.Steps'] === 'string');
    expect(withSteps.length).toBeGreaterThan(5);
    for (const c of withSteps) {
      const raw = String(c.fields['Microsoft.VSTS.TCM.Steps']);
      expect(raw).toMatch(/^<steps id="0" last="\d+">/);
      const root = xml.parse(raw)[0] as Node;
      expect(tag(root)).toBe('steps');
      const all = elements(kids(root));
      const ids = all.map((e) => Number(e[':@']!.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(Math.max(...ids)).toBe(Number(root[':@']!.last));
      for (const step of all.filter((e) => tag(e) === 'step')) {
        const strings = kids(step).filter((k) => tag(k) === 'parameterizedString');
        expect(strings).toHaveLength(2);
        const expected = text(strings[1]!);
        const formatted = strings[0]![':@']?.isformatted === 'true';
        if (formatted) {
          expect(text(strings[0]!)).toMatch(/^<(DIV|P)>/);
          // An empty expected result is stored as an empty paragraph, and the step is then an action step.
          const empty = expected === '<DIV><P><BR/></P></DIV>';
          expect(step[':@']!.type).toBe(empty ? 'ActionStep' : 'ValidateStep');
        } else {
          expect(step[':@']!.type).toBe(expected === '' ? 'ActionStep' : 'ValidateStep');
        }
        expect(kids(step).some((k) => tag(k) === 'description')).toBe(true);
      }
    }
    // Entities survive the double escaping: the XML text holds HTML that holds &amp;.
    expect(withSteps.some((c) => String(c.fields['Microsoft.VSTS.TCM.Steps']).includes('&amp;amp;'))).toBe(
      true,
    );
    expect(withSteps.some((c) => !String(c.fields['Microsoft.VSTS.TCM.Steps']).includes('isformatted'))).toBe(
      true,
    );
  });

  it('references Shared Steps work items with compref, both empty and wrapping steps, and links them', async () => {
    const refs = new Map<number, number[]>();
    let wrapping = 0;
    for (const c of cases) {
      const raw = c.fields['Microsoft.VSTS.TCM.Steps'];
      if (typeof raw !== 'string') continue;
      const comprefs = elements(kids(xml.parse(raw)[0] as Node)).filter((e) => tag(e) === 'compref');
      if (!comprefs.length) continue;
      wrapping += comprefs.filter((e) => kids(e).length > 0).length;
      refs.set(
        c.id,
        comprefs.map((e) => Number(e[':@']!.ref)),
      );
    }
    expect(refs.size).toBeGreaterThan(2);
    expect(wrapping).toBeGreaterThan(0);
    for (const [caseId, sharedIds] of refs) {
      const c = cases.find((x) => x.id === caseId)!;
      for (const id of sharedIds) {
        const shared = await ado.json<WorkItem>(`wit/workitems/${id}?$expand=relations`);
        expect(shared.fields['System.WorkItemType']).toBe('Shared Steps');
        expect(String(shared.fields['Microsoft.VSTS.TCM.Steps'])).toMatch(/^<steps id="0" last="\d+"><step /);
        expect(
          c.relations!.some(
            (r) =>
              r.rel === 'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Reverse' && r.url.endsWith(`/${id}`),
          ),
        ).toBe(true);
        expect(
          shared.relations!.some(
            (r) =>
              r.rel === 'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Forward' &&
              r.url.endsWith(`/${caseId}`),
          ),
        ).toBe(true);
      }
    }
  });

  it('defines the parameters its steps use, with a data set of values', () => {
    const parameterised = cases.filter((c) => typeof c.fields['Microsoft.VSTS.TCM.Parameters'] === 'string');
    expect(parameterised.length).toBeGreaterThan(0);
    for (const c of parameterised) {
      const params = xml.parse(String(c.fields['Microsoft.VSTS.TCM.Parameters']))[0] as Node;
      expect(tag(params)).toBe('parameters');
      const names = kids(params).map((p) => p[':@']!.name!);
      expect(kids(params).every((p) => tag(p) === 'param' && p[':@']!.bind === 'default')).toBe(true);
      const steps = String(c.fields['Microsoft.VSTS.TCM.Steps']);
      for (const used of steps.matchAll(/@(\w+)/g)) expect(names).toContain(used[1]);
      const data = String(c.fields['Microsoft.VSTS.TCM.LocalDataSource']);
      expect(data).toMatch(/^<NewDataSet><xs:schema id='NewDataSet'/);
      const set = xml.parse(data)[0] as Node;
      const rows = kids(set).filter((k) => tag(k) === 'Table1');
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(kids(row).map(tag).sort()).toEqual([...names].sort());
    }
  });

  it('links test cases to the stories they test, on both ends', async () => {
    const tested = cases.find((c) =>
      c.relations?.some((r) => r.rel === 'Microsoft.VSTS.Common.TestedBy-Reverse'),
    )!;
    const storyUrl = tested.relations!.find((r) => r.rel === 'Microsoft.VSTS.Common.TestedBy-Reverse')!.url;
    const story = await ado.json<WorkItem>(`wit/workitems/${storyUrl.split('/').at(-1)}?$expand=relations`);
    expect(story.fields['System.WorkItemType']).toBe('User Story');
    expect(
      story.relations!.some(
        (r) => r.rel === 'Microsoft.VSTS.Common.TestedBy-Forward' && r.url.endsWith(`/${tested.id}`),
      ),
    ).toBe(true);
  });
});
