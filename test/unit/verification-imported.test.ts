/**
 * Verification of one item delivered by Jira's importer: the issue is compared with what its import file carried
 * (type, status, summary, the description and each comment read as Jira reads wiki markup, labels, components,
 * priority, people, created/updated/resolution dates, each comment's author and date), and with what the REST
 * phases set after the import (parent, links, attachments, sprint) as for a REST run. A faithful import passes;
 * each change made in Jira is exactly one difference; what is by design (a person without a Jira account, the
 * REST phases' later writes, the service account's notes, what wiki markup cannot carry) is none.
 */
import { describe, expect, it } from 'vitest';
import { type AdfDoc, htmlToAdf } from '../../functions/domain/adf/index.ts';
import { adfToWiki, type ImportIssue, wikiToAdf } from '../../functions/domain/jira-import/index.ts';
import { mapTypes } from '../../functions/domain/mapping/index.ts';
import {
  compareIssue,
  expectedImported,
  expectedIssue,
  type ReadBackIssue,
  readBackIssue,
  type VerificationContext,
  type VerificationSource,
} from '../../functions/domain/verification/index.ts';
import { AGILE_TYPES } from '../../local/sandbox/generator/process.ts';
import { CUSTOM, ISSUE_TYPES, PRIORITIES } from '../../local/sandbox/jira/catalog.ts';

const typeMap = mapTypes(
  AGILE_TYPES.map((t) => t.name),
  ISSUE_TYPES.map((t) => ({ id: t.id, name: t.name, hierarchyLevel: t.hierarchyLevel })),
).map;
const ACCOUNTS: Record<string, string> = { 'ava.adams@contoso.example.com': 'acc-ava' };
const KEYS: Record<number, string> = { 11: 'MIG-11', 12: 'MIG-12', 13: 'MIG-13' };
const wi = (id: number) => `https://dev.azure.com/contoso/_apis/wit/workItems/${id}`;

const ctx: VerificationContext = {
  projectName: 'Contoso',
  typeMap,
  states: { 'User Story': { Active: { status: { id: '3', name: 'In Progress' } } } },
  priorityNames: PRIORITIES.map((p) => p.name),
  storyPointsFieldId: CUSTOM.storyPoints,
  sprintFieldId: CUSTOM.sprint,
  users: (email) => ACCOUNTS[email],
  keyOf: (id) => KEYS[id],
  holdsParent: (parentId) => parentId === 11,
  sprintOf: (path) => (path === 'Contoso\\Sprint 1' ? 'Sprint 1' : undefined),
  customFields: [],
  links: { availableTypes: ['Blocks', 'Relates'] },
  isEngineFile: () => false,
};

const doc = (html: string): AdfDoc =>
  htmlToAdf(html, {
    workItemKey: (id) => KEYS[id],
    issueUrl: (k) => `https://acme.atlassian.net/browse/${k}`,
  });
const DESCRIPTION = doc(
  '<p>Pay with a <b>saved</b> card, see #13.</p><table><tr><td>Step</td><td>Result</td></tr><tr><td>Pay</td><td>Paid</td></tr></table>',
);
const COMMENT_1 = doc('<p>First look.</p>');
const COMMENT_2 = doc('<p>Done <i>now</i>.</p>');

/** The source item as the REST expectations read it (parent, links, files, sprint, estimates). */
const source = (): VerificationSource => ({
  id: 12,
  fields: {
    'System.WorkItemType': 'User Story',
    'System.State': 'Active',
    'System.Title': 'Checkout with saved cards',
    'System.Tags': 'payments',
    'System.AreaPath': 'Contoso\\Web',
    'System.IterationPath': 'Contoso\\Sprint 1',
    'System.AssignedTo': { displayName: 'Ava Adams', uniqueName: 'ava.adams@contoso.example.com' },
    'System.CreatedBy': { displayName: 'Bo Brown', uniqueName: 'bo.brown@contoso.example.com' },
    'Microsoft.VSTS.Common.Priority': 2,
  },
  relations: [
    { rel: 'System.LinkTypes.Hierarchy-Reverse', url: wi(11) },
    { rel: 'System.LinkTypes.Dependency-Forward', url: wi(13) },
    {
      rel: 'AttachedFile',
      url: 'https://x/_apis/wit/attachments/a',
      attributes: { name: 'spec.pdf', resourceSize: 2048 },
    },
  ],
  comments: [],
});

