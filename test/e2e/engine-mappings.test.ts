/**
 * The engine maps with the project's confirmed mappings, over the sandboxes: a small project (a few dozen
 * generated items plus two fixture items written to Azure DevOps here) migrated with create, links and
 * transitions, and read back through Jira's REST API (search and issue GET):
 * - confirmed mappings unlike the defaults (Bug -> Task, Active -> In Review, one person mapped to no account
 *   and one to another person's account, Dependency links as Cloners, three custom fields) are followed, and
 *   a confirmation changed mid-run does not change the run;
 * - a run's own type and state overrides beat the confirmed ones;
 * - a project without confirmed mappings migrates as before (Bug -> Bug, Active -> In Progress, people found
 *   by e-mail, Dependency links as Blocks, no custom field written).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MappingsRecord, MappingTables } from '../../functions/domain/mappings.ts';
import type { RunOptions } from '../../functions/domain/runs.ts';
import { loadPreflight } from '../../functions/engine/phases/preflight.ts';
import type { AdoWorkItem } from '../../functions/trackers/ado/client.ts';
import type { JiraIssue } from '../../functions/trackers/jira/client.ts';
import { type SandboxPerson, sandboxPeople } from '../../local/sandbox/common/people.ts';
import { CUSTOM } from '../../local/sandbox/jira/catalog.ts';
import { adoWrites } from '../support/ado-writes.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

const SEED = 21;
const ITEMS = 30;
const DEPENDENCY = 'System.LinkTypes.Dependency-Forward';
/** Only the phases these mappings touch: create, links and transitions (hierarchy has little to do here). */
const OPTIONS: Partial<RunOptions> = { migrateAttachments: false, migrateComments: false };
const READ_FIELDS = [
  'labels',
  'issuetype',
  'status',
  'assignee',
  'issuelinks',
  CUSTOM.supportLevel,
  CUSTOM.startDate,
  CUSTOM.acceptanceCriteria,
];

let h: EngineHarness;
let fixture: { bug: number; story: number };
const people = sandboxPeople(SEED);
const both = people.filter((p) => p.on === 'both');
/** Has a Jira account, which the confirmed mappings say not to use: their items stay unassigned. */
const unassigned = both[0] as SandboxPerson;
/** Mapped to `stand-in`'s account rather than their own. */
const redirected = both[1] as SandboxPerson;
const standIn = people.find((p) => p.on === 'jira') as SandboxPerson;

/** Unlike the defaults in every table. */
const CONFIRMED: MappingTables = {
  types: { Bug: 'Task' },
  states: { Active: 'In Review' },
  users: { [unassigned.email]: null, [redirected.email.toUpperCase()]: standIn.jiraAccountId },
  linkTypes: { [DEPENDENCY]: 'Cloners', 'System.LinkTypes.Dependency-Reverse': 'Cloners' },
  fields: {
    'Custom.CustomerTier': CUSTOM.supportLevel,
    'Custom.GoLiveDate': CUSTOM.startDate,
    'Custom.ReleaseNotes': CUSTOM.acceptanceCriteria,
    // The Sprint field takes no value the migration can shape: a warning, not a failure.
    'Custom.ReviewedBy': CUSTOM.sprint,
  },
};

beforeAll(async () => {
  h = await startEngineHarness({ items: ITEMS, seed: SEED });
  // The generated world may lack some of what is checked: two fixture items guarantee it.
  const src = adoWrites({ url: h.sandboxes.ado.url, ...h.config.ado });
  const bug = await src.createWorkItem(
    'Bug',
    {
      'System.Title': 'Fixture: export crashes',
      'System.State': 'Active',
      'System.AssignedTo': unassigned.email,
    },
    { bypassRules: true },
  );
  const story = await src.createWorkItem(
    'User Story',
    {
      'System.Title': 'Fixture: export to CSV',
      'System.State': 'Active',
      'System.AssignedTo': redirected.email,
      'Custom.CustomerTier': 'Gold',
      'Custom.GoLiveDate': '2024-05-01T09:30:00Z',
      'Custom.ReleaseNotes': '<p>Ships in <b>2.4</b></p>',
    },
    { bypassRules: true, relations: [{ rel: DEPENDENCY, targetId: bug.id }] },
  );
  fixture = { bug: bug.id, story: story.id };
}, 60_000);
afterAll(async () => {
  await h?.close();
});

