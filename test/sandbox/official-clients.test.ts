/**
 * Both sandboxes driven by the trackers' official client libraries as shipped (devDependencies): Microsoft's
 * azure-devops-node-api and jira.js, through the calls an integrator writes. Each call's result is asserted,
 * not only that it did not throw. One sandbox of each kind for the whole file, on small generated data.
 */
import { Readable } from 'node:stream';
import * as azdev from 'azure-devops-node-api';
import {
  CommentExpandOptions,
  CommentSortOrder,
  TreeStructureGroup,
  WorkItemErrorPolicy,
  WorkItemExpand,
} from 'azure-devops-node-api/interfaces/WorkItemTrackingInterfaces.js';
import type { WorkItemTrackingApi } from 'azure-devops-node-api/WorkItemTrackingApi.js';
import { createAgileClient, createCloudClient } from 'jira.js';
import { createClient } from 'jira.js/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import { buildJiraSandbox } from '../../local/sandbox/jira/index.ts';

const PROJECT = 'Contoso';

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

describe('azure-devops-node-api against the Azure DevOps sandbox', () => {
  let ado: AdoTestSandbox;
  let conn: azdev.WebApi;
  let wit: WorkItemTrackingApi;

  beforeAll(async () => {
    ado = await startAdoSandbox({ items: 120, seed: 20 });
    conn = new azdev.WebApi(
      `${ado.url}/${ado.config.ado.org}`,
      azdev.getPersonalAccessTokenHandler(ado.config.ado.pat),
    );
  });
  afterAll(() => ado.close());

  it('connects and discovers the wit area', async () => {
    const data = await conn.connect();
    expect(data.authenticatedUser?.providerDisplayName).toBeTruthy();
    expect(data.locationServiceData?.accessMappings?.[0]?.accessPoint).toBe(
      `${ado.url}/${ado.config.ado.org}/`,
    );
    const core = await conn.getLocationsApi();
    const areas = await core.getResourceAreas();
    expect(areas.map((a) => a.name)).toContain('wit');
    wit = await conn.getWorkItemTrackingApi();
    expect(wit).toBeDefined();
  });

  it('runs WIQL and reads a batch with relations (numeric $expand and errorPolicy)', async () => {
    const result = await wit.queryByWiql(
      {
        query: 'SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project ORDER BY [System.Id]',
      },
      { project: PROJECT },
    );
    const ids = (result.workItems ?? []).map((w) => w.id as number);
    expect(ids.length).toBe(ado.state.world.workItems.length);
    const batch = await wit.getWorkItemsBatch(
      {
        ids: [...ids.slice(0, 20), 999_999],
        $expand: WorkItemExpand.Relations,
        errorPolicy: WorkItemErrorPolicy.Omit,
      },
      PROJECT,
    );
    expect(batch).toHaveLength(21);
    expect(batch[20]).toBeNull();
    expect(batch[0]?.id).toBe(ids[0]);
    expect(batch.some((w) => (w?.relations ?? []).length > 0)).toBe(true);
    const one = await wit.getWorkItem(ids[1] as number, undefined, undefined, WorkItemExpand.All, PROJECT);
    expect(one.id).toBe(ids[1]);
    expect(one.fields?.['System.Title']).toBeTruthy();
    expect(one._links).toBeDefined();
  });

  it('reads by ids with the query form of the enums, and through a team', async () => {
    const items = await wit.getWorkItems(
      [1, 2, 999_999],
      undefined,
      undefined,
      WorkItemExpand.Links,
      WorkItemErrorPolicy.Omit,
      PROJECT,
    );
    expect(items.map((w) => w?.id ?? null)).toEqual([1, 2, null]);
    expect(items[0]?._links).toBeDefined();
    const byTeam = await wit.queryByWiql(
      { query: "SELECT [System.Id] FROM WorkItems WHERE [System.WorkItemType] = 'Bug'" },
      { project: PROJECT, team: ado.state.teamName },
    );
    const bugs = ado.state.world.workItems.filter((i) => i.type === 'Bug').map((i) => i.id);
    expect((byTeam.workItems ?? []).map((w) => w.id).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(bugs);
  });

  it('reads revisions and updates', async () => {
    const item = ado.state.world.workItems.find((i) => i.rev >= 3)!;
    const revisions = await wit.getRevisions(item.id, undefined, undefined, WorkItemExpand.Fields, PROJECT);
    expect(revisions.map((r) => r.rev)).toEqual(Array.from({ length: item.rev }, (_, i) => i + 1));
    const updates = await wit.getUpdates(item.id, undefined, undefined, PROJECT);
    expect(updates.map((u) => u.rev)).toEqual(Array.from({ length: item.rev }, (_, i) => i + 1));
    expect(updates[0]?.fields?.['System.Title']?.newValue).toBe(revisions[0]?.fields?.['System.Title']);
    expect(updates[1]?.workItemId).toBe(item.id);
    const second = await wit.getRevision(item.id, 2, WorkItemExpand.None, PROJECT);
    expect(second.rev).toBe(2);
    const update = await wit.getUpdate(item.id, 2, PROJECT);
    expect(update.rev).toBe(2);
    expect(update.fields?.['System.Rev']).toEqual({ oldValue: 1, newValue: 2 });
  });

  it('pages comments with rendered text (numeric order and $expand)', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentCount >= 5)!;
    const first = await wit.getComments(
      PROJECT,
      item.id,
      2,
      undefined,
      false,
      CommentExpandOptions.RenderedText,
      CommentSortOrder.Asc,
    );
    expect(first.comments).toHaveLength(2);
    expect(first.continuationToken).toBeTruthy();
    expect(first.comments?.[0]?.renderedText).toBeTruthy();
    const second = await wit.getComments(
      PROJECT,
      item.id,
      2,
      first.continuationToken,
      false,
      CommentExpandOptions.RenderedText,
      CommentSortOrder.Asc,
    );
    expect(second.comments?.[0]?.id).toBeGreaterThan(first.comments?.[1]?.id as number);
    const added = await wit.addComment({ text: '<div>From the official client</div>' }, PROJECT, item.id);
    expect(added.text).toContain('From the official client');
  });

  it('reads classification nodes, types and states', async () => {
    const roots = await wit.getRootNodes(PROJECT, 2);
    expect(roots.map((n) => n.structureType)).toHaveLength(2);
    const iterations = await wit.getClassificationNode(PROJECT, TreeStructureGroup.Iterations, undefined, 3);
    expect(iterations.name).toBe(PROJECT);
    expect(iterations.children?.length).toBeGreaterThan(0);
    const types = await wit.getWorkItemTypes(PROJECT);
    expect(types.map((t) => t.name)).toContain('User Story');
    const states = await wit.getWorkItemTypeStates(PROJECT, 'User Story');
    expect(states.map((s) => s.name)).toContain('Active');
    const fields = await wit.getFields(PROJECT);
    expect(fields.some((f) => f.referenceName === 'System.Title')).toBe(true);
    const title = await wit.getField('System.Title', PROJECT);
    expect(title.name).toBe('Title');
    const story = await wit.getWorkItemType(PROJECT, 'User Story');
    expect(story.name).toBe('User Story');
    const relationTypes = await wit.getRelationTypes();
    expect(relationTypes.map((r) => r.referenceName)).toContain('System.LinkTypes.Hierarchy-Forward');
  });

  it('uploads and downloads an attachment', async () => {
    const bytes = Buffer.from('attachment bytes from the official client');
    const ref = await wit.createAttachment(null, Readable.from([bytes]), 'client.txt', undefined, PROJECT);
    expect(ref.id).toBeTruthy();
    expect(ref.url).toContain(ref.id as string);
    const back = await readAll(await wit.getAttachmentContent(ref.id as string, 'client.txt', PROJECT, true));
    expect(back.equals(bytes)).toBe(true);
  });

  it('answers what it does not emulate with the marker, through the client', async () => {
    const error = await wit.getTags(PROJECT).catch((e: unknown) => e);
    expect(error).toMatchObject({ statusCode: 501 });
    expect(String((error as Error).message)).toContain('not emulated by the sandbox: GET ');
    // Areas a real organisation has and the sandbox does not serve: the client gets its API object, and its
    // first call meets the marker (not "Could not find information for resource area").
    const work = await conn.getWorkApi();
    const workError = await work.getTeamSettings({ project: PROJECT }).catch((e: unknown) => e);
    expect(String((workError as Error).message)).toContain('not emulated by the sandbox: OPTIONS');
    const plans = await conn.getTestPlanApi();
    const plansError = await plans.getTestPlans(PROJECT).catch((e: unknown) => e);
    expect(String((plansError as Error).message)).toContain('not emulated by the sandbox: OPTIONS');
  });

  it('updates with JSON Patch and creates a work item', async () => {
    const target = ado.state.world.workItems[4]!;
    const before = ado.state.world.workItems.length;
    const updated = await wit.updateWorkItem(
      null,
      [{ op: 'add', path: '/fields/System.Title', value: 'Retitled by the official client' }],
      target.id,
      PROJECT,
      undefined,
      undefined,
      undefined,
      WorkItemExpand.Relations,
    );
    expect(updated.fields?.['System.Title']).toBe('Retitled by the official client');
    expect(updated.rev).toBe(target.rev + 1);
    const created = await wit.createWorkItem(
      null,
      [{ op: 'add', path: '/fields/System.Title', value: 'Created by the official client' }],
      PROJECT,
      'Task',
    );
    expect(created.id).toBe(before + 1);
    expect(created.fields?.['System.WorkItemType']).toBe('Task');
  });
});