/**
 * The item's issue in its import file, as the builder writes it: the reporter (Bo Brown) has no Jira account, so
 * the file names none and the text says who; the second comment is by a person without an account too.
 */
const carried = (): ImportIssue => ({
  externalId: '12',
  issueType: 'Story',
  summary: 'Checkout with saved cards',
  status: 'In Progress',
  priority: 'High',
  description: adfToWiki(DESCRIPTION),
  assignee: 'acc-ava',
  created: '2026-03-01T09:00:00.000+0000',
  updated: '2026-03-04T16:30:00.000+0000',
  labels: ['payments', 'src-id-12', 'tms-import-run1-1'],
  components: ['Web'],
  comments: [
    { body: adfToWiki(COMMENT_1), author: 'acc-ava', created: '2026-03-02T10:00:00.000+0000' },
    {
      body: `_Originally posted by Cy Cole (Azure DevOps comment 502)_\n\n${adfToWiki(COMMENT_2)}`,
      created: '2026-03-03T11:00:00.500+0000',
    },
  ],
});

/** The issue Jira answers after a faithful import and the REST phases' writes (sprint, parent, links, files). */
const faithfulJira = (file = carried()) => ({
  key: 'MIG-12',
  fields: {
    issuetype: { id: typeMap['User Story']?.id, name: 'Story' },
    status: { name: 'In Progress' },
    summary: 'Checkout with saved cards',
    labels: ['payments', 'src-id-12', 'tms-import-run1-1'],
    components: [{ id: '1', name: 'Web' }],
    priority: { name: 'High' },
    assignee: { accountId: 'acc-ava' },
    // The importer's own reporter where the file names none: the importing administrator.
    reporter: { accountId: 'acc-site-admin' },
    parent: { key: 'MIG-11' },
    issuelinks: [{ type: { name: 'Blocks' }, outwardIssue: { key: 'MIG-13' } }],
    attachment: [{ filename: 'spec.pdf', size: 2048 }],
    [CUSTOM.sprint]: [{ id: 1, name: 'Sprint 1' }],
    [CUSTOM.storyPoints]: null,
    // Jira's answer forms: dates with a zone offset; `updated` moved on by the REST phases' writes.
    created: '2026-03-01T09:00:00.000+0000',
    updated: '2026-12-07T15:00:00.000+0000',
    resolutiondate: null,
    description: wikiToAdf(file.description ?? ''),
  },
});

const faithfulComments = (file = carried()) => [
  ...(file.comments ?? []).map((c, i) => ({
    id: `c${i}`,
    body: wikiToAdf(c.body),
    author: { accountId: c.author ?? 'acc-site-admin' },
    created: c.created,
  })),
  // A note of the REST phases (a link's comment), by the service account: not the import's.
  {
    id: 'c9',
    body: doc('<p>Linked from Azure DevOps</p>'),
    author: { accountId: 'acc-service' },
    created: '2026-12-07T15:00:00.000+0000',
  },
];

type Jira = ReturnType<typeof faithfulJira>;
type Comments = ReturnType<typeof faithfulComments>;
const read = (jira: Jira, comments: Comments): ReadBackIssue =>
  readBackIssue(jira, comments, { sprintFieldId: CUSTOM.sprint, storyPointsFieldId: CUSTOM.storyPoints });
const want = (file = carried()) => expectedImported(expectedIssue(source(), 'MIG-12', ctx), file);

function verdictOf(change: (jira: Jira, comments: Comments) => void, file = carried()) {
  const jira = faithfulJira(file);
  const comments = faithfulComments(file);
  change(jira, comments);
  return compareIssue(want(file), read(jira, comments));
}

