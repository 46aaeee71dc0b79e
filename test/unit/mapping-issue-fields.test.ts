import { describe, expect, it } from 'vitest';
import { buildIssueFields, type IssueFieldsContext, mapTypes } from '../../functions/domain/mapping/index.ts';
import { AGILE_TYPES } from '../../local/sandbox/generator/process.ts';
import { CUSTOM, ISSUE_TYPES, PRIORITIES } from '../../local/sandbox/jira/catalog.ts';

/** An IdentityRef in the shape the ADO REST API (and the sandbox) returns. */
const identity = (displayName: string, email: string, id: string) => ({
  displayName,
  url: `http://127.0.0.1:4010/contoso/_apis/Identities/${id}`,
  _links: { avatar: { href: `http://127.0.0.1:4010/contoso/_apis/GraphProfile/MemberAvatars/aad.${id}` } },
  id,
  uniqueName: email,
  imageUrl: `http://127.0.0.1:4010/contoso/_api/_common/identityImage?id=${id}`,
  descriptor: `aad.${id}`,
});
const AVA = identity('Ava Adams', 'Ava.Adams@contoso.example.com', '6f1d7c52-0b7e-4c1a-a2f4-3b8e9d0c1a2b');
const BEN = identity('Ben Brown', 'ben.brown@contoso.example.com', '0c2e4a61-5d3f-4b2a-b1c9-7e8f9a0b1c2d');

const typeMap = mapTypes(
  AGILE_TYPES.map((t) => t.name),
  ISSUE_TYPES.map((t) => ({ id: t.id, name: t.name, hierarchyLevel: t.hierarchyLevel })),
).map;
const ACCOUNTS: Record<string, string> = { 'ava.adams@contoso.example.com': '5b10ac8d82e05b22cc7d4ef5' };
const DESCRIPTION = {
  version: 1,
  type: 'doc',
  content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Pay with a saved card.' }] }],
};
const ctx: IssueFieldsContext = {
  projectKey: 'MIG',
  typeMap,
  priorityNames: PRIORITIES.map((p) => p.name),
  storyPointsFieldId: CUSTOM.storyPoints,
  users: (email) => ACCOUNTS[email],
};

/** Common fields of a work item as the batch API returns them. */
const base = (type: string, title: string) => ({
  'System.AreaPath': 'Contoso\\Web\\Frontend',
  'System.TeamProject': 'Contoso',
  'System.IterationPath': 'Contoso\\Release 9\\Sprint 52',
  'System.WorkItemType': type,
  'System.State': 'Active',
  'System.Reason': 'Implementation started',
  'System.CreatedDate': '2025-03-04T09:12:44.12Z',
  'System.ChangedDate': '2025-03-06T15:01:02Z',
  'System.CommentCount': 2,
  'System.Title': title,
});

