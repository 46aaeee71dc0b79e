/**
 * WIQL through real HTTP. Expected results are computed straight from the generated world with plain filters,
 * not through the sandbox's query engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, readError, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { parseWiql } from '../../local/sandbox/ado/wiql/parser.ts';
import type { AdoWorkItem } from '../../local/sandbox/generator/index.ts';

interface WiqlResult {
  queryType: string;
  asOf: string;
  columns: { referenceName: string; name: string; url: string }[];
  sortColumns?: { field: { referenceName: string }; descending: boolean }[];
  workItems: { id: number; url: string }[];
}

const DAY = 86_400_000;

async function wiql(ado: AdoTestSandbox, query: string, params = ''): Promise<Response> {
  return ado.call(`wit/wiql${params}`, { method: 'POST', json: { query } });
}
async function ids(ado: AdoTestSandbox, query: string, params = ''): Promise<number[]> {
  const res = await wiql(ado, query, params);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${text}`);
  return (JSON.parse(text) as WiqlResult).workItems.map((w) => w.id);
}
const select = 'SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project';

describe('WIQL', () => {
  let ado: AdoTestSandbox;
  let items: AdoWorkItem[];
  beforeAll(async () => {
    ado = await startAdoSandbox({ items: 700, seed: 11 });
    items = ado.state.world.workItems;
  });
  afterAll(() => ado.close());

  it('answers ids only, with columns, asOf and work item URLs', async () => {
    const res = await wiql(
      ado,
      'SELECT [System.Id], [System.Title], [State] FROM WorkItems ORDER BY [System.Id]',
    );
    const body = (await res.json()) as WiqlResult & Record<string, unknown>;
    expect(body.queryType).toBe('flat');
    expect(Date.parse(body.asOf)).not.toBeNaN();
    expect(body.columns.map((c) => c.referenceName)).toEqual(['System.Id', 'System.Title', 'System.State']);
    expect(body.sortColumns).toEqual([
      { field: expect.objectContaining({ referenceName: 'System.Id' }), descending: false },
    ]);
    expect(body.workItems).toHaveLength(items.length);
    expect(Object.keys(body.workItems[0]!).sort()).toEqual(['id', 'url']);
    expect(body.workItems[0]!.url).toMatch(new RegExp(`/_apis/wit/workItems/${body.workItems[0]!.id}$`));
  });

  it('slices by id range, and the slices tile the project exactly', async () => {
    expect(
      await ids(ado, `${select} AND [System.Id] > 10 AND [System.Id] <= 20 ORDER BY [System.Id]`),
    ).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    const seen: number[] = [];
    for (let from = 0; from < items.length; from += 150) {
      seen.push(
        ...(await ids(
          ado,
          `${select} AND [System.Id] > ${from} AND [System.Id] <= ${from + 150} ORDER BY [System.Id]`,
        )),
      );
    }
    expect(seen).toEqual(items.map((i) => i.id));
  });

  it('filters by area path with UNDER and =', async () => {
    const under = await ids(ado, `${select} AND [System.AreaPath] UNDER 'Contoso\\Web' ORDER BY [System.Id]`);
    expect(under).toEqual(
      items
        .filter((i) => i.areaPath === 'Contoso\\Web' || i.areaPath.startsWith('Contoso\\Web\\'))
        .map((i) => i.id),
    );
    expect(under.length).toBeGreaterThan(0);
    const exact = await ids(ado, `${select} AND [System.AreaPath] = 'contoso\\web' ORDER BY [System.Id]`);
    expect(exact).toEqual(items.filter((i) => i.areaPath === 'Contoso\\Web').map((i) => i.id));
    expect(exact.length).toBeLessThan(under.length);
    const notUnder = await ids(ado, `${select} AND [System.AreaPath] NOT UNDER 'Contoso\\Web'`);
    expect(notUnder.length + under.length).toBe(items.length);
  });

  it('filters by type with IN and =, and combines AND/OR with the right precedence', async () => {
    const inList = await ids(
      ado,
      `${select} AND [System.WorkItemType] IN ('Bug', 'Task') ORDER BY [System.Id]`,
    );
    expect(inList).toEqual(items.filter((i) => i.type === 'Bug' || i.type === 'Task').map((i) => i.id));
    const eq = await ids(ado, `${select} AND [System.WorkItemType] = 'Test Case'`);
    expect(eq).toEqual(items.filter((i) => i.type === 'Test Case').map((i) => i.id));
    const mixed = await ids(
      ado,
      "SELECT [System.Id] FROM WorkItems WHERE [System.WorkItemType] = 'Epic' OR [System.WorkItemType] = 'Feature' AND [System.State] = 'New'",
    );
    expect(mixed).toEqual(
      items.filter((i) => i.type === 'Epic' || (i.type === 'Feature' && i.state === 'New')).map((i) => i.id),
    );
    const grouped = await ids(
      ado,
      "SELECT [System.Id] FROM WorkItems WHERE ([System.WorkItemType] = 'Epic' OR [System.WorkItemType] = 'Feature') AND [System.State] = 'New'",
    );
    expect(grouped).toEqual(
      items.filter((i) => (i.type === 'Epic' || i.type === 'Feature') && i.state === 'New').map((i) => i.id),
    );
  });

  it('compares ChangedDate by day unless timePrecision=true, and refuses a time without it', async () => {
    // A pivot whose day has a later change, so day and time precision give different answers.
    const sorted = [...items].sort((a, b) => a.changedDate - b.changedDate);
    const sameDayLater = (i: number) =>
      Math.floor(sorted[i + 1]!.changedDate / DAY) === Math.floor(sorted[i]!.changedDate / DAY) &&
      sorted[i + 1]!.changedDate > sorted[i]!.changedDate;
    const at = sorted.findIndex((_, i) => i >= sorted.length / 2 && i < sorted.length - 1 && sameDayLater(i));
    const pivot = sorted[at]!.changedDate;
    const day = new Date(pivot).toISOString().slice(0, 10);
    const byDay = await ids(ado, `${select} AND [System.ChangedDate] > '${day}' ORDER BY [System.Id]`);
    expect(byDay).toEqual(
      items.filter((i) => Math.floor(i.changedDate / DAY) > Math.floor(pivot / DAY)).map((i) => i.id),
    );

    const stamp = new Date(pivot).toISOString();
    const refused = await wiql(ado, `${select} AND [System.ChangedDate] > '${stamp}'`);
    expect(refused.status).toBe(400);
    expect((await readError(refused)).message).toMatch(/cannot supply a time with the date/);

    const exact = await ids(
      ado,
      `${select} AND [System.ChangedDate] > '${stamp}' ORDER BY [System.Id]`,
      '?timePrecision=true',
    );
    expect(exact).toEqual(items.filter((i) => i.changedDate > pivot).map((i) => i.id));
    // Same-day changes after the pivot time count with time precision, not with day precision.
    expect(exact.length).toBeGreaterThan(byDay.length);
  });

  it('orders by ChangedDate descending and honours $top', async () => {
    const got = await ids(ado, `${select} ORDER BY [System.ChangedDate] DESC`, '?$top=25');
    const expected = [...items]
      .sort((a, b) => b.changedDate - a.changedDate || a.id - b.id)
      .slice(0, 25)
      .map((i) => i.id);
    expect(got).toEqual(expected);
  });

  it('matches strings case-insensitively and supports CONTAINS', async () => {
    const upper = await ids(ado, `${select} AND [System.State] = 'CLOSED'`);
    expect(upper).toEqual(items.filter((i) => i.state === 'Closed').map((i) => i.id));
    const word = 'checkout';
    const contains = await ids(ado, `${select} AND [System.Title] CONTAINS '${word}'`);
    expect(contains).toEqual(items.filter((i) => i.title.toLowerCase().includes(word)).map((i) => i.id));
    expect(contains.length).toBeGreaterThan(0);
  });

  it('refuses what it cannot answer with a 400 that says why', async () => {
    const cases: [string, RegExp][] = [
      [
        'SELECT [System.Id] FROM WorkItemLinks WHERE [Source].[System.Id] = 1',
        /link queries are not supported/,
      ],
      ['SELECT [System.Id] FROM WorkItems WHERE [System.Nope] = 1', /^TF51005/],
      ["SELECT [System.Id] FROM WorkItems WHERE [System.AreaPath] UNDER 'Contoso\\Nowhere'", /^TF51011/],
      [
        'SELECT [System.Id] FROM WorkItems WHERE [System.Id] >',
        /^Expecting a value\. The error is caused by «<end of query>»/,
      ],
      ['SELECT FROM WorkItems', /^Expecting a field name/],
      [
        'SELECT [System.Id] FROM WorkItems WHERE [System.Description] CONTAINS WORDS x',
        /cannot filter on|Expecting a value/,
      ],
      ["SELECT [System.Id] FROM WorkItems WHERE [System.State] EVER 'Active'", /EVER/],
      ["SELECT [System.Id] FROM WorkItems WHERE [System.Id] = 'abc'", /not valid/],
    ];
    for (const [query, message] of cases) {
      const res = await wiql(ado, query);
      expect(res.status, query).toBe(400);
      const body = await readError(res);
      expect(body.typeKey, query).toBe('WorkItemTrackingQueryException');
      expect(body.message, query).toMatch(message);
    }
    const empty = await ado.call('wit/wiql', { method: 'POST', json: {} });
    expect(empty.status).toBe(400);
  });

  it('parses quoted quotes and nested parentheses', () => {
    const q = parseWiql(
      "SELECT [System.Id] FROM WorkItems WHERE ([System.Title] = 'O''Brien' OR ([System.Id] IN (1, 2))) ORDER BY [System.Id] DESC",
    );
    expect(q.where).toMatchObject({
      kind: 'or',
      left: { kind: 'cond', field: 'System.Title', op: '=', values: [{ kind: 'string', value: "O'Brien" }] },
      right: { kind: 'cond', op: 'in', values: [{ value: 1 }, { value: 2 }] },
    });
    expect(q.orderBy).toEqual([{ field: 'System.Id', descending: true }]);
  });
});

describe('WIQL size limit', () => {
  let ado: AdoTestSandbox;
  beforeAll(async () => {
    ado = await startAdoSandbox({ items: 100 });
    // Reseed through the control endpoint, as other suites would, to a project over the limit.
    const res = await fetch(`${ado.url}/_sandbox/seed`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: 20_500 }),
    });
    expect(res.status).toBe(200);
  });
  afterAll(() => ado.close());

  it('refuses more than 20,000 results with VS402337', async () => {
    const res = await wiql(ado, select);
    expect(res.status).toBe(400);
    const body = await readError(res);
    expect(body.message).toMatch(
      /^VS402337: The number of work items returned exceeds the size limit of 20000/,
    );
    expect(body.typeKey).toBe('WorkItemTrackingQueryResultSizeLimitExceededException');
  });

  it('answers a $top at the limit, and slices under it', async () => {
    expect(await ids(ado, `${select} ORDER BY [System.Id]`, '?$top=20000')).toHaveLength(20_000);
    const slice = await ids(ado, `${select} AND [System.Id] > 20000 ORDER BY [System.Id]`);
    expect(slice).toEqual(Array.from({ length: 500 }, (_, i) => 20_001 + i));
  });
});