describe('verification of an imported item', () => {
  it('a faithful import passes; the people without a Jira account are noted, not differences', () => {
    // Act
    const verdict = verdictOf(() => undefined);
    // Assess
    expect(verdict).toEqual({
      sourceId: 12,
      key: 'MIG-12',
      result: 'pass',
      differences: [],
      notes: [
        'reporter bo.brown@contoso.example.com has no Jira account',
        'comment 2 (2026-03-03T11:00:00.500Z): its author has no Jira account (named in its text)',
      ],
    });
  });

  it('expects what the file carried, the description and comments read as Jira reads wiki markup', () => {
    const expected = want();
    expect(expected).toMatchObject({
      type: { name: 'Story' },
      status: 'In Progress',
      summary: 'Checkout with saved cards',
      labels: ['payments', 'src-id-12', 'tms-import-run1-1'],
      components: ['Web'],
      priority: 'High',
      assignee: 'acc-ava',
      parentKey: 'MIG-11',
      links: ['Blocks → MIG-13'],
      sprint: 'Sprint 1',
      imported: {
        created: '2026-03-01T09:00:00.000+0000',
        updated: '2026-03-04T16:30:00.000+0000',
      },
    });
    expect(expected.reporter).toBeUndefined();
    expect(expected.imported?.resolutionDate).toBeUndefined();
    expect(expected.imported?.comments.map((c) => c.author)).toEqual(['acc-ava', undefined]);
    expect(expected.description).toEqual(wikiToAdf(carried().description ?? ''));
  });

  it('a faithful import is judged as a document: Jira holding the source document itself passes too', () => {
    // A Jira whose description is the document the writer was given (other node ids, marks as written).
    const verdict = verdictOf((jira) => {
      jira.fields.description = structuredClone(DESCRIPTION);
    });
    expect(verdict.differences).toEqual([]);
  });

  it('what wiki markup cannot carry (merged cells, a | in a cell) is expected as the file wrote it: no difference', () => {
    // Prepare: a table whose first row is one merged cell, and a cell holding a |.
    const merged: AdfDoc = {
      type: 'doc',
      version: 1,
      content: [
        {
          type: 'table',
          content: [
            {
              type: 'tableRow',
              content: [
                {
                  type: 'tableCell',
                  attrs: { colspan: 2 },
                  content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Both' }] }],
                },
              ],
            },
            {
              type: 'tableRow',
              content: ['a|b', 'c'].map((text) => ({
                type: 'tableCell',
                content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
              })),
            },
          ],
        },
      ],
    };
    const file = { ...carried(), description: adfToWiki(merged) };
    // Act: Jira holds what it reads from the file.
    const verdict = verdictOf(() => undefined, file);
    // Assess: as the file wrote it, though the source document differs from it (compared with the source
    // document, the merged cell and the | would be differences).
    expect(verdict.differences).toEqual([]);
    expect(wikiToAdf(file.description)).not.toEqual(merged);
  });

  it("the REST phases' later writes move `updated` on: no difference; an `updated` before the file's is one", () => {
    expect(verdictOf(() => undefined).result).toBe('pass');
    const verdict = verdictOf((jira) => {
      jira.fields.updated = '2026-03-04T16:29:00.000+0000';
    });
    expect(verdict.differences).toEqual([
      {
        field: 'updated',
        expected: '2026-03-04T16:30:00.000Z or later',
        actual: '2026-03-04T16:29:00.000Z',
      },
    ]);
  });

  /** [what changed in Jira, the change, the one difference expected]. */
  const CHANGES: [
    string,
    (jira: Jira, comments: Comments) => void,
    { field: string; expected: string; actual: string },
  ][] = [
    [
      'a comment by another author',
      (_, comments) => {
        (comments[0] as Comments[number]).author = { accountId: 'acc-mallory' };
      },
      {
        field: 'comments.author',
        expected: 'comment 1 (2026-03-02T10:00:00.000Z): acc-ava',
        actual: 'acc-mallory',
      },
    ],
    [
      "a comment's text edited",
      (_, comments) => {
        (comments[0] as Comments[number]).body = doc('<p>First look, edited.</p>');
      },
      {
        field: 'comments.text',
        expected: 'comment 1 (2026-03-02T10:00:00.000Z): First look.',
        actual: 'First look, edited.',
      },
    ],
    [
      'a comment deleted',
      (_, comments) => {
        comments.splice(0, 1);
      },
      { field: 'comments', expected: 'comment 1 (2026-03-02T10:00:00.000Z): First look.', actual: '(none)' },
    ],
    [
      "a comment's date moved",
      (_, comments) => {
        (comments[0] as Comments[number]).created = '2026-03-02T12:00:00.000+0000';
      },
      {
        field: 'comments.created',
        expected: 'comment 1: 2026-03-02T10:00:00.000Z',
        actual: '2026-03-02T12:00:00.000Z',
      },
    ],
    [
      'the created date moved',
      (jira) => {
        jira.fields.created = '2026-02-01T09:00:00.000+0000';
      },
      { field: 'created', expected: '2026-03-01T09:00:00.000Z', actual: '2026-02-01T09:00:00.000Z' },
    ],
    [
      'a resolution date where the file set none',
      (jira) => {
        (jira.fields as Record<string, unknown>).resolutiondate = '2026-03-05T09:00:00.000+0000';
      },
      { field: 'resolutionDate', expected: '(none)', actual: '2026-03-05T09:00:00.000Z' },
    ],
    [
      'a label changed',
      (jira) => {
        jira.fields.labels = ['payment', 'src-id-12', 'tms-import-run1-1'];
      },
      {
        field: 'labels',
        expected: 'payments, src-id-12, tms-import-run1-1',
        actual: 'payment, src-id-12, tms-import-run1-1',
      },
    ],
    [
      'the assignee changed',
      (jira) => {
        jira.fields.assignee = { accountId: 'acc-mallory' };
      },
      { field: 'assignee', expected: 'acc-ava', actual: 'acc-mallory' },
    ],
    [
      'the status moved',
      (jira) => {
        jira.fields.status = { name: 'Done' };
      },
      { field: 'status', expected: 'In Progress', actual: 'Done' },
    ],
    [
      'the type changed',
      (jira) => {
        jira.fields.issuetype = { id: '10009', name: 'Bug' };
      },
      { field: 'type', expected: 'Story', actual: 'Bug' },
    ],
    [
      'a table cell of the description edited',
      (jira) => {
        const d = structuredClone(jira.fields.description) as AdfDoc;
        const cell = JSON.stringify(d).replace('"Paid"', '"Refunded"');
        jira.fields.description = JSON.parse(cell) as AdfDoc;
      },
      { field: 'description.tables', expected: 'table 1, row 2, cell 2: "Paid"', actual: '"Refunded"' },
    ],
  ];

  for (const [what, change, difference] of CHANGES)
    it(`${what} is one difference`, () => {
      const verdict = verdictOf(change);
      expect(verdict.result).toBe('differs');
      expect(verdict.differences).toEqual([difference]);
    });

  it('a resolution date the file set is compared by its instant', () => {
    const file = {
      ...carried(),
      status: 'Done',
      resolution: 'Done',
      resolutionDate: '2026-03-04T16:30:00.000+0000',
    };
    const ok = verdictOf((jira) => {
      jira.fields.status = { name: 'Done' };
      (jira.fields as Record<string, unknown>).resolutiondate = '2026-03-04T17:30:00.000+0100';
    }, file);
    expect(ok.differences).toEqual([]);
    const moved = verdictOf((jira) => {
      jira.fields.status = { name: 'Done' };
      (jira.fields as Record<string, unknown>).resolutiondate = '2026-03-05T16:30:00.000+0000';
    }, file);
    expect(moved.differences).toEqual([
      { field: 'resolutionDate', expected: '2026-03-04T16:30:00.000Z', actual: '2026-03-05T16:30:00.000Z' },
    ]);
  });
});

