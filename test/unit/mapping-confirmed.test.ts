/**
 * The project's confirmed mappings as the engine applies them: below the run's overrides for types and
 * states, the users table before Jira's search, the field plan and value shaping, and link types with their
 * direction kept.
 */
import { describe, expect, it } from 'vitest';
import {
  customFieldValue,
  customFieldWrites,
  type IssueTypeStatuses,
  mapStates,
  mapTypes,
  mergeOverrides,
  peopleByTable,
  planFieldMappings,
  planIssueLinks,
  shapeOf,
} from '../../functions/domain/mapping/index.ts';

const ISSUE_TYPES = [
  { id: '1', name: 'Epic', hierarchyLevel: 1 },
  { id: '2', name: 'Story', hierarchyLevel: 0 },
  { id: '3', name: 'Task', hierarchyLevel: 0 },
  { id: '4', name: 'Bug', hierarchyLevel: 0 },
];

describe('type and state overrides in two layers', () => {
  it("merges the confirmed table under the run's, dropping a confirmed key the run names in another case", () => {
    expect(mergeOverrides({ Bug: 'Task', Epic: 'Story' }, { bug: 'Story' })).toEqual({
      Epic: 'Story',
      bug: 'Story',
    });
  });

  it("maps a type by the confirmed table, the run's override winning whatever the case", () => {
    const out = mapTypes(
      ['Bug', 'User Story', 'Epic'],
      ISSUE_TYPES,
      { EPIC: 'Task' },
      {
        bug: 'Task',
        Epic: 'Story',
      },
    );
    expect(Object.fromEntries(Object.entries(out.map).map(([k, v]) => [k, v.name]))).toEqual({
      Bug: 'Task',
      'User Story': 'Story',
      Epic: 'Task',
    });
    expect(out.problems).toEqual([]);
    expect(out.warnings).toEqual([]);
  });

  it('says a confirmed issue type the project lacks is a problem of the confirmed mappings, and ignores entries out of scope', () => {
    const out = mapTypes(['Bug'], ISSUE_TYPES, {}, { Bug: 'Defect', Feature: 'Epic' });
    expect(out.problems).toEqual([
      `the project's confirmed mappings map "Bug" to "Defect", which is not an issue type of the Jira project (issue types: Epic, Story, Task, Bug)`,
    ]);
    expect(out.warnings).toEqual([]);
  });

  it("maps a state by the confirmed table, the run's override winning", () => {
    const statuses: IssueTypeStatuses[] = [
      {
        id: '2',
        name: 'Story',
        statuses: [
          { id: '10', name: 'To Do', statusCategory: { key: 'new' } },
          { id: '11', name: 'In Progress', statusCategory: { key: 'indeterminate' } },
          { id: '12', name: 'In Review', statusCategory: { key: 'indeterminate' } },
          { id: '13', name: 'Done', statusCategory: { key: 'done' } },
        ],
      },
    ];
    const states = {
      'User Story': [
        { name: 'New', category: 'Proposed' },
        { name: 'Active', category: 'InProgress' },
        { name: 'Closed', category: 'Completed' },
      ],
    };
    const typeMap = { 'User Story': { id: '2', name: 'Story' } };
    const out = mapStates(states, statuses, typeMap, {
      overrides: { closed: 'In Review' },
      confirmed: { Active: 'In Review', Closed: 'To Do', Resolved: 'Done', New: 'Backlog' },
    });
    expect(
      Object.fromEntries(Object.entries(out.map['User Story'] ?? {}).map(([k, v]) => [k, v.status.name])),
    ).toEqual({ New: 'To Do', Active: 'In Review', Closed: 'In Review' });
    // Backlog is not in the workflow: the default rule, with a warning naming where the mapping came from.
    expect(out.warnings).toEqual([
      `the project's confirmed mappings map "New" to "Backlog", which the workflow of Jira issue type "Story" does not have: the default rule applies`,
    ]);
  });
});

describe('people by the confirmed users table', () => {
  it('takes accounts and "no account" from the table and leaves the rest to the search', () => {
    expect(
      peopleByTable(['b@x.io', 'A@x.io', 'c@x.io', 'a@x.io'], { 'a@x.io': 'acc-a', 'B@X.IO': null }),
    ).toEqual({ users: { 'a@x.io': 'acc-a' }, unmapped: ['b@x.io'], search: ['c@x.io'] });
  });
});

const SITE_FIELDS = [
  { id: 'summary', name: 'Summary', custom: false, schema: { type: 'string', system: 'summary' } },
  { id: 'customfield_10016', name: 'Story Points', custom: true, schema: { type: 'number' } },
  { id: 'customfield_10030', name: 'Estimate', custom: true, schema: { type: 'number' } },
  {
    id: 'customfield_10050',
    name: 'Team',
    custom: true,
    schema: { type: 'string', custom: 'com.atlassian.jira.plugin.system.customfieldtypes:textfield' },
  },
  {
    id: 'customfield_10060',
    name: 'Owner',
    custom: true,
    schema: { type: 'user', custom: 'com.atlassian.jira.plugin.system.customfieldtypes:userpicker' },
  },
];