const doc = (text: string) => ({
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text }] }],
});

describe('jira.js against the Jira sandbox', () => {
  const config = sandboxConfigFromEnv({});
  const KEY = config.jira.projectKey;
  let close: () => Promise<void>;
  /** jira.js checks every answer against its schemas; a mismatch is a fidelity gap, collected here. */
  const mismatches: string[] = [];
  let jira: ReturnType<typeof createCloudClient>;
  let agile: ReturnType<typeof createAgileClient>;
  let keys: string[] = [];
  let ids: number[] = [];

  beforeAll(async () => {
    const built = await buildJiraSandbox(config);
    await built.app.listen({ port: 0, host: '127.0.0.1' });
    close = () => built.app.close();
    const client = createClient({
      host: `http://127.0.0.1:${(built.app.server.address() as { port: number }).port}`,
      auth: { type: 'basic', email: config.jira.email, apiToken: config.jira.apiToken },
      onSchemaMismatch: (report) =>
        mismatches.push(`${report.endpoint}: ${JSON.stringify(report.issues).slice(0, 400)}`),
    });
    jira = createCloudClient(client);
    agile = createAgileClient(client);
  });
  afterAll(async () => close());

  it('reads the project and its create metadata', async () => {
    const project = await jira.projects.getProject({ projectIdOrKey: KEY });
    expect(project.key).toBe(KEY);
    const types = await jira.issues.getCreateIssueMetaIssueTypes({ projectIdOrKey: KEY });
    const names = (types.issueTypes ?? []).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['Epic', 'Story', 'Task', 'Bug']));
    const story = types.issueTypes?.find((t) => t.name === 'Story');
    const fields = await jira.issues.getCreateIssueMetaIssueTypeId({
      projectIdOrKey: KEY,
      issueTypeId: story!.id!,
    });
    const fieldIds = (fields.fields ?? []).map((f) => f.fieldId);
    expect(fieldIds).toEqual(expect.arrayContaining(['summary', 'issuetype', 'project']));
    expect(fields.fields?.find((f) => f.fieldId === 'summary')?.required).toBe(true);
  });

  it('bulk-creates issues with ADF and pages an enhanced search with reconcile', async () => {
    const created = await jira.issues.createIssues({
      issueUpdates: Array.from({ length: 7 }, (_, i) => ({
        fields: {
          project: { key: KEY },
          issuetype: { name: 'Task' },
          summary: `Official client ${i + 1}`,
          description: doc(`Body ${i + 1}`),
          labels: ['official-client'],
        },
      })),
    });
    expect(created.errors ?? []).toEqual([]);
    expect(created.issues).toHaveLength(7);
    keys = (created.issues ?? []).map((i) => i.key as string);
    ids = (created.issues ?? []).map((i) => Number(i.id));
    const seen: string[] = [];
    let nextPageToken: string | undefined;
    do {
      const page = await jira.issueSearch.searchAndReconsileIssuesUsingJqlPost({
        jql: `project = ${KEY} AND labels = official-client ORDER BY key ASC`,
        fields: ['summary', 'description'],
        maxResults: 3,
        nextPageToken,
        reconcileIssues: ids,
      });
      seen.push(...(page.issues ?? []).map((i) => i.key as string));
      nextPageToken = page.nextPageToken ?? undefined;
    } while (nextPageToken);
    expect(seen).toEqual(keys);
    const one = await jira.issues.getIssue({ issueIdOrKey: keys[0]!, fields: ['description'] });
    expect(one.fields?.description).toEqual(doc('Body 1'));
  });

  it('transitions, comments, attaches, links and logs work', async () => {
    const key = keys[0]!;
    const { transitions = [] } = await jira.issues.getTransitions({ issueIdOrKey: key });
    expect(transitions.length).toBeGreaterThan(0);
    const target = transitions[0]!;
    await jira.issues.doTransition({ issueIdOrKey: key, transition: { id: target.id } });
    const moved = await jira.issues.getIssue({ issueIdOrKey: key, fields: ['status'] });
    expect(moved.fields?.status?.name).toBe(target.to?.name);

    const comment = await jira.issueComments.addComment({ issueIdOrKey: key, body: doc('From jira.js') });
    expect(comment.id).toBeTruthy();
    const comments = await jira.issueComments.getComments({ issueIdOrKey: key });
    expect(comments.comments?.map((c) => c.id)).toContain(comment.id);

    const attached = await jira.issueAttachments.addAttachment({
      issueIdOrKey: key,
      attachments: { filename: 'notes.txt', content: Buffer.from('hello from jira.js') },
    });
    expect(attached[0]?.filename).toBe('notes.txt');
    expect(attached[0]?.size).toBe(18);
    // Jira Cloud's default attachment limit is 1 GB (docs/sandboxes.md cites it).
    const meta = await jira.issueAttachments.getAttachmentMeta();
    expect(meta).toEqual({ enabled: true, uploadLimit: 1024 ** 3 });

    await jira.issueLinks.linkIssues({
      type: { name: 'Blocks' },
      inwardIssue: { key: keys[1] },
      outwardIssue: { key },
    });
    const linked = await jira.issues.getIssue({ issueIdOrKey: key, fields: ['issuelinks'] });
    expect(JSON.stringify(linked.fields?.issuelinks)).toContain(keys[1]);

    const worklog = await jira.issueWorklogs.addWorklog({
      issueIdOrKey: key,
      timeSpentSeconds: 5400,
      started: '2026-01-05T09:00:00.000+0000',
      comment: doc('Pairing'),
    });
    expect(worklog.timeSpentSeconds).toBe(5400);
    const worklogs = await jira.issueWorklogs.getIssueWorklog({ issueIdOrKey: key });
    expect(worklogs.worklogs?.map((w) => w.id)).toContain(worklog.id);
  });

  it('creates components and finds users', async () => {
    const component = await jira.projectComponents.createComponent({ project: KEY, name: 'Official client' });
    expect(component.name).toBe('Official client');
    const list = await jira.projectComponents.getProjectComponents({ projectIdOrKey: KEY });
    expect(list.map((c) => c.name)).toContain('Official client');
    const me = await jira.myself.getCurrentUser();
    expect(me.emailAddress).toBe(config.jira.email);
    const users = await jira.userSearch.findUsers({ query: me.displayName!.split(' ')[0] });
    expect(users.map((u) => u.accountId)).toContain(me.accountId);
  });

  it('reads boards and creates, fills and updates a sprint', async () => {
    const boards = await agile.board.getAllBoards({ projectKeyOrId: KEY });
    const board = boards.values?.[0];
    expect(board?.id).toBeDefined();
    const sprint = await agile.sprint.createSprint({ name: 'Client sprint', originBoardId: board!.id! });
    expect(sprint.state).toBe('future');
    await agile.sprint.moveIssuesToSprintAndRank({ sprintId: sprint.id!, issues: keys.slice(0, 2) });
    const inSprint = await jira.issues.getIssue({ issueIdOrKey: keys[0]!, fields: ['customfield_10020'] });
    expect(JSON.stringify(inSprint.fields)).toContain('Client sprint');
    const updated = await agile.sprint.updateSprint({
      sprintId: sprint.id!,
      name: 'Client sprint 2',
      state: 'active',
      startDate: '2026-01-05T09:00:00.000Z',
      endDate: '2026-01-19T17:00:00.000Z',
      goal: 'Ship it',
    });
    expect(updated.name).toBe('Client sprint 2');
    expect(updated.state).toBe('active');
    const read = await agile.sprint.getSprint({ sprintId: sprint.id! });
    expect(read.goal).toBe('Ship it');
    const partial = await agile.sprint.partiallyUpdateSprint({ sprintId: sprint.id!, goal: 'Ship it well' });
    expect(partial.goal).toBe('Ship it well');
    const sprints = await agile.board.getAllSprints({ boardId: board!.id! });
    expect(sprints.values?.map((s) => s.name)).toContain('Client sprint 2');
  });

  it('reads the site metadata a migration maps onto, and edits an issue', async () => {
    const fields = await jira.issueFields.getFields();
    expect(fields.map((f) => f.id)).toEqual(expect.arrayContaining(['summary', 'description', 'labels']));
    const linkTypes = await jira.issueLinkTypes.getIssueLinkTypes();
    expect(linkTypes.issueLinkTypes?.map((t) => t.name)).toContain('Blocks');
    const priorities = await jira.issuePriorities.searchPriorities({});
    expect(priorities.values?.length).toBeGreaterThan(0);
    const statuses = await jira.projects.getAllStatuses({ projectIdOrKey: KEY });
    expect(statuses.map((t) => t.name)).toContain('Story');
    const roles = await jira.projectRoles.getProjectRoles({ projectIdOrKey: KEY });
    expect(Object.keys(roles).length).toBeGreaterThan(0);
    const permissions = await jira.permissions.getMyPermissions({
      projectKey: KEY,
      permissions: 'CREATE_ISSUES',
    });
    expect(permissions.permissions?.CREATE_ISSUES?.havePermission).toBe(true);

    const key = keys[2]!;
    await jira.issues.editIssue({
      issueIdOrKey: key,
      fields: { summary: 'Edited by jira.js', labels: ['edited'] },
    });
    const edited = await jira.issues.getIssue({ issueIdOrKey: key, fields: ['summary', 'labels'] });
    expect(edited.fields?.summary).toBe('Edited by jira.js');
    expect(edited.fields?.labels).toEqual(['edited']);
    const remote = await jira.issueRemoteLinks.createOrUpdateRemoteIssueLink({
      issueIdOrKey: key,
      object: {
        url: 'https://dev.azure.com/sandbox-org/Contoso/_workitems/edit/1',
        title: 'Source work item',
      },
    });
    expect(remote.id).toBeDefined();
    const remotes = await jira.issueRemoteLinks.getRemoteIssueLinks({ issueIdOrKey: key });
    expect(JSON.stringify(remotes)).toContain('Source work item');
  });

  it('answers what it does not emulate with the marker, through the client', async () => {
    const error = await jira.issues
      .bulkFetchIssues({ issueIdsOrKeys: keys.slice(0, 2) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 501 });
    expect(JSON.stringify((error as { body?: unknown }).body)).toContain(
      'not emulated by the sandbox: POST /rest/api/3/issue/bulkfetch',
    );
  });

  it('found every answer in the shape jira.js expects', () => {
    expect(mismatches).toEqual([]);
  });
});