describe('buildIssueFields', () => {
  it('builds the create fields of a user story', () => {
    const story = {
      id: 1042,
      fields: {
        ...base('User Story', 'As a shopper, I want to pay with a saved card so that checkout is faster'),
        'System.AssignedTo': AVA,
        'System.CreatedBy': AVA,
        'System.Tags': 'customer-reported; Q3 release',
        'Microsoft.VSTS.Common.Priority': 2,
        'Microsoft.VSTS.Scheduling.StoryPoints': 5,
        'Microsoft.VSTS.Common.ValueArea': 'Business',
      },
    };
    expect(
      buildIssueFields(story, {
        ...ctx,
        parentKey: 'MIG-7',
        description: DESCRIPTION,
        componentIds: [{ id: '10010' }],
        labelsExtra: ['migrated from ado'],
      }),
    ).toEqual({
      fields: {
        project: { key: 'MIG' },
        issuetype: { id: '10001' },
        summary: 'As a shopper, I want to pay with a saved card so that checkout is faster',
        description: DESCRIPTION,
        labels: ['customer-reported', 'Q3-release', 'migrated-from-ado', 'src-id-1042'],
        priority: { name: 'High' },
        assignee: { accountId: '5b10ac8d82e05b22cc7d4ef5' },
        reporter: { accountId: '5b10ac8d82e05b22cc7d4ef5' },
        parent: { key: 'MIG-7' },
        customfield_10016: 5,
        components: [{ id: '10010' }],
      },
      warnings: [],
    });
  });

  it('carries a task’s estimates as time tracking and leaves out people without a Jira account', () => {
    const task = {
      id: 1043,
      fields: {
        ...base('Task', 'Build checkout endpoint'),
        'System.AssignedTo': 'Ben Brown <ben.brown@contoso.example.com>',
        'System.CreatedBy': BEN,
        'Microsoft.VSTS.Common.Priority': 1,
        'Microsoft.VSTS.Scheduling.OriginalEstimate': 6,
        'Microsoft.VSTS.Scheduling.RemainingWork': 2.5,
        'Microsoft.VSTS.Scheduling.CompletedWork': 3.5,
      },
    };
    expect(buildIssueFields(task, ctx)).toEqual({
      fields: {
        project: { key: 'MIG' },
        issuetype: { id: '10002' },
        summary: 'Build checkout endpoint',
        labels: ['src-id-1043'],
        priority: { name: 'Highest' },
        timetracking: { originalEstimate: '6h', remainingEstimate: '2h 30m' },
      },
      warnings: [
        'assignee ben.brown@contoso.example.com has no Jira account',
        'reporter ben.brown@contoso.example.com has no Jira account',
      ],
    });
  });

  it('sends only the remaining estimate when there is no original one', () => {
    const task = { id: 9, fields: { ...base('Task', 'Tidy'), 'Microsoft.VSTS.Scheduling.RemainingWork': 0 } };
    expect(buildIssueFields(task, ctx).fields.timetracking).toEqual({ remainingEstimate: '0m' });
  });

  it('builds the smallest payload from a type and a title, with Medium priority', () => {
    expect(
      buildIssueFields({ id: 7, fields: { 'System.WorkItemType': 'Bug', 'System.Title': 'Crash' } }, ctx),
    ).toEqual({
      fields: {
        project: { key: 'MIG' },
        issuetype: { id: '10003' },
        summary: 'Crash',
        labels: ['src-id-7'],
        priority: { name: 'Medium' },
      },
      warnings: [],
    });
  });

  it('puts an epic’s effort into story points, or warns when the site has no such field', () => {
    const epic = {
      id: 1,
      fields: { ...base('Epic', 'Payments 2.0'), 'Microsoft.VSTS.Scheduling.Effort': 20 },
    };
    expect(buildIssueFields(epic, ctx).fields[CUSTOM.storyPoints]).toBe(20);
    const { storyPointsFieldId: _, ...noPoints } = ctx;
    const result = buildIssueFields(epic, noPoints);
    expect(result.fields).toEqual({
      project: { key: 'MIG' },
      issuetype: { id: '10000' },
      summary: 'Payments 2.0',
      labels: ['src-id-1'],
      priority: { name: 'Medium' },
    });
    expect(result.warnings).toEqual([
      'story points 20 not migrated: the Jira site has no Story Points field',
    ]);
  });

  it("warns about a person without an e-mail and a priority the site's scheme lacks", () => {
    const bug = {
      id: 55,
      fields: {
        ...base('Bug', 'Checkout fails on Safari'),
        'System.AssignedTo': { displayName: 'Build Service', uniqueName: 'CONTOSO\\build' },
        'Microsoft.VSTS.Common.Priority': 1,
      },
    };
    const result = buildIssueFields(bug, { ...ctx, priorityNames: ['P1', 'P2', 'P3'] });
    expect(result.fields.priority).toBeUndefined();
    expect(result.fields.assignee).toBeUndefined();
    expect(result.warnings).toEqual([
      'priority "Highest" is not in the Jira priority scheme: Jira\'s default applies',
      'assignee "Build Service" has no e-mail address to match a Jira account',
    ]);
  });

  it("uses the site's spelling of a priority name", () => {
    const bug = { id: 56, fields: { ...base('Bug', 'x'), 'Microsoft.VSTS.Common.Priority': 4 } };
    expect(
      buildIssueFields(bug, { ...ctx, priorityNames: ['HIGHEST', 'HIGH', 'MEDIUM', 'LOW'] }).fields.priority,
    ).toEqual({
      name: 'LOW',
    });
  });

  it('dedupes labels across tags and extras and keeps the source id label last', () => {
    const item = {
      id: 12,
      fields: { ...base('Task', 't'), 'System.Tags': 'security; needs-triage' },
    };
    expect(
      buildIssueFields(item, { ...ctx, labelsExtra: ['Security', 'src-id-12', ''] }).fields.labels,
    ).toEqual(['security', 'needs-triage', 'src-id-12']);
  });

  it('shortens a long title and leaves components, parent and description out when not given', () => {
    const long = `As a shopper, I want ${'a much longer explanation '.repeat(12)}`;
    const result = buildIssueFields(
      { id: 3, fields: { ...base('User Story', long) } },
      { ...ctx, componentIds: [] },
    );
    const summary = result.fields.summary as string;
    // 21 + 9 × 26 - 1 = 254 characters end exactly on a word, then the ellipsis makes 255.
    expect(summary).toBe(`As a shopper, I want ${'a much longer explanation '.repeat(9).trimEnd()}…`);
    expect(summary).toHaveLength(255);
    expect(Object.keys(result.fields)).toEqual(['project', 'issuetype', 'summary', 'labels', 'priority']);
  });

  it('refuses an item of a type mapTypes did not map', () => {
    expect(() =>
      buildIssueFields(
        { id: 4, fields: { 'System.WorkItemType': 'Shared Steps', 'System.Title': 'Log in' } },
        ctx,
      ),
    ).toThrow('work item 4 is a "Shared Steps", which has no Jira issue type');
  });
});
