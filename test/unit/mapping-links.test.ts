import { describe, expect, it } from 'vitest';
import {
  linkTypeFor,
  parentIdFrom,
  planIssueLinks,
  type SourceItemRelations,
  workItemIdFromUrl,
} from '../../functions/domain/mapping/index.ts';
import { LINK_TYPES as ADO_LINK_TYPES } from '../../local/sandbox/generator/process.ts';
import { LINK_TYPES as JIRA_LINK_TYPES } from '../../local/sandbox/jira/catalog.ts';

/** Relation URLs as the sandbox (and ADO) write them: the project id, then the work item. */
const API = 'http://127.0.0.1:4010/contoso/5b0c7a8e-1f2d-4e3a-9b6c-0d1e2f3a4b5c/_apis';
const to = (rel: string, id: number, comment?: string) => ({
  rel,
  url: `${API}/wit/workItems/${id}`,
  attributes: { isLocked: false, name: rel, ...(comment ? { comment } : {}) },
});
const REL = {
  child: 'System.LinkTypes.Hierarchy-Forward',
  parent: 'System.LinkTypes.Hierarchy-Reverse',
  related: 'System.LinkTypes.Related',
  successor: 'System.LinkTypes.Dependency-Forward',
  predecessor: 'System.LinkTypes.Dependency-Reverse',
  hasDuplicate: 'System.LinkTypes.Duplicate-Forward',
  duplicateOf: 'System.LinkTypes.Duplicate-Reverse',
  testedBy: 'Microsoft.VSTS.Common.TestedBy-Forward',
  tests: 'Microsoft.VSTS.Common.TestedBy-Reverse',
};

describe('linkTypeFor', () => {
  it("maps every link type of the sandbox's ADO process", () => {
    expect(
      Object.fromEntries(ADO_LINK_TYPES.map((l) => [l.referenceName, linkTypeFor(l.referenceName)])),
    ).toEqual({
      'System.LinkTypes.Hierarchy-Forward': 'hierarchy',
      'System.LinkTypes.Hierarchy-Reverse': 'hierarchy',
      'System.LinkTypes.Related': { name: 'Relates', outward: true },
      // On X: Y is X's successor -> X (the predecessor) blocks Y.
      'System.LinkTypes.Dependency-Forward': { name: 'Blocks', outward: true },
      // On X: Y is X's predecessor -> Y blocks X.
      'System.LinkTypes.Dependency-Reverse': { name: 'Blocks', outward: false },
      // On X: Y is a duplicate of X -> Y duplicates X.
      'System.LinkTypes.Duplicate-Forward': { name: 'Duplicate', outward: false },
      // On X: X is a duplicate of Y -> X duplicates Y.
      'System.LinkTypes.Duplicate-Reverse': { name: 'Duplicate', outward: true },
      // On X: X is tested by Y -> Y tests X.
      'Microsoft.VSTS.Common.TestedBy-Forward': { name: 'Tests', outward: false },
      // On X: X tests Y.
      'Microsoft.VSTS.Common.TestedBy-Reverse': { name: 'Tests', outward: true },
      'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Forward': undefined,
      'Microsoft.VSTS.TestCase.SharedStepReferencedBy-Reverse': undefined,
    });
  });

  it('maps the CMMI Affects links to Relates, ignores case, and leaves other relations out', () => {
    expect(linkTypeFor('Microsoft.VSTS.Common.Affects-Forward')).toEqual({ name: 'Relates', outward: true });
    expect(linkTypeFor('Microsoft.VSTS.Common.Affects-Reverse')).toEqual({ name: 'Relates', outward: false });
    expect(linkTypeFor('system.linktypes.related')).toEqual({ name: 'Relates', outward: true });
    for (const other of ['Hyperlink', 'ArtifactLink', 'AttachedFile', 'System.LinkTypes.Remote.Related', ''])
      expect(linkTypeFor(other)).toBeUndefined();
  });
});

