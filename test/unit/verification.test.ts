/**
 * Verification of one item: a faithful Jira issue passes; each change made in Jira is exactly one difference
 * with both values; what the mapping does by design (a type mapped to another, a state override, a person
 * without a Jira account, a priority the scheme lacks) is no difference.
 */
import { describe, expect, it } from 'vitest';
import { type AdfDoc, htmlToAdf } from '../../functions/domain/adf/index.ts';
import { mapTypes } from '../../functions/domain/mapping/index.ts';
import {
  canonical,
  compareDocuments,
  compareIssue,
  documentFacts,
  durationSeconds,
  type ExpectedIssue,
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
const KEYS: Record<number, string> = { 10: 'MIG-10', 11: 'MIG-11', 12: 'MIG-12', 13: 'MIG-13' };
const wi = (id: number) => `https://dev.azure.com/contoso/_apis/wit/workItems/${id}`;

const ctx: VerificationContext = {
  projectName: 'Contoso',
  typeMap,
  states: {
    'User Story': { Active: { status: { id: '3', name: 'In Progress' } } },
    Bug: { Active: { status: { id: '3', name: 'In Progress' } } },
  },
  priorityNames: PRIORITIES.map((p) => p.name),
  storyPointsFieldId: CUSTOM.storyPoints,
  sprintFieldId: CUSTOM.sprint,
  users: (email) => ACCOUNTS[email],
  keyOf: (id) => KEYS[id],
  // A Task under a User Story: both standard issues, so a Relates link holds it (phase 3).
  holdsParent: (parentId) => parentId === 11,
  sprintOf: (path) => (path === 'Contoso\\Sprint 1' ? 'Sprint 1' : undefined),
  customFields: [
    { source: 'Custom.Team', fieldId: 'customfield_20000', name: 'Team', shape: 'option' },
  ] as VerificationContext['customFields'],
  links: { availableTypes: ['Blocks', 'Relates', 'Duplicate'] },
  isEngineFile: (name) => /^ado-history-\d+/.test(name),
};

const TABLE_HTML =
  '<p>Pay with a <b>saved</b> card.</p><table><tr><td>Step</td><td>Result</td></tr><tr><td>Pay</td><td>Paid</td></tr></table>';
const doc = (html: string): AdfDoc =>
  htmlToAdf(html, {
    workItemKey: (id) => KEYS[id],
    issueUrl: (k) => `https://acme.atlassian.net/browse/${k}`,
  });
const comment = (id: number, text: string): { id: number; doc: AdfDoc } => ({
  id,
  doc: {
    type: 'doc',
    version: 1,
    content: [
      {
        type: 'paragraph',
        content: [
          {
            type: 'text',
            text: `Originally posted by Ava Adams on 1 Mar 2026, 10:00 UTC (Azure DevOps comment ${id})`,
          },
        ],
      },
      ...doc(text).content,
    ],
  },
});

const source = (): VerificationSource => ({
  id: 12,
  fields: {
    'System.WorkItemType': 'User Story',
    'System.State': 'Active',
    'System.Title': 'Checkout  with saved cards',
    'System.Tags': 'payments; tech debt',
    'System.AreaPath': 'Contoso\\Web',
    'System.IterationPath': 'Contoso\\Sprint 1',
    'System.AssignedTo': { displayName: 'Ava Adams', uniqueName: 'Ava.Adams@contoso.example.com' },
    'System.CreatedBy': { displayName: 'Ava Adams', uniqueName: 'ava.adams@contoso.example.com' },
    'Microsoft.VSTS.Common.Priority': 1,
    'Microsoft.VSTS.Scheduling.StoryPoints': 5,
    'Microsoft.VSTS.Scheduling.OriginalEstimate': 1.5,
    'Custom.Team': 'Payments',
  },
  relations: [
    { rel: 'System.LinkTypes.Hierarchy-Reverse', url: wi(11) },
    { rel: 'System.LinkTypes.Dependency-Forward', url: wi(13) },
    { rel: 'System.LinkTypes.Related', url: wi(10) },
    { rel: 'System.LinkTypes.Related', url: wi(999) },
    {
      rel: 'AttachedFile',
      url: 'https://x/_apis/wit/attachments/a',
      attributes: { name: 'spec.pdf', resourceSize: 2048 },
    },
  ],
  description: doc(`${TABLE_HTML}<p>See #13.</p>`),
  comments: [comment(501, '<p>First look.</p>'), comment(502, '<p>Done <i>now</i>.</p>')],
  inlineImages: [{ name: 'screen.png', size: 700 }],
});

/** The issue Jira answers when every write of the run arrived. */
const faithfulJira = (s: VerificationSource) => ({
  key: 'MIG-12',
  fields: {
    issuetype: { id: typeMap['User Story']?.id, name: typeMap['User Story']?.name },
    status: { name: 'In Progress' },
    summary: 'Checkout with saved cards',
    labels: ['payments', 'tech-debt', 'src-id-12'],
    components: [{ id: '1', name: 'Web' }],
    priority: { name: 'Highest' },
    assignee: { accountId: 'acc-ava' },
    reporter: { accountId: 'acc-ava' },
    parent: { key: 'MIG-11' },
    issuelinks: [
      { type: { name: 'Blocks' }, outwardIssue: { key: 'MIG-13' } },
      { type: { name: 'Relates' }, inwardIssue: { key: 'MIG-10' } },
    ],
    attachment: [
      { filename: 'spec.pdf', size: 2048 },
      { filename: 'screen.png', size: 700 },
      { filename: 'ado-history-12-r4.html', size: 9000 },
    ],
    [CUSTOM.sprint]: [{ id: 1, name: 'Sprint 1' }],
    [CUSTOM.storyPoints]: 5,
    timetracking: { originalEstimateSeconds: 5400, remainingEstimateSeconds: 5400 },
    customfield_20000: { value: 'Payments', id: '100' },
    description: structuredClone(s.description),
  },
});

const read = (jira: ReturnType<typeof faithfulJira>, comments = faithfulComments()): ReadBackIssue =>
  readBackIssue(jira, comments, { sprintFieldId: CUSTOM.sprint, storyPointsFieldId: CUSTOM.storyPoints });
const faithfulComments = () =>
  source().comments.map((c) => ({ id: `j${c.id}`, body: structuredClone(c.doc) }));

function verdictOf(change: (jira: ReturnType<typeof faithfulJira>) => void, s = source()) {
  const jira = faithfulJira(s);
  change(jira);
  return compareIssue(expectedIssue(s, 'MIG-12', ctx), read(jira), ctx.isEngineFile);
}

describe('verification of one item', () => {
  it('a faithful issue passes, with nothing noted', () => {
    // Prepare
    const s = source();
    // Act
    const verdict = compareIssue(expectedIssue(s, 'MIG-12', ctx), read(faithfulJira(s)), ctx.isEngineFile);
    // Assess
    expect(verdict).toEqual({ sourceId: 12, key: 'MIG-12', result: 'pass', differences: [], notes: [] });
  });

  it('expects what the engine maps: labels with src-id, the component, estimates in seconds, the parent Jira holds', () => {
    const want = expectedIssue(source(), 'MIG-12', ctx);
    expect(want).toMatchObject({
      summary: 'Checkout with saved cards',
      labels: ['payments', 'tech-debt', 'src-id-12'],
      components: ['Web'],
      priority: 'Highest',
      assignee: 'acc-ava',
      reporter: 'acc-ava',
      parentKey: 'MIG-11',
      status: 'In Progress',
      sprint: 'Sprint 1',
      storyPoints: 5,
      originalEstimateSeconds: 5400,
      customFields: { customfield_20000: { value: 'Payments' } },
    });
    // The relation to #999 (not migrated) is a remote link, not an issue link.
    expect(want.links).toEqual(['Blocks → MIG-13', 'Relates ↔ MIG-10']);
  });

  /** [what changed in Jira, the field set to this value (undefined: removed), the one difference expected]. */
  const FIELD_CHANGES: [string, string, unknown, { field: string; expected: string; actual: string }][] = [
    [
      'a label changed',
      'labels',
      ['payments', 'techdebt', 'src-id-12'],
      {
        field: 'labels',
        expected: 'payments, src-id-12, tech-debt',
        actual: 'payments, src-id-12, techdebt',
      },
    ],
    [
      'a label changed in case only (Jira labels are case-sensitive)',
      'labels',
      ['Payments', 'tech-debt', 'src-id-12'],
      {
        field: 'labels',
        expected: 'payments, src-id-12, tech-debt',
        actual: 'Payments, src-id-12, tech-debt',
      },
    ],
    [
      'the summary edited',
      'summary',
      'Checkout',
      { field: 'summary', expected: 'Checkout with saved cards', actual: 'Checkout' },
    ],
    [
      'another status',
      'status',
      { name: 'Done' },
      { field: 'status', expected: 'In Progress', actual: 'Done' },
    ],
    [
      'another type',
      'issuetype',
      { id: '99', name: 'Task' },
      { field: 'type', expected: 'Story', actual: 'Task' },
    ],
    ['the component removed', 'components', [], { field: 'components', expected: 'Web', actual: '(none)' }],
    [
      'the priority lowered',
      'priority',
      { name: 'Low' },
      { field: 'priority', expected: 'Highest', actual: 'Low' },
    ],
    ['unassigned', 'assignee', null, { field: 'assignee', expected: 'acc-ava', actual: '(none)' }],
    [
      'another reporter',
      'reporter',
      { accountId: 'acc-bob' },
      { field: 'reporter', expected: 'acc-ava', actual: 'acc-bob' },
    ],
    ['the parent removed', 'parent', undefined, { field: 'parent', expected: 'MIG-11', actual: '(none)' }],
    ['out of its sprint', CUSTOM.sprint, [], { field: 'sprint', expected: 'Sprint 1', actual: '(none)' }],
    ['story points changed', CUSTOM.storyPoints, 8, { field: 'storyPoints', expected: '5', actual: '8' }],
    [
      'the original estimate changed',
      'timetracking',
      { originalEstimateSeconds: 3600, remainingEstimateSeconds: 5400 },
      { field: 'originalEstimate', expected: '5400', actual: '3600' },
    ],
    [
      'a mapped custom field changed',
      'customfield_20000',
      { value: 'Search', id: '101' },
      { field: 'custom:customfield_20000', expected: 'Payments', actual: 'Search' },
    ],
  ];
  it.each(FIELD_CHANGES)('%s is one difference with both values', (_, field, value, difference) => {
    const verdict = verdictOf((j) => {
      const fields = j.fields as Record<string, unknown>;
      if (value === undefined) delete fields[field];
      else fields[field] = value;
    });
    expect(verdict.result).toBe('differs');
    expect(verdict.differences).toEqual([difference]);
  });

  it('a link removed or added, a file deleted or replaced: one difference each', () => {
    expect(verdictOf((j) => j.fields.issuelinks.shift()).differences).toEqual([
      { field: 'links', expected: 'Blocks → MIG-13', actual: '(none)' },
    ]);
    expect(
      verdictOf((j) =>
        j.fields.issuelinks.push({ type: { name: 'Duplicate' }, outwardIssue: { key: 'MIG-10' } }),
      ).differences,
    ).toEqual([{ field: 'links', expected: '(none)', actual: 'Duplicate → MIG-10' }]);
    expect(verdictOf((j) => j.fields.attachment.shift()).differences).toEqual([
      { field: 'attachments', expected: 'spec.pdf (2048 bytes)', actual: '(none)' },
    ]);
    expect(
      verdictOf((j) => {
        j.fields.attachment[0] = { filename: 'spec.pdf', size: 10 };
      }).differences,
    ).toEqual([{ field: 'attachments', expected: 'spec.pdf (2048 bytes)', actual: 'spec.pdf (10 bytes)' }]);
  });

  describe('the description, compared as a document', () => {
    const editDescription = (edit: (html: string) => string) => (j: ReturnType<typeof faithfulJira>) => {
      j.fields.description = doc(edit(`${TABLE_HTML}<p>See #13.</p>`));
    };

    it('a table cell edited is one difference naming the cell, not a text difference too', () => {
      const verdict = verdictOf(editDescription((h) => h.replace('<td>Paid</td>', '<td>Refused</td>')));
      expect(verdict.differences).toEqual([
        { field: 'description.tables', expected: 'table 1, row 2, cell 2: "Paid"', actual: '"Refused"' },
      ]);
    });

    it('text edited shows both texts from where they part', () => {
      const verdict = verdictOf(editDescription((h) => h.replace('saved', 'stored')));
      expect(verdict.differences).toEqual([
        {
          field: 'description.text',
          expected: 'Pay with a saved card. See .',
          actual: 'Pay with a stored card. See .',
        },
      ]);
    });

    it('a table removed, an image removed, a reference (an inline card) removed', () => {
      expect(verdictOf(editDescription((h) => h.replace(/<table>.*<\/table>/, ''))).differences).toEqual([
        { field: 'description.tables', expected: '1 table(s)', actual: '0 table(s)' },
      ]);
      expect(verdictOf(editDescription((h) => h.replace('#13', ''))).differences).toEqual([
        {
          field: 'description.references',
          expected: 'https://acme.atlassian.net/browse/MIG-13',
          actual: '(none)',
        },
      ]);
      const withImage: AdfDoc = {
        type: 'doc',
        version: 1,
        content: [{ type: 'mediaSingle', content: [{ type: 'media', attrs: { id: 'm1', type: 'file' } }] }],
      };
      expect(compareDocuments('description', withImage, { type: 'doc', version: 1, content: [] })).toEqual([
        { field: 'description.images', expected: '1 image(s)', actual: '0 image(s)' },
      ]);
    });

    it('mentions compare by account, and a document Jira re-serialised (other attribute order, ids) still passes', () => {
      const mention = (id: string, extra: Record<string, unknown> = {}) => ({
        type: 'doc',
        version: 1,
        content: [
          { type: 'paragraph', content: [{ type: 'mention', attrs: { ...extra, id, text: '@Ava' } }] },
        ],
      });
      expect(
        compareDocuments('d', mention('acc-ava'), mention('acc-ava', { localId: 'x1', accessLevel: '' })),
      ).toEqual([]);
      expect(compareDocuments('d', mention('acc-ava'), mention('acc-bob'))).toEqual([
        { field: 'd.mentions', expected: 'acc-ava', actual: 'acc-bob' },
      ]);
    });

    it('a description gone is a text difference; none expected and none shown passes', () => {
      expect(
        verdictOf((j) => {
          delete (j.fields as Record<string, unknown>).description;
        }).differences.map((d) => d.field),
      ).toEqual(['description.text', 'description.tables', 'description.references']);
      const s = source();
      delete s.description;
      expect(verdictOf((j) => delete (j.fields as Record<string, unknown>).description, s).result).toBe(
        'pass',
      );
    });

    it('reads text as a reader does: blocks apart, whitespace collapsed, table text in its cells only', () => {
      expect(documentFacts(doc(TABLE_HTML))).toEqual({
        text: 'Pay with a saved card.',
        tables: [
          [
            ['Step', 'Result'],
            ['Pay', 'Paid'],
          ],
        ],
        images: 0,
        mentions: [],
        references: [],
      });
      expect(documentFacts('not a document').text).toBe('');
    });
  });

  describe('comments, by the header that names the ADO comment', () => {
    it('a comment removed in Jira is one difference naming it', () => {
      const s = source();
      const jira = faithfulJira(s);
      const verdict = compareIssue(
        expectedIssue(s, 'MIG-12', ctx),
        read(jira, faithfulComments().slice(1)),
        ctx.isEngineFile,
      );
      expect(verdict.differences).toEqual([
        { field: 'comments', expected: 'comment 501: First look.', actual: '(none)' },
      ]);
    });

    it('a comment edited is a text difference naming the comment; one a person added in Jira is not the run’s', () => {
      const s = source();
      const comments = faithfulComments();
      (comments[1]!.body as AdfDoc).content[1] = doc('<p>Done later.</p>').content[0]!;
      comments.push({ id: 'j9', body: doc('<p>Thanks!</p>') });
      const verdict = compareIssue(
        expectedIssue(s, 'MIG-12', ctx),
        read(faithfulJira(s), comments),
        ctx.isEngineFile,
      );
      expect(verdict.differences).toEqual([
        {
          field: 'comments.text',
          expected: 'comment 502: Done now.',
          actual: 'Done later.',
        },
      ]);
    });
  });

  describe('what is by design is not a difference', () => {
    it('a person without a Jira account: no assignee or reporter expected, and said in the notes', () => {
      const s = source();
      const stranger = { displayName: 'Zoe Zed', uniqueName: 'zoe@elsewhere.example.com' };
      s.fields = { ...s.fields, 'System.AssignedTo': stranger, 'System.CreatedBy': stranger };
      const verdict = verdictOf((j) => {
        (j.fields as Record<string, unknown>).assignee = null;
        j.fields.reporter = { accountId: 'acc-migrator' };
      }, s);
      expect(verdict.result).toBe('pass');
      expect(verdict.notes).toEqual([
        'assignee zoe@elsewhere.example.com has no Jira account',
        'reporter zoe@elsewhere.example.com has no Jira account',
      ]);
    });

    it('a type mapped to another and a state override are expected where the mapping sends them', () => {
      const s = source();
      const overridden: VerificationContext = {
        ...ctx,
        typeMap: { ...typeMap, 'User Story': { id: '10002', name: 'Task' } },
        states: { 'User Story': { Active: { status: { id: '9', name: 'Doing' } } } },
      };
      const jira = faithfulJira(s);
      jira.fields.issuetype = { id: '10002', name: 'Task' };
      jira.fields.status = { name: 'doing' };
      expect(compareIssue(expectedIssue(s, 'MIG-12', overridden), read(jira), ctx.isEngineFile).result).toBe(
        'pass',
      );
    });

    it('a state no rule moves, a priority the scheme lacks and no Story Points field are not checked', () => {
      const s = source();
      s.fields = { ...s.fields, 'System.State': 'Parked' };
      const lean: VerificationContext = { ...ctx, priorityNames: ['Medium'] };
      delete lean.storyPointsFieldId;
      const jira = faithfulJira(s);
      jira.fields.status = { name: 'To Do' };
      jira.fields.priority = { name: 'Medium' };
      const want = expectedIssue(s, 'MIG-12', lean);
      expect(want.status).toBeUndefined();
      expect(compareIssue(want, read(jira), ctx.isEngineFile).differences).toEqual([]);
      expect(want.notes).toContain(
        'priority "Highest" is not in the Jira priority scheme: Jira\'s default applies',
      );
    });

    it('an inline image renamed on a name clash keeps its size and kind; the engine’s own files are not extra', () => {
      const verdict = verdictOf((j) => {
        j.fields.attachment[1] = { filename: 'screen (1).png', size: 700 };
      });
      expect(verdict.result).toBe('pass');
    });

    it('a parent Jira cannot hold as `parent` is expected as a Relates link', () => {
      const s = source();
      s.relations = [{ rel: 'System.LinkTypes.Hierarchy-Reverse', url: wi(13) }];
      const want: ExpectedIssue = expectedIssue(s, 'MIG-12', ctx);
      expect(want.parentKey).toBeNull();
      expect(want.links).toEqual(['Relates ↔ MIG-13']);
    });
  });

  it('reads values as both sides spell them: durations, options, Jira dates with a zone', () => {
    expect(durationSeconds('1h 30m')).toBe(5400);
    expect(durationSeconds('15m')).toBe(900);
    expect(durationSeconds('soon')).toBeUndefined();
    expect(canonical({ value: 'A', id: '1' })).toBe('A');
    expect(canonical([{ value: 'b' }, { value: 'a' }])).toBe('a, b');
    expect(canonical('2026-03-01T10:00:00.000+0000')).toBe(canonical('2026-03-01T10:00:00.000Z'));
  });

  it('an answer of an unexpected shape reads as absent rather than throwing', () => {
    const got = readBackIssue(
      { key: 'MIG-1', fields: { labels: 'x', issuelinks: [{}], attachment: [null] } },
      [null],
      {},
    );
    expect(got).toMatchObject({
      key: 'MIG-1',
      labels: [],
      links: [],
      attachments: [],
      assignee: null,
      comments: [undefined],
    });
  });
});
