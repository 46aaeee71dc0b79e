/** The Azure DevOps data generator: determinism, the shape of the project, and the content it produces. */
import { describe, expect, it } from 'vitest';
import { sandboxPeople } from '../../local/sandbox/common/people.ts';
import { htmlFields } from '../../local/sandbox/generator/html.ts';
import {
  ADO_STRING_MAX,
  type AdoWorld,
  attachmentChunks,
  commentAt,
  currentRev,
  flatten,
  generateAdoWorld,
  LINK_TYPE_BY_REF,
  revisionPlan,
  scanGroundTruth,
  typeDef,
  workItemFields,
} from '../../local/sandbox/generator/index.ts';

const DAY = 86_400_000;
const referenceDay = Date.UTC(2025, 5, 4);
const make = (items: number, seed = 42, day = referenceDay) =>
  generateAdoWorld({ items, seed, org: 'acme', project: 'Contoso', referenceDay: day });

/** Everything a client can observe about a few items, lazily generated parts included. */
function fingerprint(world: AdoWorld, ids: number[]): string {
  return JSON.stringify(
    ids.map((id) => {
      const item = world.workItems[id - 1]!;
      const comments = Array.from({ length: Math.min(3, item.commentTotal) }, (_, k) =>
        commentAt(world, item, k, 'http://h'),
      );
      return {
        fields: workItemFields(world, item, 'http://h', { extras: true }),
        links: item.links,
        comments,
        revs: revisionPlan(world, item),
      };
    }),
  );
}

