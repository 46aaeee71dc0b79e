/**
 * Phase 5 converts an item's description once: its plan (which files, whether the description is written
 * again, whether it is cut and its full text goes as a file) and its final write come from one conversion of
 * its HTML, and the people map it resolves mentions with is read once per invocation. The phase is driven as the
 * runner drives it (open, then each unit), its trackers and stores counting fakes at their ports; conversions
 * are counted at the converter's entry (sectionsToAdf).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AdfNode } from '../../functions/domain/adf/index.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { attachmentsPhase } from '../../functions/engine/phases/attachments.ts';
import type { EngineDeps, PhaseContext, RunPreflight } from '../../functions/phase-kit/context.ts';
import { InvocationScope } from '../../functions/phase-kit/invocation.ts';
import { manifestInMemory } from '../../functions/phase-kit/manifest-slices.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';

const conversions = vi.hoisted(() => ({ htmls: [] as string[] }));
vi.mock('../../functions/domain/adf/sections.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../functions/domain/adf/sections.ts')>();
  return {
    ...real,
    sectionsToAdf: (...args: Parameters<typeof real.sectionsToAdf>) => {
      conversions.htmls.push(args[0].map((s) => s.html).join(''));
      return real.sectionsToAdf(...args);
    },
  };
});

const ORG = 'https://dev.azure.com/contoso';
const IMAGE = `${ORG}/_apis/wit/attachments/0a1b2c3d-0000-4000-8000-000000000001?fileName=screen.png`;
const DANA = { id: 'd4a4-guid', uniqueName: 'dana@contoso.com', displayName: 'Dana Scully' };

const item = (id: number, description: string): AdoWorkItem => ({
  id,
  rev: 1,
  fields: {
    'System.Title': `Item ${id}`,
    'System.WorkItemType': 'Task',
    'System.TeamProject': 'Web',
    'System.AssignedTo': DANA,
    'System.Description': description,
  },
  relations: [],
});

/** An item naming a person, a later item and a pasted image; one over Jira's limit; one naming nothing. */
const ITEMS = [
  item(
    1,
    `<p>Ask <a href="#" data-vss-mention="version:2.0,${DANA.id}">@Dana Scully</a> about #2.</p><p><img src="${IMAGE}"></p>`,
  ),
  item(2, `<p>${'A long line of words. '.repeat(2_000)}</p><p>See #1 and <img src="${IMAGE}"></p>`),
  item(3, '<p>Nothing to resolve.</p>'),
];

/** Counting fakes at the phase's ports: what each was asked, and the descriptions written. */
function fakes() {
  const asked = { artifactReads: 0, edits: new Map<string, AdfNode>(), uploads: [] as string[] };
  const artifacts = new Map<string, string>();
  const entry = (id: number) => ({
    sourceId: id,
    sourceType: 'Task',
    targetKey: `WEB-${id}`,
    targetId: String(10_000 + id),
    origin: 'created' as const,
    runId: 'run-1',
    phasesDone: ['create'],
    updatedAt: '',
  });
  const attachments = new Map<string, { id: string; filename: string; size: number }[]>();
  const deps = {
    store: {
      idMap: {
        getMany: async (_t: string, _p: string, ids: number[]) =>
          new Map(ids.filter((id) => id <= ITEMS.length).map((id) => [id, entry(id)])),
      },
    },
    artifacts: {
      get: async (key: string) => {
        asked.artifactReads++;
        return artifacts.get(key);
      },
      put: async (key: string, body: string) => {
        artifacts.set(key, body);
      },
    },
    source: {
      organizationUrl: ORG,
      connection: { project: 'Web' },
      workItems: async (ids: number[]) => ITEMS.filter((i) => ids.includes(i.id)),
      openAttachment: async () => new Response('png bytes', { headers: { 'content-type': 'image/png' } }),
    },
    target: {
      connection: { baseUrl: 'https://contoso.atlassian.net' },
      accountIdByEmail: async () => undefined,
      attachmentSettings: async () => ({ enabled: true, uploadLimit: 10_000_000 }),
      getIssue: async (key: string) => ({ fields: { attachment: attachments.get(key) ?? [] } }),
      attachFiles: async (key: string, files: { fileName: string }[]) =>
        files.map((f, i) => {
          asked.uploads.push(`${key} ${f.fileName}`);
          const a = { id: `${key}-a${i}`, filename: f.fileName, size: 9 };
          attachments.set(key, [...(attachments.get(key) ?? []), a]);
          return a;
        }),
      attachmentMediaId: async (id: string) => `${id}-0000-4000-8000-000000000000`.slice(-36),
      editIssue: async (key: string, body: { fields: { description: AdfNode } }) => {
        asked.edits.set(key, body.fields.description);
      },
    },
  } as unknown as EngineDeps;
  return { deps, asked };
}

function contextOf(deps: EngineDeps): PhaseContext {
  return {
    deps,
    run: {
      id: 'run-1',
      tenantId: 't-1',
      projectId: 'p-1',
      type: 'INCREMENTAL',
      options: {},
      cursor: { phase: 5, index: 0 },
    } as unknown as Run,
    preflight: {
      manifest: manifestInMemory(ITEMS.map((i) => ({ id: i.id, type: 'Task', parentId: null }))),
      users: { [DANA.uniqueName]: 'acc-dana' },
      unmappedUsers: [],
    } as unknown as RunPreflight,
    invocation: new InvocationScope(),
  };
}

/** Every node of a document, depth first. */
const nodesOf = (node: AdfNode): AdfNode[] => [node, ...(node.content ?? []).flatMap(nodesOf)];

afterEach(() => {
  conversions.htmls = [];
});

describe("phase 5's final description", () => {
  it('converts each description once, for its plan and its write, and reads the people map once', async () => {
    const { deps, asked } = fakes();
    const ctx = contextOf(deps);

    const worker = await attachmentsPhase.open(ctx);
    const outcomes = await Promise.all(ITEMS.map((_, i) => worker.work(i, () => false)));
    await worker.close?.();

    expect(outcomes.map((o) => [o.success, o.failure, o.failures])).toEqual([
      [1, 0, []],
      [1, 0, []],
      [0, 0, []],
    ]);
    // Each description converted once (the third too: whether it is cut is known only from its conversion).
    const counts = ITEMS.map(
      (i) => conversions.htmls.filter((h) => h.includes(i.fields['System.Description'] as string)).length,
    );
    expect(counts).toEqual([1, 1, 1]);
    expect(asked.artifactReads).toBe(1);
    // What was written: the mention, the later item and the image resolved; the long one cut, its text a file.
    expect(asked.uploads.sort()).toEqual([
      'WEB-1 screen.png',
      'WEB-2 description-2.html',
      'WEB-2 screen.png',
    ]);
    const first = nodesOf(asked.edits.get('WEB-1') as AdfNode);
    expect(
      first.filter((n) => ['mention', 'inlineCard', 'media'].includes(n.type)).map((n) => n.attrs),
    ).toEqual([
      { id: 'acc-dana', text: '@Dana Scully' },
      { url: 'https://contoso.atlassian.net/browse/WEB-2' },
      { type: 'file', id: 'WEB-1-a0-0000-4000-8000-000000000000'.slice(-36), collection: '' },
    ]);
    const second = nodesOf(asked.edits.get('WEB-2') as AdfNode);
    expect(second.some((n) => n.text?.includes('The full text is attached as description-2.html'))).toBe(
      true,
    );
    expect([...asked.edits.keys()].sort()).toEqual(['WEB-1', 'WEB-2']);
  });
});
