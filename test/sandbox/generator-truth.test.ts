/**
 * scanGroundTruth against an independent scan of the sandbox through its REST API only: WIQL for the ids,
 * batches for fields and relations, classification nodes for paths and dates, comment pages for comments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { type AdoScanTruth, scanGroundTruth } from '../../local/sandbox/generator/index.ts';

interface WorkItem {
  id: number;
  fields: Record<string, unknown>;
  relations?: { rel: string; url: string; attributes: Record<string, unknown> }[];
}
interface Node {
  path: string;
  attributes?: { startDate: string; finishDate: string };
  children?: Node[];
}

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 900, seed: 17 });
});
afterAll(() => ado.close());

const walk = (n: Node): Node[] => [n, ...(n.children ?? []).flatMap(walk)];
/** `\Contoso\Area\Web` → `Contoso\Web`. */
const itemPath = (p: string, segment: string) => p.replace(/^\\/, '').replace(`\\${segment}`, '');

async function scanThroughApi(): Promise<AdoScanTruth> {
  const wiql = await ado.json<{ workItems: { id: number }[] }>('wit/wiql', {
    method: 'POST',
    json: {
      query: 'SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project ORDER BY [System.Id]',
    },
  });
  const ids = wiql.workItems.map((w) => w.id);
  const items: WorkItem[] = [];
  for (let i = 0; i < ids.length; i += 200) {
    const page = await ado.json<{ value: WorkItem[] }>('wit/workitemsbatch', {
      method: 'POST',
      json: { ids: ids.slice(i, i + 200), $expand: 'relations' },
    });
    items.push(...page.value);
  }
  const count = <K extends string>(keys: K[]) => {
    const m = new Map<K, number>();
    for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
    return m;
  };
  const typeCounts = Object.fromEntries(count(items.map((i) => String(i.fields['System.WorkItemType']))));
  const areaCounts = count(items.map((i) => String(i.fields['System.AreaPath'])));
  const iterationCounts = count(items.map((i) => String(i.fields['System.IterationPath'])));

  const [areaRoot, iterationRoot] = (await ado.json<{ value: Node[] }>('wit/classificationnodes?$depth=20'))
    .value;
  const fieldDefs = (
    await ado.json<{ value: { referenceName: string; name: string; type: string }[] }>('wit/fields')
  ).value;

  let attachmentTotalBytes = 0;
  let attachmentCount = 0;
  let links = 0;
  const images: string[] = [];
  for (const item of items) {
    for (const r of item.relations ?? []) {
      if (r.rel === 'AttachedFile') {
        attachmentTotalBytes += Number(r.attributes.resourceSize);
        attachmentCount++;
      }
      if (r.url.includes('/_apis/wit/workItems/')) links++;
    }
    for (const v of Object.values(item.fields)) {
      if (typeof v === 'string')
        images.push(
          ...[...v.matchAll(/<img src="([^"]+\/_apis\/wit\/attachments\/[^"]+)"/g)].map((m) => m[1]!),
        );
    }
  }
  let inlineImageBytes = 0;
  for (const src of images) {
    const res = await ado.call(src.replace(ado.url, ''));
    inlineImageBytes += Number(res.headers.get('content-length'));
    await res.body?.cancel();
  }
  // Comments counted by paging them, not from System.CommentCount.
  let commentCount = 0;
  for (const item of items) {
    if (!item.fields['System.CommentCount']) continue;
    let token: string | undefined;
    do {
      const page = await ado.json<{ count: number; continuationToken?: string }>(
        `wit/workItems/${item.id}/comments${token ? `?continuationToken=${token}` : ''}`,
        { version: '7.1-preview.4' },
      );
      commentCount += page.count;
      token = page.continuationToken;
    } while (token);
  }

  return {
    totalWorkItems: items.length,
    typeCounts,
    iterationPaths: walk(iterationRoot!)
      .filter((n) => n.attributes)
      .map((n) => {
        const path = itemPath(n.path, 'Iteration');
        return {
          path,
          startDate: n.attributes!.startDate.slice(0, 10),
          endDate: n.attributes!.finishDate.slice(0, 10),
          itemCount: iterationCounts.get(path) ?? 0,
        };
      }),
    areaPaths: walk(areaRoot!).map((n) => {
      const path = itemPath(n.path, 'Area');
      return { path, depth: path.split('\\').length - 1, itemCount: areaCounts.get(path) ?? 0 };
    }),
    customFields: fieldDefs
      .filter((f) => f.referenceName.startsWith('Custom.'))
      .map((f) => ({
        referenceName: f.referenceName,
        name: f.name,
        type: f.type,
        itemCount: items.filter((i) => i.fields[f.referenceName] !== undefined).length,
      })),
    attachmentTotalBytes,
    attachmentCount,
    inlineImageCount: images.length,
    inlineImageBytes,
    commentCount,
    linkCount: links / 2,
  };
}

describe('scanGroundTruth', () => {
  it('equals a scan of the project through the REST API', async () => {
    const truth = scanGroundTruth(ado.state.world);
    const scanned = await scanThroughApi();
    expect(scanned).toEqual(truth);
    // The figures are not trivially empty.
    expect(truth.totalWorkItems).toBe(900);
    expect(truth.typeCounts['Shared Steps']).toBeGreaterThan(0);
    expect(truth.iterationPaths.some((p) => p.itemCount > 0)).toBe(true);
    expect(truth.areaPaths.find((p) => p.path === 'Contoso')?.depth).toBe(0);
    expect(Math.max(...truth.areaPaths.map((p) => p.depth))).toBe(4);
    expect(truth.attachmentTotalBytes).toBeGreaterThan(0);
    expect(truth.commentCount).toBeGreaterThan(900);
  });

  it('is served at /_sandbox/ado/truth and follows PATCHes', async () => {
    const served = await ado.json<AdoScanTruth>('/_sandbox/ado/truth', { version: null });
    expect(served).toEqual(scanGroundTruth(ado.state.world));
    const item = ado.state.world.workItems.find(
      (i) => i.areaPath !== 'Contoso\\Mobile\\iOS' && !i.custom?.['Custom.SlaBreached'],
    )!;
    const res = await ado.call(`wit/workitems/${item.id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json-patch+json' },
      json: [
        { op: 'add', path: '/fields/System.AreaPath', value: 'Contoso\\Mobile\\iOS' },
        { op: 'add', path: '/fields/Custom.SlaBreached', value: true },
      ],
    });
    expect(res.status).toBe(200);
    const after = await ado.json<AdoScanTruth>('/_sandbox/ado/truth', { version: null });
    const ios = (t: AdoScanTruth) => t.areaPaths.find((p) => p.path === 'Contoso\\Mobile\\iOS')!.itemCount;
    const sla = (t: AdoScanTruth) =>
      t.customFields.find((f) => f.referenceName === 'Custom.SlaBreached')!.itemCount;
    expect(ios(after)).toBe(ios(served) + 1);
    expect(sla(after)).toBe(sla(served) + 1);
    expect(await scanThroughApi()).toEqual(after);
  });
});
