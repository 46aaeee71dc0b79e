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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

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

  it('reads revisions and updates', async () => {
    const item = ado.state.world.workItems.find((i) => i.rev >= 3)!;
    const revisions = await wit.getRevisions(item.id, undefined, undefined, WorkItemExpand.Fields, PROJECT);
    expect(revisions.map((r) => r.rev)).toEqual(Array.from({ length: item.rev }, (_, i) => i + 1));
    const updates = await wit.getUpdates(item.id, undefined, undefined, PROJECT);
    expect(updates.map((u) => u.rev)).toEqual(Array.from({ length: item.rev }, (_, i) => i + 1));
    expect(updates[0]?.fields?.['System.Title']?.newValue).toBe(revisions[0]?.fields?.['System.Title']);
    expect(updates[1]?.workItemId).toBe(item.id);
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
  });

  it('uploads and downloads an attachment', async () => {
    const bytes = Buffer.from('attachment bytes from the official client');
    const ref = await wit.createAttachment(null, Readable.from([bytes]), 'client.txt', undefined, PROJECT);
    expect(ref.id).toBeTruthy();
    expect(ref.url).toContain(ref.id as string);
    const back = await readAll(await wit.getAttachmentContent(ref.id as string, 'client.txt', PROJECT, true));
    expect(back.equals(bytes)).toBe(true);
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