async function confirm(projectId: string, tables: MappingTables): Promise<void> {
  const now = new Date().toISOString();
  const record: MappingsRecord = {
    projectId,
    source: 'confirmed',
    confirmedAt: now,
    updatedAt: now,
    ...tables,
  };
  await h.app.store.mappings.putConfirmed(h.tenant.tenantId, record);
}

/** A fresh Jira project, a new app project (with these confirmed mappings), and its run created. */
async function newRun(name: string, tables?: MappingTables, options: Partial<RunOptions> = {}) {
  await h.control('jira', 'POST', '/_sandbox/reset');
  const project = await h.newProject(name);
  if (tables) await confirm(project.id, tables);
  return createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL', { ...OPTIONS, ...options });
}

async function finished(runId: string) {
  const run = await h.app.store.runs.get(h.tenant.tenantId, runId);
  expect(run?.status).toBe('COMPLETED');
  return run as NonNullable<typeof run>;
}

/** Jira's issues by ADO id, read through the REST API. */
async function jiraBySource(): Promise<Map<number, JiraIssue>> {
  const issues = await h
    .deps()
    .target.search(`project = "${h.config.jira.projectKey}"`, { fields: READ_FIELDS });
  const out = new Map<number, JiraIssue>();
  for (const issue of issues) {
    const label = ((issue.fields?.labels as string[]) ?? []).find((l) => l.startsWith('src-id-'));
    if (label) out.set(Number(label.slice('src-id-'.length)), issue);
  }
  return out;
}

async function adoItems(): Promise<AdoWorkItem[]> {
  const source = h.deps().source;
  return source.workItems(await source.idsInScope(), { expand: 'relations' });
}

const nameOf = (issue: JiraIssue | undefined, field: 'issuetype' | 'status') =>
  (issue?.fields?.[field] as { name?: string } | undefined)?.name;
const assigneeOf = (issue: JiraIssue | undefined) =>
  (issue?.fields?.assignee as { accountId?: string } | null | undefined)?.accountId;
const emailOf = (value: unknown) =>
  typeof value === 'object' && value !== null
    ? String((value as { uniqueName?: string }).uniqueName ?? '').toLowerCase()
    : undefined;
const stateOf = (i: AdoWorkItem) => String(i.fields['System.State']);
const typeOf = (i: AdoWorkItem) => String(i.fields['System.WorkItemType']);

/** The issue link `type` from `from` ("from <outward phrase> to") as Jira shows it on `from`. */
function outwardLinks(issue: JiraIssue | undefined): { type: string; to: string }[] {
  const links = (issue?.fields?.issuelinks ?? []) as {
    type: { name: string };
    outwardIssue?: { key: string };
  }[];
  return links.flatMap((l) => (l.outwardIssue ? [{ type: l.type.name, to: l.outwardIssue.key }] : []));
}

