/**
 * Jira JSON importer files (functions/domain/jira-import): an item shaped as Azure DevOps answers it (identity
 * objects with links and avatars, revisions as full field snapshots with the bookkeeping fields every revision
 * changes, comments from the comments API), through the run's mappings, into the importer's format; then
 * batches, links, the schema and the text.
 */
import { describe, expect, it } from 'vitest';
import {
  type BuiltIssue,
  batchesOf,
  defaultBody,
  escapeWiki,
  hoursToPeriod,
  ImportFileSchema,
  type ImportMapping,
  InvalidImportFile,
  importerDate,
  importFileProblems,
  issueOf,
  type SourceComment,
  type SourceItem,
  type SourceRevision,
  serialiseImportFile,
} from '../../functions/domain/jira-import/index.ts';
import { adoIdentity } from '../support/ado-identity.ts';
import { importItemFields } from '../support/import-items.ts';

const ORG = 'https://dev.azure.com/fabrikam';
const identity = (displayName: string, uniqueName: string, id: string) =>
  adoIdentity(ORG, displayName, uniqueName, id, '?token=not-for-the-file');
const ana = identity('Ana Silva', 'ana.silva@fabrikam.com', '6a1e0c52-1b7e-4d1c-9f0a-3c1f6b2a9e01');
const ben = identity('Ben Okafor', 'Ben.Okafor@fabrikam.com', '0f4c7a93-8d2e-4b55-a1c3-77e2d9b0c4f2');
/** No Jira account. */
const carla = identity('Carla Diaz', 'carla.diaz@fabrikam.com', '9b3d1e2f-5a6c-4d7e-8f90-a1b2c3d4e5f6');
const ANA = '5b10ac8d82e05b22cc7d4ef5';
const BEN = '712020:0f4c7a93-8d2e-4b55-a1c3-77e2d9b0c4f2';

const status = (id: string, name: string) => ({ status: { id, name } });
const mapping: ImportMapping = {
  projectKey: 'MIG',
  typeMap: {
    Bug: { id: '10004', name: 'Bug' },
    'User Story': { id: '10001', name: 'Story' },
    Epic: { id: '10000', name: 'Epic' },
    Task: { id: '10003', name: 'Subtask' },
  },
  typeLevels: { Epic: 1, Story: 0, Bug: 0, Subtask: -1 },
  states: Object.fromEntries(
    ['Bug', 'User Story', 'Epic', 'Task'].map((type) => [
      type,
      {
        New: status('10000', 'To Do'),
        Active: status('3', 'In Progress'),
        Resolved: status('10002', 'In Review'),
        Closed: status('10001', 'Done'),
        Removed: { ...status('10001', 'Done'), resolution: "Won't Do" },
      },
    ]),
  ),
  doneStatuses: { bug: ['Done'], story: ['Done'], epic: ['Done'], subtask: ['Done'] },
  doneResolution: 'Done',
  priorityNames: ['Highest', 'High', 'Medium', 'Low', 'Lowest'],
  users: { 'ana.silva@fabrikam.com': ANA, 'ben.okafor@fabrikam.com': BEN },
  storyPoints: { name: 'Story Points', typeKey: 'com.atlassian.jira.plugin.system.customfieldtypes:float' },
  customFields: [
    {
      source: 'Custom.Team',
      fieldId: 'customfield_10050',
      name: 'Team',
      shape: 'option',
      typeKey: 'com.atlassian.jira.plugin.system.customfieldtypes:select',
    },
  ],
  components: [
    { name: 'Web', areaPaths: ['Fabrikam\\Web'] },
    { name: 'Web / API', areaPaths: ['Fabrikam\\Web\\API'] },
  ],
  sprints: [
    { iterationPath: 'Fabrikam\\Sprint 4', name: 'Sprint 4', id: 12 },
    { iterationPath: 'Fabrikam\\Sprint 5', name: 'Sprint 5', id: 13 },
  ],
  sprintField: { name: 'Sprint', typeKey: 'com.pyxis.greenhopper.jira:gh-sprint' },
};