describe('the confirmed field mappings', () => {
  it('takes the Story Points field from a size field mapping and plans the writable custom fields', () => {
    const plan = planFieldMappings(
      {
        'Microsoft.VSTS.Scheduling.Effort': 'customfield_10030',
        'Custom.Team': 'customfield_10050',
        'Custom.Owner': 'customfield_10060',
        'Custom.Title': 'summary',
        'Custom.Gone': 'customfield_99999',
      },
      SITE_FIELDS,
    );
    expect(plan).toEqual({
      storyPointsFieldId: 'customfield_10030',
      custom: [{ source: 'Custom.Team', fieldId: 'customfield_10050', name: 'Team', shape: 'string' }],
      warnings: [
        'fields.Custom.Owner -> "Owner" (customfield_10060): the migration cannot write a field of type user (com.atlassian.jira.plugin.system.customfieldtypes:userpicker): Custom.Owner is not migrated',
        'fields.Custom.Title -> "Summary" (summary): a Jira system field, which the migration sets by its own rules: Custom.Title is not migrated',
        'fields.Custom.Gone -> customfield_99999: Jira has no such field: Custom.Gone is not migrated',
      ],
    });
  });

  it('leaves the Story Points field to the name rule without a size field mapping', () => {
    expect(planFieldMappings({}, SITE_FIELDS)).toEqual({ custom: [], warnings: [] });
  });

  it('reads the value shape from the field schema', () => {
    const shape = (type: string, extra: Record<string, unknown> = {}) =>
      shapeOf({ schema: { type, ...extra } });
    expect(shape('string', { custom: 'x:textarea' })).toBe('adf');
    expect(shape('string', { custom: 'x:url' })).toBe('url');
    expect(shape('string', { custom: 'x:textfield' })).toBe('string');
    expect(shape('number')).toBe('number');
    expect(shape('option')).toBe('option');
    expect(shape('array', { items: 'string', custom: 'x:labels' })).toBe('labels');
    expect(shape('array', { items: 'string', custom: 'x:multiversion' })).toBe('strings');
    expect(shape('array', { items: 'option' })).toBe('options');
    expect(shape('date')).toBe('date');
    expect(shape('datetime')).toBe('datetime');
    expect(shape('array', { items: 'user' })).toBeUndefined();
    expect(shape('user')).toBeUndefined();
  });

  it('shapes ADO values as the Jira field takes them', () => {
    expect(customFieldValue('Gold', 'string')).toEqual({ value: 'Gold' });
    expect(customFieldValue('x'.repeat(300), 'string').value).toHaveLength(255);
    expect(customFieldValue({ displayName: 'Ava Chen', uniqueName: 'ava@x.io' }, 'string')).toEqual({
      value: 'Ava Chen',
    });
    expect(customFieldValue(12.5, 'number')).toEqual({ value: 12.5 });
    expect(customFieldValue('7', 'number')).toEqual({ value: 7 });
    expect(customFieldValue('lots', 'number')).toEqual({ problem: '"lots" is not a number' });
    expect(customFieldValue(true, 'option')).toEqual({ value: { value: 'true' } });
    expect(customFieldValue('a; b ;', 'strings')).toEqual({ value: ['a', 'b'] });
    expect(customFieldValue('north wing; south', 'labels')).toEqual({ value: ['north-wing', 'south'] });
    expect(customFieldValue('a;b', 'options')).toEqual({ value: [{ value: 'a' }, { value: 'b' }] });
    expect(customFieldValue('2024-05-01T23:30:00Z', 'date')).toEqual({ value: '2024-05-01' });
    expect(customFieldValue('2024-05-01T09:30:00Z', 'datetime')).toEqual({
      value: '2024-05-01T09:30:00.000+0000',
    });
    expect(customFieldValue('soon', 'date')).toEqual({ problem: '"soon" is not a date' });
    expect(customFieldValue('not a url', 'url')).toEqual({ problem: '"not a url" is not a URL' });
    expect(customFieldValue('Line one\n\nLine two', 'adf')).toEqual({
      value: {
        type: 'doc',
        version: 1,
        content: [
          { type: 'paragraph', content: [{ type: 'text', text: 'Line one' }] },
          { type: 'paragraph', content: [{ type: 'text', text: 'Line two' }] },
        ],
      },
    });
    for (const none of [undefined, null, '', '   '])
      expect(customFieldValue(none, 'string'), String(none)).toEqual({});
  });

  it('writes a URL field only with an http(s) or mailto address, the rule links in descriptions follow', () => {
    expect(customFieldValue(' https://wiki.example/runbook?id=4 ', 'url')).toEqual({
      value: 'https://wiki.example/runbook?id=4',
    });
    expect(customFieldValue('http://intranet.example/', 'url')).toEqual({
      value: 'http://intranet.example/',
    });
    expect(customFieldValue('mailto:ops@x.example', 'url')).toEqual({ value: 'mailto:ops@x.example' });
    // What Azure DevOps takes in a URL field but a browser would run or render from Jira's link.
    for (const unsafe of [
      'javascript:alert(document.cookie)',
      ' JavaScript:alert(1)',
      'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
    ])
      expect(customFieldValue(unsafe, 'url'), unsafe).toEqual({
        problem: `"${unsafe.trim()}" is not an http(s) or mailto URL`,
      });
    const mappings = [
      { source: 'Custom.Runbook', fieldId: 'customfield_10090', name: 'Runbook', shape: 'url' as const },
    ];
    expect(customFieldWrites({ 'Custom.Runbook': 'javascript:alert(1)' }, mappings)).toEqual({
      fields: {},
      warnings: [
        'Custom.Runbook not migrated to "Runbook": "javascript:alert(1)" is not an http(s) or mailto URL',
      ],
    });
  });

  it('writes no multi-line field whose HTML is over the converter’s limits, and says so', () => {
    expect(customFieldValue(`<p>Notes</p>${'<b>'.repeat(70_000)}`, 'adf')).toEqual({
      problem: 'HTML not converted (elements nested over 100 deep)',
    });
    // Text that only looks like tags, however long, is text.
    const text = `${'<a '.repeat(150_000)}end`;
    expect(customFieldValue(text, 'adf').value).toMatchObject({ type: 'doc', version: 1 });
  });

  it("writes an item's mapped values and says which could not be", () => {
    const mappings = [
      { source: 'Custom.Team', fieldId: 'customfield_10050', name: 'Team', shape: 'string' as const },
      { source: 'Custom.Size', fieldId: 'customfield_10070', name: 'Size', shape: 'number' as const },
      { source: 'Custom.None', fieldId: 'customfield_10080', name: 'None', shape: 'string' as const },
    ];
    expect(customFieldWrites({ 'Custom.Team': 'Platform', 'Custom.Size': 'XL' }, mappings)).toEqual({
      fields: { customfield_10050: 'Platform' },
      warnings: ['Custom.Size not migrated to "Size": "XL" is not a number'],
    });
  });
});