describe('planIssueLinks', () => {
  /** A small world written the way the generator writes links: on both ends. */
  const items: SourceItemRelations[] = [
    // 3: a user story, parent of task 20, tested by test case 15, related to 9.
    { id: 3, relations: [to(REL.child, 20), to(REL.testedBy, 15), to(REL.related, 9)] },
    // 5 is 9's predecessor.
    { id: 5, relations: [to(REL.successor, 9)] },
    // Bug 12 is a duplicate of bug 8.
    { id: 8, relations: [to(REL.hasDuplicate, 12)] },
    {
      id: 9,
      relations: [to(REL.predecessor, 5), to(REL.related, 3, 'same root cause'), to(REL.related, 400)],
    },
    { id: 12, relations: [to(REL.duplicateOf, 8)] },
    {
      id: 15,
      relations: [
        to(REL.tests, 3),
        to('Microsoft.VSTS.TestCase.SharedStepReferencedBy-Reverse', 6),
        { rel: 'Hyperlink', url: 'https://wiki.contoso.example.com/pages/1?section=design' },
      ],
    },
    {
      id: 20,
      relations: [
        to(REL.parent, 3),
        to(REL.related, 20),
        {
          rel: 'ArtifactLink',
          url: 'vstfs:///Git/Commit/5b0c%2F9a1b%2Fabc123',
          attributes: { name: 'Fixed in Commit' },
        },
        { rel: 'AttachedFile', url: `${API}/wit/attachments/0f9e8d7c-6b5a-4321-8fed-cba987654321` },
      ],
    },
  ];

  it('yields each link once, in the right direction, with its comment', () => {
    expect(planIssueLinks(items)).toEqual({
      links: [
        { type: 'Tests', from: 15, to: 3 },
        { type: 'Relates', from: 3, to: 9, comment: 'same root cause' },
        { type: 'Blocks', from: 5, to: 9 },
        { type: 'Duplicate', from: 12, to: 8 },
        { type: 'Relates', from: 9, to: 400 },
      ],
      warnings: [],
    });
  });

  it("needs no fallback on the sandbox site's link types", () => {
    const result = planIssueLinks(items, { availableTypes: JIRA_LINK_TYPES.map((t) => t.name) });
    expect(result.links.map((l) => l.type)).toEqual(['Tests', 'Relates', 'Blocks', 'Duplicate', 'Relates']);
    expect(result.warnings).toEqual([]);
  });

  it('creates a missing type as Relates (one warning), merging with an existing Relates link', () => {
    const both: SourceItemRelations[] = [
      { id: 3, relations: [to(REL.testedBy, 15), to(REL.related, 15)] },
      { id: 15, relations: [to(REL.tests, 3), to(REL.related, 3)] },
    ];
    expect(planIssueLinks(both, { availableTypes: ['Blocks', 'Cloners', 'Duplicate', 'relates'] })).toEqual({
      links: [{ type: 'Relates', from: 3, to: 15 }],
      warnings: ['Jira has no "Tests" link type: those links are created as "Relates"'],
    });
  });

  it('drops links whose type is missing when Relates is missing too', () => {
    expect(planIssueLinks(items, { availableTypes: ['Blocks'] })).toEqual({
      links: [{ type: 'Blocks', from: 5, to: 9 }],
      warnings: [
        'Jira has no "Tests" link type: those links are not migrated',
        'Jira has no "Relates" link type: those links are not migrated',
        'Jira has no "Duplicate" link type: those links are not migrated',
      ],
    });
  });
});

describe('relation helpers', () => {
  it('reads the work item id from a relation URL', () => {
    expect(workItemIdFromUrl(`${API}/wit/workItems/42`)).toBe(42);
    expect(workItemIdFromUrl('https://dev.azure.com/contoso/_apis/wit/workitems/7?api-version=7.1')).toBe(7);
    expect(workItemIdFromUrl(`${API}/wit/attachments/0f9e8d7c-6b5a-4321-8fed-cba987654321`)).toBeUndefined();
    expect(workItemIdFromUrl('vstfs:///Git/Commit/abc')).toBeUndefined();
    expect(workItemIdFromUrl(`${API}/wit/workItems/0`)).toBeUndefined();
  });

  it('finds the parent from the Hierarchy-Reverse relation, else System.Parent', () => {
    expect(parentIdFrom({ id: 20, relations: [to(REL.related, 9), to(REL.parent, 3)] })).toBe(3);
    expect(parentIdFrom({ id: 20, fields: { 'System.Parent': 3 } })).toBe(3);
    expect(
      parentIdFrom({ id: 3, relations: [to(REL.child, 20)], fields: { 'System.Title': 'x' } }),
    ).toBeUndefined();
  });
});