/** Revision `rev` of bug 412: bookkeeping that changes with every revision, over `fields`. */
const revision = (
  rev: number,
  date: string,
  by: unknown,
  fields: Record<string, unknown>,
): SourceRevision => ({
  id: 412,
  rev,
  url: `${ORG}/_apis/wit/workItems/412/revisions/${rev}`,
  fields: {
    'System.Id': 412,
    'System.Rev': rev,
    'System.TeamProject': 'Fabrikam',
    'System.WorkItemType': 'Bug',
    'System.CreatedDate': '2024-03-04T09:15:02.37Z',
    'System.CreatedBy': ana,
    'System.ChangedDate': date,
    'System.ChangedBy': by,
    'System.AuthorizedDate': date,
    'System.RevisedDate': '9999-01-01T00:00:00Z',
    'System.Watermark': 1000 + rev,
    'System.PersonId': 33_221_870 + rev,
    ...fields,
  },
});

const created = {
  'System.Title': 'Login fails',
  'System.State': 'New',
  'System.AreaPath': 'Fabrikam\\Web',
  'System.IterationPath': 'Fabrikam\\Sprint 4',
  'Microsoft.VSTS.Common.Priority': 2,
  'Microsoft.VSTS.Scheduling.StoryPoints': 3,
  'System.Tags': 'auth; needs triage',
  'Custom.Team': 'Identity',
  'System.Description': '<div>Users on <b>Safari</b> see *nothing* after [Sign in].</div>',
};
const active = { ...created, 'System.State': 'Active', 'System.AssignedTo': carla };
const resolved = {
  ...active,
  'System.State': 'Resolved',
  'System.AssignedTo': ben,
  'System.Title': 'Login fails on Safari',
  'Microsoft.VSTS.Common.ResolvedDate': '2024-03-06T08:00:00Z',
};
const { 'System.AssignedTo': _unassigned, ...closedBase } = resolved;
const closed = {
  ...closedBase,
  'System.State': 'Closed',
  'Microsoft.VSTS.Common.Priority': 1,
  'System.AreaPath': 'Fabrikam\\Web\\API',
  'System.IterationPath': 'Fabrikam\\Sprint 5',
  'Microsoft.VSTS.Scheduling.StoryPoints': 5,
  'Microsoft.VSTS.Scheduling.OriginalEstimate': 6,
  'Microsoft.VSTS.Scheduling.RemainingWork': 0.5,
  'Microsoft.VSTS.Common.ClosedDate': '2024-03-08T16:30:00Z',
};

const revisions: SourceRevision[] = [
  revision(1, '2024-03-04T09:15:02.37Z', ana, created),
  revision(2, '2024-03-05T14:07:09.123Z', ben, active),
  revision(3, '2024-03-06T08:00:00Z', carla, resolved),
  // A comment only (System.History) and bookkeeping: nothing Jira tracks.
  revision(4, '2024-03-07T10:00:00Z', ana, { ...resolved, 'System.History': '<p>Looks fixed</p>' }),
  revision(5, '2024-03-08T16:30:00Z', ben, closed),
];
const item: SourceItem = {
  ...revisions[4]!,
  relations: [
    {
      rel: 'AttachedFile',
      url: `${ORG}/_apis/wit/attachments/0b1c2d3e?fileName=trace.log`,
      attributes: { name: 'trace.log' },
    },
  ],
};
const comments: SourceComment[] = [
  {
    id: 902,
    text: '<p>Fixed in build 2024.3</p>',
    createdBy: carla,
    createdDate: '2024-03-06T07:59:00Z',
  },
  {
    id: 901,
    text: '<p>Repro on <b>Safari</b> 17: see <a href="https://example.com/r?id=1">the report</a></p>',
    createdBy: ana,
    createdDate: '2024-03-05T10:00:00.5Z',
  },
];

const built = () => issueOf(item, revisions, comments, mapping, { labels: ['wave 1'] });