describe('a run with the project’s confirmed mappings', () => {
  it('creates, links, assigns and moves the issues as the confirmed mappings say', async () => {
    // Prepare
    const run = await newRun('Confirmed', CONFIRMED);

    // Act: preflight; then the mappings are confirmed again, differently, before the rest of the run.
    await h.driveThrough(run.id, 1);
    await confirm(run.projectId, { ...CONFIRMED, types: { Bug: 'Story' }, states: { Active: 'Done' } });
    await h.drive(run.id);

    // Assess
    await finished(run.id);
    const preflight = await loadPreflight(h.deps(), run);
    expect(preflight.unmappedUsers).toContain(unassigned.email);
    expect(preflight.warnings).toContain(
      `${unassigned.email} has no Jira account: their items are left unassigned`,
    );
    expect(preflight.warnings).toContain(
      `fields.Custom.ReviewedBy -> "Sprint" (${CUSTOM.sprint}): the migration cannot write a field of type array (com.pyxis.greenhopper.jira:gh-sprint): Custom.ReviewedBy is not migrated`,
    );
    const items = await adoItems();
    const jira = await jiraBySource();
    expect(jira.size).toBe(preflight.manifest.length);
    let assigned = 0;
    for (const item of items) {
      const issue = jira.get(item.id);
      if (!issue) continue;
      const label = `#${item.id} ${typeOf(item)} ${stateOf(item)}`;
      // The mapping as preflight read it, not as confirmed again mid-run.
      if (typeOf(item) === 'Bug') expect(nameOf(issue, 'issuetype'), label).toBe('Task');
      if (stateOf(item) === 'Active') expect(nameOf(issue, 'status'), label).toBe('In Review');
      const email = emailOf(item.fields['System.AssignedTo']);
      if (email === unassigned.email) expect(assigneeOf(issue), label).toBeUndefined();
      if (email === redirected.email) {
        expect(assigneeOf(issue), label).toBe(standIn.jiraAccountId);
        assigned++;
      }
    }
    expect(assigned).toBeGreaterThan(0);

    const bug = jira.get(fixture.bug);
    const story = jira.get(fixture.story);
    expect(nameOf(bug, 'issuetype')).toBe('Task');
    expect(nameOf(story, 'status')).toBe('In Review');
    expect(assigneeOf(bug)).toBeUndefined();
    // The story is the predecessor: "story blocks bug" by default, so "story clones bug" here.
    expect(outwardLinks(story)).toContainEqual({ type: 'Cloners', to: bug?.key });
    const all = [...jira.values()].flatMap(outwardLinks);
    expect(all.filter((l) => l.type === 'Blocks')).toEqual([]);
    expect(story?.fields?.[CUSTOM.supportLevel]).toBe('Gold');
    expect(story?.fields?.[CUSTOM.startDate]).toBe('2024-05-01');
    expect(story?.fields?.[CUSTOM.acceptanceCriteria]).toEqual({
      type: 'doc',
      version: 1,
      content: [
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Ships in ' },
            { type: 'text', text: '2.4', marks: [{ type: 'strong' }] },
          ],
        },
      ],
    });
    // Every generated item with a tier carries it too.
    for (const item of items.filter((i) => typeof i.fields['Custom.CustomerTier'] === 'string')) {
      expect(jira.get(item.id)?.fields?.[CUSTOM.supportLevel], `#${item.id}`).toBe(
        item.fields['Custom.CustomerTier'],
      );
    }
  }, 120_000);

  it("lets the run's own type and state overrides win over the confirmed ones", async () => {
    // Prepare: keys in another case than the confirmed ones, as the overrides match case-insensitively.
    const run = await newRun('Overridden', CONFIRMED, {
      typeOverrides: { bug: 'Story' },
      stateOverrides: { ACTIVE: 'In Progress' },
    });

    // Act
    await h.drive(run.id);

    // Assess
    await finished(run.id);
    const jira = await jiraBySource();
    for (const item of await adoItems()) {
      const issue = jira.get(item.id);
      if (!issue) continue;
      if (typeOf(item) === 'Bug') expect(nameOf(issue, 'issuetype'), `#${item.id}`).toBe('Story');
      if (stateOf(item) === 'Active') expect(nameOf(issue, 'status'), `#${item.id}`).toBe('In Progress');
    }
    // What the run does not override still follows the confirmed mappings.
    expect(assigneeOf(jira.get(fixture.bug))).toBeUndefined();
    expect(jira.get(fixture.story)?.fields?.[CUSTOM.supportLevel]).toBe('Gold');
  }, 120_000);

  it('migrates a project without confirmed mappings as before', async () => {
    // Prepare
    const run = await newRun('Unconfirmed');

    // Act
    await h.drive(run.id);

    // Assess
    await finished(run.id);
    const preflight = await loadPreflight(h.deps(), run);
    expect(preflight.mappings).toBeUndefined();
    const jira = await jiraBySource();
    const bug = jira.get(fixture.bug);
    const story = jira.get(fixture.story);
    expect(nameOf(bug, 'issuetype')).toBe('Bug');
    expect(nameOf(story, 'status')).toBe('In Progress');
    expect(assigneeOf(bug)).toBe(unassigned.jiraAccountId);
    expect(assigneeOf(story)).toBe(redirected.jiraAccountId);
    expect(outwardLinks(story)).toContainEqual({ type: 'Blocks', to: bug?.key });
    expect(story?.fields?.[CUSTOM.supportLevel] ?? null).toBeNull();
    expect(story?.fields?.[CUSTOM.acceptanceCriteria] ?? null).toBeNull();
  }, 120_000);
});