describe('generateAdoWorld', () => {
  const world = make(3000);

  it('is deterministic for (items, seed, day) and changes with the seed', () => {
    const again = make(3000);
    const other = make(3000, 43);
    expect(JSON.stringify(again.workItems)).toBe(JSON.stringify(world.workItems));
    expect(fingerprint(again, [1, 5, 7, 1500, 2999])).toBe(fingerprint(world, [1, 5, 7, 1500, 2999]));
    expect(JSON.stringify(other.workItems)).not.toBe(JSON.stringify(world.workItems));
    expect(fingerprint(other, [1, 5, 7])).not.toBe(fingerprint(world, [1, 5, 7]));
    // The same seed with more items starts with a different layout, but is still a valid world.
    expect(make(10).workItems).toHaveLength(10);
  });

  it('numbers items from 1 in creation order and creates parents before children', () => {
    world.workItems.forEach((item, i) => {
      expect(item.id).toBe(i + 1);
      if (i > 0) expect(item.createdDate).toBeGreaterThan(world.workItems[i - 1]!.createdDate);
      if (item.parentId !== null) expect(item.parentId).toBeLessThan(item.id);
      expect(item.changedDate).toBeGreaterThanOrEqual(item.createdDate);
      expect(item.changedDate).toBeLessThan(referenceDay);
    });
  });

  it('has a realistic mix: epics < features < stories < tasks, plus bugs, issues, test cases and shared steps', () => {
    const { typeCounts } = scanGroundTruth(world);
    expect(typeCounts.Epic).toBeGreaterThan(0);
    expect(typeCounts.Epic!).toBeLessThan(typeCounts.Feature!);
    expect(typeCounts.Feature!).toBeLessThan(typeCounts['User Story']!);
    expect(typeCounts['User Story']!).toBeLessThan(typeCounts.Task!);
    for (const t of ['Bug', 'Issue', 'Test Case', 'Shared Steps']) expect(typeCounts[t]).toBeGreaterThan(0);
    // A tiny world still has one of each type.
    expect(new Set(make(8).workItems.map((i) => i.type)).size).toBe(8);
  });

  it('uses the hierarchy each type allows', () => {
    const allowed: Record<string, string[]> = {
      Feature: ['Epic'],
      'User Story': ['Feature'],
      Task: ['User Story', 'Bug'],
      Bug: ['User Story', 'Feature'],
    };
    for (const item of world.workItems) {
      if (item.parentId === null) continue;
      expect(allowed[item.type]).toContain(world.workItems[item.parentId - 1]!.type);
    }
  });

  it('writes every work item link on both ends, with the opposite link type', () => {
    const rels = new Set<string>();
    for (const item of world.workItems) {
      for (const link of item.links) {
        if (link.targetId === null) continue;
        rels.add(link.rel);
        const opposite = LINK_TYPE_BY_REF.get(link.rel)!.opposite;
        const back = world.workItems[link.targetId - 1]!.links.filter(
          (l) => l.targetId === item.id && l.rel === opposite,
        );
        expect(back, `${item.id} ${link.rel} ${link.targetId}`).toHaveLength(1);
      }
    }
    for (const rel of [
      'System.LinkTypes.Hierarchy-Forward',
      'System.LinkTypes.Hierarchy-Reverse',
      'System.LinkTypes.Related',
      'System.LinkTypes.Dependency-Forward',
      'System.LinkTypes.Dependency-Reverse',
      'System.LinkTypes.Duplicate-Forward',
      'System.LinkTypes.Duplicate-Reverse',
      'Microsoft.VSTS.Common.TestedBy-Forward',
      'Microsoft.VSTS.Common.TestedBy-Reverse',
      'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Reverse',
    ]) {
      expect(rels, rel).toContain(rel);
    }
    const parent = world.workItems.find((i) => i.parentId !== null)!;
    expect(workItemFields(world, parent, 'http://h')['System.Parent']).toBe(parent.parentId);
  });

  it('reaches every state of every type, Removed included where the type has it', () => {
    const seen = new Map<string, Set<string>>();
    for (const i of world.workItems) {
      if (!seen.has(i.type)) seen.set(i.type, new Set());
      seen.get(i.type)!.add(i.state);
    }
    for (const [type, states] of seen) {
      expect([...states].sort(), type).toEqual(
        typeDef(type)
          .states.map((s) => s.name)
          .sort(),
      );
    }
    expect(seen.get('User Story')).toContain('Removed');
  });

  it('assigns people with an Azure DevOps account only, Azure-DevOps-only people included', () => {
    const adoSide = sandboxPeople(42).filter((p) => p.on !== 'jira');
    expect(world.people.map((p) => p.email)).toEqual(adoSide.map((p) => p.email));
    const used = new Set<string>();
    for (const item of world.workItems) {
      for (const idx of [item.createdBy, item.changedBy, item.assignedTo])
        if (idx >= 0) used.add(world.people[idx]!.on);
    }
    expect([...used].sort()).toEqual(['ado', 'both']);
    const fields = workItemFields(world, world.workItems.find((i) => i.assignedTo >= 0)!, 'http://h');
    expect(fields['System.AssignedTo']).toMatchObject({
      displayName: expect.any(String),
      uniqueName: expect.stringContaining('@'),
      id: expect.any(String),
      descriptor: expect.stringMatching(/^aad\./),
    });
  });

  it('sets planning fields, tags and custom fields on some items only', () => {
    const priorities = new Set(world.workItems.map((i) => i.priority).filter((p) => p !== null));
    expect([...priorities].sort()).toEqual([1, 2, 3, 4]);
    expect(world.workItems.some((i) => i.storyPoints !== null)).toBe(true);
    expect(world.workItems.some((i) => i.originalEstimate !== null && i.remainingWork !== null)).toBe(true);
    const tagged = world.workItems.filter((i) => i.tags);
    expect(tagged.length).toBeGreaterThan(0);
    expect(tagged.length).toBeLessThan(world.workItems.length);
    expect(tagged.some((i) => i.tags!.includes('; '))).toBe(true);
    const truth = scanGroundTruth(world);
    for (const f of truth.customFields) {
      expect(f.itemCount, f.referenceName).toBeGreaterThan(0);
      expect(f.itemCount, f.referenceName).toBeLessThan(world.workItems.length / 2);
    }
    expect(new Set(truth.customFields.map((f) => f.type)).size).toBeGreaterThanOrEqual(6);
  });

  it("has titles up to ADO's 255-character cap, never over it, in any revision, and awkward characters", () => {
    const lengths = world.workItems.map((i) => i.title.length);
    expect(Math.max(...lengths)).toBe(ADO_STRING_MAX);
    expect(lengths.filter((l) => l >= 240 && l < 255).length).toBeGreaterThan(1);
    for (const item of world.workItems.filter((i) => i.title.length >= 200)) {
      for (const r of revisionPlan(world, item))
        expect(r.title.length, `#${item.id} rev ${r.rev}`).toBeLessThanOrEqual(255);
      expect(item.title).not.toMatch(/[\ud800-\udbff]$/);
    }
    expect(world.workItems.some((i) => /[^\x20-\x7e]/.test(i.title))).toBe(true);
  });

  it('lays iterations around the reference day: past, current and future sprints, and undated ones', () => {
    const sprints = world.iterations.sprints;
    const starts = sprints.map((s) => Date.parse(s.startDate!));
    expect(starts.some((s) => s + 12 * DAY < referenceDay)).toBe(true);
    expect(
      sprints.some(
        (s) => Date.parse(s.startDate!) <= referenceDay && referenceDay <= Date.parse(s.finishDate!),
      ),
    ).toBe(true);
    expect(starts.some((s) => s > referenceDay)).toBe(true);
    expect(flatten(world.iterations.root).some((n) => n.depth > 0 && !n.startDate)).toBe(true);
    expect(
      world.workItems.some((i) =>
        sprints.some((s) => s.path === i.iterationPath && Date.parse(s.startDate!) > referenceDay),
      ),
    ).toBe(true);
    const areaDepth = Math.max(...flatten(world.areas).map((n) => n.depth));
    expect(areaDepth).toBeGreaterThanOrEqual(4);
  });

  it('produces the rich text ADO stores', () => {
    const html = world.workItems
      .slice(0, 1500)
      .map((i) => Object.values(htmlFields(world, i, 'http://h')).join(''))
      .join('\n');
    for (const [what, pattern] of [
      ['heading', /<h[1-3]>/],
      ['bold/italic/underline/strike', /<(b|strong)>[\s\S]*<(i|em)>[\s\S]*<u>[\s\S]*<(strike|s)>/],
      ['nested lists', /<li>[\s\S]*?<(ul|ol)><li>/],
      ['table with colspan', /<td colspan="2"/],
      ['table with rowspan', /<td rowspan="2"/],
      ['code block', /<pre><code>/],
      ['link', /<a href="https:\/\//],
      [
        'inline image',
        /<img src="http:\/\/h\/acme\/[0-9a-f-]{36}\/_apis\/wit\/attachments\/[0-9a-f-]{36}\?fileName=/,
      ],
      ['mention', /<a href="#" data-vss-mention="version:2\.0,[0-9a-f-]{36}">@[^<]+<\/a>/],
      ['work item reference', /data-vss-mention="version:1\.0">#\d+<\/a>|\s#\d+/],
      ['line break', /<br>/],
      ['entities', /&amp;|&lt;|&nbsp;|&quot;/],
      ['emoji', /\p{Extended_Pictographic}/u],
      ['empty paragraph', /<div><br><\/div>|<p><\/p>/],
      ['Word markup', /<p class=MsoNormal>[\s\S]*<o:p><\/o:p>/],
    ] as const) {
      expect(html, what).toMatch(pattern);
    }
    // Some descriptions are beyond Jira's 32,767-character field limit.
    expect(world.workItems.some((i) => (htmlFields(world, i, 'h').description ?? '').length > 32_767)).toBe(
      true,
    );
  });

  it('makes revisions whose last one is the current item, starting in the first state', () => {
    for (const item of world.workItems.slice(0, 400)) {
      const plan = revisionPlan(world, item);
      expect(plan).toHaveLength(item.rev);
      expect(item.rev).toBeGreaterThanOrEqual(1);
      expect(item.rev).toBeLessThanOrEqual(6);
      expect(plan[0]!.state).toBe(typeDef(item.type).states[0]!.name);
      expect(plan[0]!.changedDate).toBe(item.createdDate);
      const last = plan.at(-1)!;
      expect([last.state, last.title, last.assignedTo, last.iterationPath, last.changedDate]).toEqual([
        item.state,
        item.title,
        item.assignedTo,
        item.iterationPath,
        item.changedDate,
      ]);
      for (let r = 1; r < plan.length; r++)
        expect(plan[r]!.changedDate).toBeGreaterThanOrEqual(plan[r - 1]!.changedDate);
      expect(currentRev(item)).toBe(item.rev);
    }
    expect(world.workItems.some((i) => i.rev === 6)).toBe(true);
    const edited = world.workItems.find((i) => new Set(revisionPlan(world, i).map((r) => r.title)).size > 1);
    expect(edited).toBeDefined();
  });

  it('gives some items over 200 comments, and comments ascend in date with their ids', () => {
    expect(world.workItems.filter((i) => i.commentCount > 200).length).toBeGreaterThanOrEqual(2);
    expect(world.workItems.some((i) => i.commentCount === 200)).toBe(true);
    const item = world.workItems.find((i) => i.commentTotal > 10)!;
    const comments = Array.from({ length: item.commentTotal }, (_, k) => commentAt(world, item, k, 'h'));
    for (let k = 1; k < comments.length; k++) {
      expect(comments[k]!.id).toBe(comments[k - 1]!.id + 1);
      expect(comments[k]!.createdDate).toBeGreaterThanOrEqual(comments[k - 1]!.createdDate);
    }
    expect(
      comments.every((c) => c.createdDate >= item.createdDate && c.createdDate <= item.changedDate),
    ).toBe(true);
    expect(world.workItems.some((i) => i.commentTotal > i.commentCount)).toBe(true);
  });

  it('has attachments from a few bytes to megabytes, and streams them in any chunking identically', () => {
    const sizes = world.workItems.flatMap((i) => i.attachments.map((a) => a.size));
    expect(Math.min(...sizes)).toBeLessThan(20);
    expect(Math.max(...sizes)).toBeGreaterThan(3 * 1024 * 1024);
    expect(world.workItems.some((i) => i.inlineImages.length > 0)).toBe(true);
    const att = world.workItems
      .flatMap((i) => i.attachments)
      .find((a) => a.size > 100_000 && a.name.endsWith('.png'))!;
    const whole = Buffer.concat([...attachmentChunks(att)]);
    const small = Buffer.concat([...attachmentChunks(att, 777)]);
    expect(whole.length).toBe(att.size);
    expect(small.equals(whole)).toBe(true);
    expect(whole.subarray(0, 4).toString('latin1')).toBe('\x89PNG');
  });

  it('generates 12,000 items with an attachment over 10 MB, lazily (no bytes held)', () => {
    const big = make(12_000, 7);
    expect(big.workItems).toHaveLength(12_000);
    const sizes = [...big.attachments.values()].map((a) => a.size);
    expect(sizes.some((s) => s > 10 * 1024 * 1024)).toBe(true);
    // Attachments are metadata only: nothing in the world holds a Buffer.
    expect(JSON.stringify([...big.attachments.values()].slice(0, 50))).not.toContain('"type":"Buffer"');
  });
});