describe('issueOf: one work item as one importer issue', () => {
  it('maps the fields as the REST mode does, with the original dates and people', () => {
    const { issue } = built();
    expect(issue).toMatchObject({
      externalId: '412',
      issueType: 'Bug',
      summary: 'Login fails on Safari',
      status: 'Done',
      resolution: 'Done',
      priority: 'Highest',
      reporter: ANA,
      created: '2024-03-04T09:15:02.370+0000',
      updated: '2024-03-08T16:30:00.000+0000',
      // ClosedDate, not ResolvedDate: the item ended closed.
      resolutionDate: '2024-03-08T16:30:00.000+0000',
      labels: ['auth', 'needs-triage', 'wave-1', 'src-id-412'],
      components: ['Web / API'],
      originalEstimate: 'PT6H',
      estimate: 'PT30M',
      customFieldValues: [
        {
          fieldName: 'Story Points',
          fieldType: 'com.atlassian.jira.plugin.system.customfieldtypes:float',
          value: '5',
        },
        {
          fieldName: 'Team',
          fieldType: 'com.atlassian.jira.plugin.system.customfieldtypes:select',
          value: 'Identity',
        },
      ],
    });
    expect(issue).not.toHaveProperty('assignee');
  });

  it('writes every date in the importer form', () => {
    const { issue } = built();
    const dates = [
      issue.created,
      issue.updated,
      issue.resolutionDate,
      ...(issue.comments ?? []).map((c) => c.created),
      ...(issue.history ?? []).map((h) => h.created),
    ];
    expect(dates.length).toBeGreaterThan(5);
    for (const d of dates) expect(d).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/);
    expect(importerDate('2024-03-05T14:07:09.123+02:00')).toBe('2024-03-05T12:07:09.123+0000');
    expect(importerDate('not a date')).toBeUndefined();
    expect([0, 0.25, 1.5, 3, '2'].map(hoursToPeriod)).toEqual(['PT0M', 'PT15M', 'PT1H30M', 'PT3H', 'PT2H']);
  });

  it('turns each revision after the first into history: its author, date and the mapped fields it changed', () => {
    const { issue } = built();
    const item = (
      field: string,
      from: string | null,
      fromString: string | null,
      to: string | null,
      toText: string | null,
      fieldType = 'jira',
    ) => ({ fieldType, field, from, fromString, to, toString: toText });
    expect(issue.history).toEqual([
      {
        author: BEN,
        created: '2024-03-05T14:07:09.123+0000',
        items: [
          item('status', '10000', 'To Do', '3', 'In Progress'),
          // Assigned to a person without a Jira account: her name, no account.
          item('assignee', null, null, null, 'Carla Diaz'),
        ],
      },
      {
        // Carla has no account: the change is hers, the author is left out.
        created: '2024-03-06T08:00:00.000+0000',
        items: [
          item('summary', null, 'Login fails', null, 'Login fails on Safari'),
          item('status', '3', 'In Progress', '10002', 'In Review'),
          item('assignee', null, 'Carla Diaz', BEN, 'Ben Okafor'),
        ],
      },
      // Revision 4 changed a comment and bookkeeping only: no entry.
      {
        author: BEN,
        created: '2024-03-08T16:30:00.000+0000',
        items: [
          item('status', '10002', 'In Review', '10001', 'Done'),
          item('resolution', null, null, null, 'Done'),
          item('priority', null, 'High', null, 'Highest'),
          // Unassigned.
          item('assignee', BEN, 'Ben Okafor', null, null),
          item('Component', null, 'Web', null, 'Web / API'),
          item('timeoriginalestimate', null, null, '21600', '21600'),
          item('timeestimate', null, null, '1800', '1800'),
          item('Sprint', '12', 'Sprint 4', '13', 'Sprint 5', 'custom'),
          item('Story Points', null, '3', null, '5', 'custom'),
        ],
      },
    ]);
  });

  it('keeps each comment with its author and date, oldest first; one without an account says who wrote it', () => {
    const { issue } = built();
    expect(issue.comments).toEqual([
      {
        body: 'Repro on {*}Safari{*} 17: see [the report|https://example.com/r?id=1]',
        author: ANA,
        created: '2024-03-05T10:00:00.500+0000',
      },
      {
        body: '_Originally posted by Carla Diaz \\(Azure DevOps comment 902\\)_\n\nFixed in build 2024.3',
        created: '2024-03-06T07:59:00.000+0000',
      },
    ]);
  });

  it('carries a comment over Jira’s limit whole, as the REST mode does: cut, and attached by its author on its date', () => {
    // 1,000 paragraphs of 40 characters and more, then a last line: about 45,000 characters of wiki markup.
    const paragraphs = Array.from(
      { length: 1000 },
      (_, i) => `<p>Line ${i} of the pasted log, HTTP 500.</p>`,
    );
    const long: SourceComment = {
      id: 903,
      text: `${paragraphs.join('')}<p>THE LAST LINE</p>`,
      createdBy: ana,
      createdDate: '2024-03-07T11:00:00Z',
    };
    const offered: number[] = [];
    const whole = issueOf(item, revisions, [...comments, long], mapping, {
      fullComment: (c) => {
        offered.push(c.id);
        return true;
      },
    });
    // Only the comment over the limit is offered whole; the others go as they are.
    expect(offered).toEqual([903]);
    const cut = whole.issue.comments?.at(-1);
    expect(cut).toMatchObject({ author: ANA, created: '2024-03-07T11:00:00.000+0000' });
    expect(cut?.body.length).toBeLessThanOrEqual(32_767);
    expect(cut?.body).toMatch(/^Line 0 of the pasted log/);
    expect(cut?.body).not.toContain('THE LAST LINE');
    expect(
      cut?.body.endsWith(
        '\n\n_Jira takes at most 32,767 characters in a comment: this one was cut here. The full comment is attached as comment\\-903.html._',
      ),
    ).toBe(true);
    // The whole text: an attachment of the issue, by the comment's author, on the comment's date, from the run's copy.
    expect(whole.issue.attachments?.at(-1)).toEqual({
      name: 'comment-903.html',
      attacher: ANA,
      created: '2024-03-07T11:00:00.000+0000',
      uri: 'tms-copy:comment-903',
    });
    expect(whole.fullComments).toEqual([903]);
    expect(whole.warnings).toContain(
      'comment 903 is over 32,767 characters: cut, the full text attached as comment-903.html',
    );
    expect(() =>
      serialiseImportFile(batchesOf([whole], { projectKey: 'MIG' }).batches[0]!.file),
    ).not.toThrow();

    // A caller that cannot store the copy (a dry run, attachments off): cut with a note, nothing attached.
    const cutOnly = issueOf(item, revisions, [...comments, long], mapping, { fullComment: () => false });
    expect(
      cutOnly.issue.comments?.at(-1)?.body.endsWith('_\\(cut here: Jira takes at most 32,767 characters\\)_'),
    ).toBe(true);
    expect(cutOnly.issue.attachments).toBeUndefined();
    expect(cutOnly.fullComments).toBeUndefined();
    expect(cutOnly.warnings).toContain('comment 903 is over 32,767 characters: cut');
  });

  it('cuts an over-long comment at a block boundary, as the REST mode does: never inside a code block or a table', () => {
    const paragraphs = Array.from({ length: 200 }, (_, i) => `<p>Line ${i} of the report, HTTP 500.</p>`);
    const code = `<pre>${Array.from({ length: 500 }, (_, i) => `at frame ${i} ${'x'.repeat(70)}`).join('\n')}</pre>`;
    const rows = Array.from(
      { length: 600 },
      (_, i) => `<tr><td>row ${i}</td><td>${'y'.repeat(50)}</td></tr>`,
    );
    const table = `<table><tbody>${rows.join('')}</tbody></table>`;
    const note = '_\\(cut here: Jira takes at most 32,767 characters\\)_';
    const bodyOf = (text: string, id: number) =>
      issueOf(item, revisions, [{ id, text, createdBy: ana, createdDate: '2024-03-07T11:00:00Z' }], mapping, {
        fullComment: () => false,
      }).issue.comments?.[0]?.body ?? '';
    const lines = (body: string) => body.split('\n');

    // A code block across the limit: the cut falls before it, not inside it.
    const beforeCode = bodyOf(`${paragraphs.join('')}${code}<p>AFTER</p>`, 904);
    expect(beforeCode.length).toBeLessThanOrEqual(32_767);
    expect(beforeCode).toMatch(/^Line 0 of the report/);
    expect(beforeCode.endsWith(`Line 199 of the report, HTTP 500.\n\n${note}`)).toBe(true);
    expect(beforeCode).not.toContain('{noformat}');

    // A table across the limit: no row cut in half (every row ends its last cell).
    const beforeTable = bodyOf(`${paragraphs.slice(0, 10).join('')}${table}<p>AFTER</p>`, 905);
    expect(beforeTable.length).toBeLessThanOrEqual(32_767);
    expect(beforeTable.endsWith(`\n\n${note}`)).toBe(true);
    for (const line of lines(beforeTable).filter((l) => l.startsWith('|')))
      expect(line.endsWith('|'), line).toBe(true);

    // A code block alone over the limit: cut between two of its lines and closed, so the note is not code.
    const inCode = bodyOf(code, 906);
    expect(inCode.length).toBeLessThanOrEqual(32_767);
    expect(lines(inCode)[0]).toBe('{noformat}');
    expect(lines(inCode).filter((l) => l === '{noformat}')).toHaveLength(2);
    expect(inCode.endsWith(`\n{noformat}\n\n${note}`)).toBe(true);
    expect(
      lines(inCode)
        .slice(1, -3)
        .every((l) => /^at frame \d+ x{70}$/.test(l)),
    ).toBe(true);
  });

  it('reports the people without a Jira account, names them in the text, and lists the accounts it names', () => {
    const reporterless = issueOf(
      { ...item, fields: { ...item.fields, 'System.CreatedBy': carla, 'System.AssignedTo': carla } },
      [],
      [],
      mapping,
    );
    expect(reporterless.issue).not.toHaveProperty('reporter');
    expect(reporterless.issue).not.toHaveProperty('assignee');
    expect(reporterless.issue.description?.split('\n\n').slice(-2)).toEqual([
      '_Created in Azure DevOps by Carla Diaz_',
      '_Assigned in Azure DevOps to Carla Diaz_',
    ]);
    expect(reporterless.unmappedPeople).toEqual(['carla.diaz@fabrikam.com']);
    const full = built();
    expect(full.unmappedPeople).toEqual(['carla.diaz@fabrikam.com']);
    expect(full.accountIds).toEqual([BEN, ANA].sort());
  });

  it('writes the description as wiki markup that shows the text as written, with its formatting', () => {
    expect(built().issue.description).toBe('Users on {*}Safari{*} see \\*nothing\\* after \\[Sign in\\].');
    const text = defaultBody({
      kind: 'description',
      item: {
        id: 1,
        fields: {
          'System.Description':
            '<h1>Steps</h1><ul><li>Open <i>app</i></li><li>Sign in<ul><li>as admin</li></ul></li></ul>',
          'Microsoft.VSTS.Common.AcceptanceCriteria': '<ol><li>No error</li></ol><pre>x = {a}</pre>',
        },
      },
    });
    // Two blank lines after a list: Jira's parser would make the next paragraph's first line one of its own.
    expect(text).toBe(
      [
        'h1. Steps\n\n* Open {_}app{_}\n* Sign in\n** as admin',
        'h2. Acceptance criteria\n\n# No error',
        '{noformat}\nx = {a}\n{noformat}',
      ].join('\n\n\n'),
    );
    expect(escapeWiki('a-b_c|d!e#f{g}h\\i')).toBe('a\\-b\\_c\\|d\\!e\\#f\\{g\\}h\\i');
    // Jira's parser reads no HTML entity; `\\` is a forced line break (one backslash kept); `:D` and `(y)` are
    // emoticons unless broken up.
    expect(escapeWiki('\\\\srv &amp; R&D :D (y)')).toBe('\\srv &amp; R&D :\u200bD \\(y\\)');
  });

  it('gives a removed item the mapping resolution and the date its state was entered', () => {
    const removed = issueOf(
      {
        id: 77,
        fields: {
          ...created,
          'System.WorkItemType': 'Bug',
          'System.State': 'Removed',
          'System.CreatedDate': '2024-01-02T03:04:05Z',
          'System.ChangedDate': '2024-02-01T00:00:00Z',
          'Microsoft.VSTS.Common.StateChangeDate': '2024-01-20T12:00:00Z',
        },
      },
      [],
      [],
      mapping,
    ).issue;
    expect(removed).toMatchObject({
      status: 'Done',
      resolution: "Won't Do",
      resolutionDate: '2024-01-20T12:00:00.000+0000',
    });
    const open = issueOf(
      { id: 78, fields: { ...created, 'System.WorkItemType': 'Bug' } },
      [],
      [],
      mapping,
    ).issue;
    expect(open).toMatchObject({ status: 'To Do' });
    expect(open).not.toHaveProperty('resolution');
    expect(open).not.toHaveProperty('resolutionDate');
  });

  it('is deterministic: the same item gives the same issue, whatever order its revisions and comments come in', () => {
    const again = issueOf(item, [...revisions].reverse(), [...comments].reverse(), mapping, {
      labels: ['wave 1'],
    });
    expect(JSON.stringify(again)).toBe(JSON.stringify(built()));
  });
});