describe('verification of an imported item: its change history', () => {
  /** The file's history: a status change by Ava, then an assignment by a person without a Jira account. */
  const withHistory = (): ImportIssue => ({
    ...carried(),
    history: [
      {
        author: 'acc-ava',
        created: '2026-03-02T09:30:00.000+0000',
        items: [
          {
            fieldType: 'jira',
            field: 'status',
            from: '10000',
            fromString: 'To Do',
            to: '3',
            toString: 'In Progress',
          },
        ],
      },
      {
        created: '2026-03-03T12:00:00.250+0000',
        items: [
          {
            fieldType: 'jira',
            field: 'assignee',
            from: null,
            fromString: null,
            to: 'acc-ava',
            toString: 'Ava Adams',
          },
          {
            fieldType: 'custom',
            field: 'Story Points',
            from: null,
            fromString: null,
            to: null,
            toString: '5',
          },
        ],
      },
    ],
  });

  /** `GET /issue/MIG-12/changelog` after a faithful import: the file's entries, then the sprint move by REST. */
  const faithfulChangelog = (file = withHistory()) => [
    ...(file.history ?? []).map((h, i) => ({
      id: String(100 + i),
      // The importer names its administrator where the file names no author.
      author: { accountId: h.author ?? 'acc-site-admin' },
      created: h.created,
      items: h.items.map((x) => ({ ...x, fieldtype: x.fieldType, fieldType: undefined })),
    })),
    {
      id: '200',
      author: { accountId: 'acc-service' },
      created: '2026-12-07T15:00:00.000+0000',
      items: [{ field: 'Sprint', fieldtype: 'custom', fromString: null, toString: 'Sprint 1' }],
    },
  ];
  type Changelog = ReturnType<typeof faithfulChangelog>;

  const historyVerdict = (change: (changelog: Changelog) => void, file = withHistory()) => {
    const changelog = faithfulChangelog(file);
    change(changelog);
    const jira = faithfulJira(file);
    const got = readBackIssue(
      jira,
      faithfulComments(file),
      { sprintFieldId: CUSTOM.sprint, storyPointsFieldId: CUSTOM.storyPoints },
      changelog,
    );
    return compareIssue(want(file), got);
  };

  it('a changelog holding every entry of the file passes; the REST phases’ later entries are not the import’s', () => {
    const verdict = historyVerdict(() => undefined);
    expect(verdict.differences).toEqual([]);
    expect(verdict.result).toBe('pass');
    expect(want(withHistory()).imported?.history).toEqual([
      {
        author: 'acc-ava',
        created: '2026-03-02T09:30:00.000+0000',
        items: [{ field: 'status', fromString: 'To Do', toString: 'In Progress' }],
      },
      {
        created: '2026-03-03T12:00:00.250+0000',
        items: [
          { field: 'assignee', fromString: null, toString: 'Ava Adams' },
          { field: 'Story Points', fromString: null, toString: '5' },
        ],
      },
    ]);
  });

  const HISTORY_CHANGES: [
    string,
    (changelog: Changelog) => void,
    { field: string; expected: string; actual: string },
  ][] = [
    [
      "a change's value edited",
      (c) => {
        (c[0]!.items[0] as { toString: string }).toString = 'Done';
      },
      {
        field: 'history',
        expected: 'change 1 (2026-03-02T09:30:00.000Z): status: To Do → In Progress',
        actual: 'status: To Do → Done',
      },
    ],
    [
      "an entry's author changed",
      (c) => {
        c[0]!.author = { accountId: 'acc-someone' };
      },
      {
        field: 'history.author',
        expected: 'change 1 (2026-03-02T09:30:00.000Z): acc-ava',
        actual: 'acc-someone',
      },
    ],
    [
      "an entry's date moved",
      (c) => {
        c[1]!.created = '2026-03-03T12:00:01.250+0000';
      },
      {
        field: 'history.created',
        expected: 'change 2: 2026-03-03T12:00:00.250Z',
        actual: '2026-03-03T12:00:01.250Z',
      },
    ],
    [
      'an entry missing',
      (c) => {
        c.splice(1, 1);
      },
      {
        field: 'history',
        expected:
          'change 2 (2026-03-03T12:00:00.250Z): assignee: (none) → Ava Adams; Story Points: (none) → 5',
        actual: '(none)',
      },
    ],
  ];
  for (const [what, change, difference] of HISTORY_CHANGES)
    it(`${what} is exactly one difference`, () => {
      const verdict = historyVerdict(change);
      expect(verdict.result).toBe('differs');
      expect(verdict.differences).toEqual([difference]);
    });
});