describe('confirmed link types', () => {
  const url = (id: number) => `https://dev.azure.com/o/p/_apis/wit/workItems/${id}`;

  it("replaces the default type and keeps the relation's direction", () => {
    const items = [
      { id: 1, relations: [{ rel: 'System.LinkTypes.Dependency-Forward', url: url(2) }] },
      { id: 2, relations: [{ rel: 'System.LinkTypes.Dependency-Reverse', url: url(1) }] },
      { id: 3, relations: [{ rel: 'System.LinkTypes.Duplicate-Forward', url: url(4) }] },
    ];
    const out = planIssueLinks(items, {
      availableTypes: ['Blocks', 'Cloners', 'Duplicate', 'Relates'],
      linkTypes: {
        'system.linktypes.dependency-forward': 'Cloners',
        'System.LinkTypes.Dependency-Reverse': 'Cloners',
      },
    });
    // Predecessor 1 "clones" successor 2 as it "blocks" it by default; Duplicate stays as it was.
    expect(out).toEqual({
      links: [
        { type: 'Cloners', from: 1, to: 2 },
        { type: 'Duplicate', from: 4, to: 3 },
      ],
      warnings: [],
    });
  });

  it('keeps a Related link one link when it is mapped to a directional type', () => {
    const items = [
      { id: 7, relations: [{ rel: 'System.LinkTypes.Related', url: url(5) }] },
      { id: 5, relations: [{ rel: 'System.LinkTypes.Related', url: url(7) }] },
    ];
    expect(planIssueLinks(items, { linkTypes: { 'System.LinkTypes.Related': 'Blocks' } }).links).toEqual([
      { type: 'Blocks', from: 5, to: 7 },
    ]);
  });

  it('falls back to Relates with a warning when the confirmed type is gone from the site', () => {
    const items = [{ id: 1, relations: [{ rel: 'System.LinkTypes.Dependency-Forward', url: url(2) }] }];
    expect(
      planIssueLinks(items, {
        availableTypes: ['Blocks', 'Relates'],
        linkTypes: { 'System.LinkTypes.Dependency-Forward': 'Causes' },
      }),
    ).toEqual({
      links: [{ type: 'Relates', from: 1, to: 2 }],
      warnings: ['Jira has no "Causes" link type: those links are created as "Relates"'],
    });
  });
});