/** A small item for batching: type, parent, relations. */
const small = (id: number, type: string, opts: { parent?: number; relations?: [string, number][] } = {}) =>
  issueOf(
    {
      id,
      url: `${ORG}/_apis/wit/workItems/${id}`,
      fields: {
        ...importItemFields(id, type, id % 2 ? ana : ben),
        'Microsoft.VSTS.Common.Priority': 2,
        ...(opts.parent ? { 'System.Parent': opts.parent } : {}),
      },
      relations: (opts.relations ?? []).map(([rel, other]) => ({
        rel,
        url: `${ORG}/_apis/wit/workItems/${other}`,
      })),
    },
    [],
    [],
    mapping,
  );

describe('batchesOf: files of N issues, with the links each can hold', () => {
  const issues: BuiltIssue[] = [
    small(10, 'User Story', { relations: [['System.LinkTypes.Dependency-Forward', 14]] }),
    small(11, 'Task', { parent: 10 }),
    small(12, 'User Story', { relations: [['System.LinkTypes.Related', 13]] }),
    small(13, 'User Story', { parent: 14, relations: [['System.LinkTypes.Related', 12]] }),
    small(14, 'Epic', { relations: [['System.LinkTypes.Dependency-Reverse', 10]] }),
    small(15, 'Task', { parent: 99 }),
  ];
  const plan = () => batchesOf(issues, { projectKey: 'MIG', size: 2, batchLabel: (n) => `tms-run-7-b${n}` });

  it('splits at N, keeps a sub-task with its parent and labels each issue with its batch', () => {
    const { batches, leftOut } = plan();
    expect(batches.map((b) => [b.number, b.label, b.sourceIds])).toEqual([
      [1, 'tms-run-7-b1', [10, 11]],
      [2, 'tms-run-7-b2', [12, 13]],
      [3, 'tms-run-7-b3', [14]],
    ]);
    for (const b of batches)
      for (const i of b.file.projects[0]!.issues)
        expect(i.labels).toEqual([`src-id-${i.externalId}`, b.label]);
    expect(leftOut).toEqual([
      {
        sourceId: 15,
        reason: 'its parent #99 is not in the import: the importer creates no sub-task without one',
      },
    ]);
  });

  it('puts links inside a batch in its file and returns the others for the REST phases', () => {
    const { batches, links, parents } = plan();
    expect(batches.map((b) => b.file.links)).toEqual([
      [{ name: 'sub-task-link', sourceId: '11', destinationId: '10' }],
      [{ name: 'Relates', sourceId: '12', destinationId: '13' }],
      [],
    ]);
    // Named on both ends in ADO, returned once.
    expect(links).toEqual([{ type: 'Blocks', from: 10, to: 14 }]);
    // An epic's child: no importer field holds it, the REST hierarchy phase sets it.
    expect(parents).toEqual([{ child: 13, parent: 14 }]);
  });

  it("lists each file's people and nobody else's", () => {
    const { batches } = plan();
    expect(batches.map((b) => b.file.users)).toEqual([
      [{ name: ANA }, { name: BEN }],
      [{ name: ANA }, { name: BEN }],
      [{ name: BEN }],
    ]);
  });

  it('makes a file of a parent whose sub-tasks are more than N, and says so', () => {
    const big = batchesOf(
      [
        small(20, 'Bug'),
        small(21, 'Task', { parent: 20 }),
        small(22, 'Task', { parent: 20 }),
        small(23, 'Bug'),
      ],
      {
        projectKey: 'MIG',
        size: 2,
      },
    );
    expect(big.batches.map((b) => [b.label, b.sourceIds])).toEqual([
      ['import-batch-1', [20, 21, 22]],
      ['import-batch-2', [23]],
    ]);
    expect(big.warnings).toEqual(['#20 and its 2 sub-tasks are more than 2 issues: one file of 3']);
  });

  it('defaults to 1,500 issues a file', () => {
    const many = Array.from({ length: 1501 }, (_, i) => ({
      ...issues[2]!,
      sourceId: 1000 + i,
      relations: [],
    }));
    expect(batchesOf(many, { projectKey: 'MIG' }).batches.map((b) => b.sourceIds.length)).toEqual([1500, 1]);
  });
});

describe('the file: valid, reproducible, nothing secret', () => {
  const files = () => {
    const { batches } = batchesOf([built(), ...[10, 11, 12].map((id) => small(id, 'User Story'))], {
      projectKey: 'MIG',
      size: 3,
    });
    return batches.map((b) => serialiseImportFile(b.file));
  };

  it('validates every built file against the schema of Atlassian’s format', () => {
    const texts = files();
    expect(texts).toHaveLength(2);
    for (const text of texts) expect(ImportFileSchema.safeParse(JSON.parse(text)).success).toBe(true);
  });

  it('refuses what Jira would refuse: a date in another form, a link to an issue not in the file, a blank author', () => {
    const file = JSON.parse(files()[0]!);
    file.projects[0].issues[0].created = '2024-03-04T09:15:02Z';
    file.links.push({ name: 'Blocks', sourceId: '412', destinationId: '999' });
    file.projects[0].issues[0].comments[0].author = ' ';
    expect(importFileProblems(file)).toEqual([
      'projects.0.issues.0.created: not a date of the form 2012-08-31T17:59:02.161+0100',
      'projects.0.issues.0.comments.0.author: Too small: expected string to have >=1 characters',
      '(file): link "Blocks" names 999, which is not in the file',
    ]);
    expect(() => serialiseImportFile(file)).toThrow(InvalidImportFile);
    const attached = (uri: string) => ({
      ...JSON.parse(files()[1]!),
      projects: [
        {
          key: 'MIG',
          issues: [
            {
              externalId: '1',
              summary: 'S',
              issueType: 'Bug',
              attachments: [{ name: 'a.log', created: '2024-03-04T09:15:02.370+0000', uri }],
            },
          ],
        },
      ],
    });
    // Only a link the caller issued (https); never a tracker URL given by the builders.
    expect(importFileProblems(attached('https://files.example.com/a.log?X-Amz-Expires=3600'))).toEqual([]);
    expect(importFileProblems(attached('http://files.example.com/a.log'))).toHaveLength(1);
  });

  it('writes the same text for the same items', () => {
    expect(files()).toEqual(files());
    expect(files()[0]!.endsWith('}\n')).toBe(true);
  });

  it('carries no tracker URL, token, credential or e-mail address', () => {
    for (const text of files()) {
      expect(text).not.toMatch(
        /dev\.azure\.com|visualstudio\.com|_apis|token|authorization|bearer|password/i,
      );
      expect(text).not.toMatch(/[\w.+-]+@[\w-]+\.[\w.]+/);
    }
  });
});
