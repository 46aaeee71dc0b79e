/**
 * Writing to the Azure DevOps sandbox through real HTTP, as the incremental run's tests will between two runs:
 * create work items, add comments, upload and attach files, add and remove links; the errors the service
 * gives; responses against the official spec; and every read route (and the scan ground truth) seeing it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, readError, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import type { AdoScanTruth } from '../../local/sandbox/generator/index.ts';
import { type AdoWorkItemJson, AdoWriteError, type AdoWrites, adoWrites } from '../support/ado-writes.ts';
import { type Conformance, loadConformance } from '../support/openapi-conformance.ts';

let ado: AdoTestSandbox;
let src: AdoWrites;
let conformance: Conformance;
beforeAll(async () => {
  [ado, conformance] = await Promise.all([
    startAdoSandbox({ items: 120, seed: 11 }),
    loadConformance(['ado-wit']),
  ]);
  src = adoWrites({ url: ado.url, ...ado.config.ado });
});
afterAll(() => ado.close());

const PATCH = { 'Content-Type': 'application/json-patch+json' };
const AUTH = { Authorization: `Basic ${Buffer.from(':test-pat').toString('base64')}` };
const me = () => ado.state.world.people[ado.state.me]!;
const get = (id: number, query = '') => ado.json<AdoWorkItemJson>(`wit/workitems/${id}${query}`);
const tick = () => new Promise((r) => setTimeout(r, 2));

/** The body of an answer, checked against the spec. */
async function conformant(method: string, res: Response): Promise<unknown> {
  const body = (res.headers.get('content-type') ?? '').startsWith('application/json')
    ? await res.json()
    : undefined;
  expect(
    conformance.checkResponse({ method, path: new URL(res.url).pathname, status: res.status, body }),
  ).toEqual([]);
  return body;
}

async function refusal(p: Promise<unknown>): Promise<AdoWriteError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdoWriteError);
  return err as AdoWriteError;
}

const messageOf = (e: AdoWriteError) => (JSON.parse(e.body) as { message: string }).message;

describe('POST workitems/$Type', () => {
  it('creates the next item at rev 1, by the PAT owner, now, with the type defaults', async () => {
    const before = ado.state.world.workItems.length;
    const t0 = Date.now();
    const res = await ado.call('wit/workitems/$User%20Story', {
      method: 'POST',
      headers: PATCH,
      json: [
        { op: 'add', path: '/fields/System.Title', value: 'Export to CSV' },
        { op: 'add', path: '/fields/System.Description', value: '<div>As a user I want CSV.</div>' },
        { op: 'add', path: '/fields/System.Tags', value: 'csv; export' },
      ],
    });
    expect(res.status).toBe(200);
    const item = (await conformant('POST', res)) as AdoWorkItemJson;
    const t1 = Date.now();
    expect(item.id).toBe(before + 1);
    expect(item.rev).toBe(1);
    const f = item.fields;
    expect(f['System.WorkItemType']).toBe('User Story');
    expect(f['System.State']).toBe('New');
    expect(f['System.Reason']).toBe('New');
    expect(f['System.AreaPath']).toBe('Contoso');
    expect(f['System.IterationPath']).toBe('Contoso');
    expect(f['Microsoft.VSTS.Common.Priority']).toBe(2);
    expect(f['Microsoft.VSTS.Common.ValueArea']).toBe('Business');
    expect(f['System.CommentCount']).toBe(0);
    expect(f['System.Description']).toBe('<div>As a user I want CSV.</div>');
    expect(f['System.Tags']).toBe('csv; export');
    // Nothing generated: no acceptance criteria, no assignee.
    expect(f['Microsoft.VSTS.Common.AcceptanceCriteria']).toBeUndefined();
    expect(f['System.AssignedTo']).toBeUndefined();
    expect(f['System.CreatedDate']).toBe(f['System.ChangedDate']);
    const created = Date.parse(String(f['System.CreatedDate']));
    expect(created).toBeGreaterThanOrEqual(t0);
    expect(created).toBeLessThanOrEqual(t1);
    for (const who of ['System.CreatedBy', 'System.ChangedBy'])
      expect((f[who] as { uniqueName: string }).uniqueName).toBe(me().email);
    // The same through GET, and no comments to list.
    expect((await get(item.id)).fields).toEqual(f);
    const comments = await ado.json<{ totalCount: number }>(`wit/workItems/${item.id}/comments`, {
      version: '7.1-preview.4',
    });
    expect(comments.totalCount).toBe(0);
  });

  it('takes identities, tree paths, picklists and custom fields as PATCH does', async () => {
    const person = ado.state.world.people[2]!;
    const bug = await src.createWorkItem('bug', {
      'System.Title': 'Crash on save',
      'System.AssignedTo': person.email,
      'System.AreaPath': 'Contoso\\Web',
      'Microsoft.VSTS.Common.Severity': '1 - Critical',
      'Microsoft.VSTS.TCM.ReproSteps': '<ol><li>Save</li></ol>',
      'Custom.CustomerTier': 'Gold',
      'System.History': 'Reported by support',
    });
    expect(bug.fields['System.WorkItemType']).toBe('Bug');
    expect((bug.fields['System.AssignedTo'] as { uniqueName: string }).uniqueName).toBe(person.email);
    expect(bug.fields['System.AreaPath']).toBe('Contoso\\Web');
    expect(bug.fields['Microsoft.VSTS.Common.Severity']).toBe('1 - Critical');
    expect(bug.fields['Microsoft.VSTS.TCM.ReproSteps']).toBe('<ol><li>Save</li></ol>');
    expect(bug.fields['Custom.CustomerTier']).toBe('Gold');
    expect(bug.fields['System.History']).toBe('Reported by support');
    const wrong = await refusal(
      src.createWorkItem('Bug', { 'System.Title': 'x', 'System.AreaPath': 'Contoso\\Nope' }),
    );
    expect(wrong.status).toBe(400);
    expect(messageOf(wrong)).toMatch(/^TF401347/);
  });

  it('starts in the first state unless bypassRules, which also lets dates and authors be set', async () => {
    const refused = await refusal(
      src.createWorkItem('Task', { 'System.Title': 'x', 'System.State': 'Closed' }),
    );
    expect(messageOf(refused)).toBe('TF401320: Rule Error for field State. Error code: LimitedToValues.');
    const readOnly = await refusal(
      src.createWorkItem('Task', { 'System.Title': 'x', 'System.CreatedDate': '2020-01-01T00:00:00Z' }),
    );
    expect(messageOf(readOnly)).toMatch(/Created Date.*ReadOnly/);
    const author = ado.state.world.people[3]!;
    const migrated = await src.createWorkItem(
      'Task',
      {
        'System.Title': 'Imported',
        'System.State': 'Closed',
        'System.CreatedDate': '2020-01-02T03:04:05Z',
        'System.CreatedBy': author.email,
      },
      { bypassRules: true },
    );
    expect(migrated.fields['System.State']).toBe('Closed');
    expect(migrated.fields['System.Reason']).toBe('Completed');
    expect(migrated.fields['System.CreatedDate']).toBe('2020-01-02T03:04:05Z');
    expect(migrated.fields['System.ChangedDate']).toBe('2020-01-02T03:04:05Z');
    expect((migrated.fields['System.ChangedBy'] as { uniqueName: string }).uniqueName).toBe(author.email);
  });

  it('validates without saving when validateOnly=true', async () => {
    const before = ado.state.world.workItems.length;
    const res = await ado.call('wit/workitems/$Task?validateOnly=true', {
      method: 'POST',
      headers: PATCH,
      json: [{ op: 'add', path: '/fields/System.Title', value: 'Just checking' }],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as AdoWorkItemJson).fields['System.Title']).toBe('Just checking');
    expect(ado.state.world.workItems.length).toBe(before);
    expect((await ado.call(`wit/workitems/${before + 1}`)).status).toBe(404);
    // The id it would have had goes to the next real item, which shows nothing of the validated one.
    const real = await src.createWorkItem('Task', { 'System.Title': 'For real' });
    expect(real.id).toBe(before + 1);
    expect((await get(real.id)).fields['System.Title']).toBe('For real');
  });

  it('refuses an unknown type (VS402323), a path without $, a bad patch and a missing title', async () => {
    const unknown = await ado.call('wit/workitems/$Product%20Backlog%20Item', {
      method: 'POST',
      headers: PATCH,
      json: [{ op: 'add', path: '/fields/System.Title', value: 'x' }],
    });
    expect(unknown.status).toBe(404);
    expect((await readError(unknown)).message).toBe(
      'VS402323: Work item type Product Backlog Item does not exist in project Contoso or you do not have permission to access it.',
    );
    const noDollar = await ado.call('wit/workitems/Task', {
      method: 'POST',
      headers: PATCH,
      json: [{ op: 'add', path: '/fields/System.Title', value: 'x' }],
    });
    expect(noDollar.status).toBe(404);
    const notArray = await ado.call('wit/workitems/$Task', {
      method: 'POST',
      headers: PATCH,
      json: { title: 'x' },
    });
    expect(notArray.status).toBe(400);
    expect((await readError(notArray)).message).toMatch(/valid patch document/);
    const badJson = await fetch(`${ado.url}/sandbox-org/Contoso/_apis/wit/workitems/$Task?api-version=7.1`, {
      method: 'POST',
      headers: { ...PATCH, ...AUTH },
      body: '[{"op": "add",',
    });
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as { typeKey: string }).typeKey).toBe('JsonReaderException');
    const noTitle = await refusal(src.createWorkItem('Task', { 'System.Description': 'untitled' }));
    expect(messageOf(noTitle)).toBe('TF401320: Rule Error for field Title. Error code: Required.');
    const unknownField = await refusal(src.createWorkItem('Task', { 'System.Title': 'x', 'Custom.Nope': 1 }));
    expect(messageOf(unknownField)).toMatch(/^TF51535/);
    const testPlan = await refusal(src.createWorkItem('Test Plan', { 'System.Title': 'x' }));
    expect(testPlan.status).toBe(400);
  });

  it('creates with a parent link, written on both ends', async () => {
    const parent = ado.state.world.workItems.find((i) => i.type === 'Feature')!;
    const parentRev = (await get(parent.id)).rev;
    const story = await src.createWorkItem(
      'User Story',
      { 'System.Title': 'Child story' },
      { parent: parent.id },
    );
    expect(story.fields['System.Parent']).toBe(parent.id);
    const parentUrl = `${ado.url}/sandbox-org/${ado.state.world.projectId}/_apis/wit/workItems/${parent.id}`;
    expect(story.relations).toEqual([
      expect.objectContaining({ rel: 'System.LinkTypes.Hierarchy-Reverse', url: parentUrl }),
    ]);
    const after = await get(parent.id, '?$expand=relations');
    const children = after.relations!.filter((r) => r.rel === 'System.LinkTypes.Hierarchy-Forward');
    expect(children.map((r) => Number(r.url.split('/').at(-1)))).toContain(story.id);
    // The other end changes without a revision of its own.
    expect(after.rev).toBe(parentRev);
  });
});

describe('POST workItems/{id}/comments', () => {
  it('adds a comment and a revision, and the listing, batch and revisions show it', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentCount > 3 && i.commentCount < 150)!;
    const before = await get(item.id);
    const t0 = Date.now();
    const res = await ado.call(`wit/workItems/${item.id}/comments`, {
      method: 'POST',
      json: { text: '<div>Seen again in 2.3</div>' },
      version: '7.1-preview.4',
    });
    expect(res.status).toBe(200);
    const comment = (await conformant('POST', res)) as {
      id: number;
      version: number;
      text: string;
      createdBy: { uniqueName: string };
      createdDate: string;
      workItemId: number;
    };
    expect(comment.workItemId).toBe(item.id);
    expect(comment.version).toBe(1);
    expect(comment.text).toBe('<div>Seen again in 2.3</div>');
    expect(comment.createdBy.uniqueName).toBe(me().email);
    expect(Date.parse(comment.createdDate)).toBeGreaterThanOrEqual(t0);
    // Ids are unique across the organisation: past every generated comment's.
    const last = ado.state.world.workItems[119]!;
    expect(comment.id).toBeGreaterThanOrEqual(last.commentIdBase + last.commentTotal);

    const after = await get(item.id);
    expect(after.rev).toBe(before.rev + 1);
    expect(after.fields['System.CommentCount']).toBe(Number(before.fields['System.CommentCount']) + 1);
    expect(after.fields['System.History']).toBe(comment.text);
    expect(after.fields['System.ChangedDate']).toBe(comment.createdDate);
    expect((after.fields['System.ChangedBy'] as { uniqueName: string }).uniqueName).toBe(me().email);

    const list = await ado.json<{ totalCount: number; comments: { id: number }[] }>(
      `wit/workItems/${item.id}/comments`,
      { version: '7.1-preview.4' },
    );
    expect(list.totalCount).toBe(after.fields['System.CommentCount']);
    expect(list.comments[0]!.id).toBe(comment.id);
    const asc = await ado.json<{ comments: { id: number }[] }>(
      `wit/workItems/${item.id}/comments?order=asc`,
      {
        version: '7.1-preview.4',
      },
    );
    expect(asc.comments.at(-1)!.id).toBe(comment.id);
    const byId = await ado.json<{ comments: { id: number; text: string }[] }>(
      `wit/workItems/${item.id}/comments?ids=${comment.id},${item.commentIdBase}`,
      { version: '7.1-preview.4' },
    );
    expect(byId.comments.map((c) => c.id)).toEqual([comment.id, item.commentIdBase]);

    const revisions = await ado.json<{ value: AdoWorkItemJson[] }>(`wit/workItems/${item.id}/revisions`);
    expect(revisions.value.at(-1)!.fields['System.History']).toBe(comment.text);
    expect(revisions.value.at(-2)!.fields['System.History']).toBeUndefined();
    const batch = await ado.json<{ value: AdoWorkItemJson[] }>('wit/workitemsbatch', {
      method: 'POST',
      json: { ids: [item.id], fields: ['System.CommentCount', 'System.Rev'] },
    });
    expect(batch.value[0]!.fields['System.CommentCount']).toBe(after.fields['System.CommentCount']);
  });

  it('refuses an empty text, an unknown item and a version without -preview', async () => {
    const empty = await ado.call('wit/workItems/3/comments', {
      method: 'POST',
      json: { text: ' ' },
      version: '7.1-preview.4',
    });
    expect(empty.status).toBe(400);
    const missing = await ado.call('wit/workItems/99999/comments', {
      method: 'POST',
      json: { text: 'x' },
      version: '7.1-preview.4',
    });
    expect(missing.status).toBe(404);
    expect((await readError(missing)).message).toMatch(/^TF401232/);
    const released = await ado.call('wit/workItems/3/comments', { method: 'POST', json: { text: 'x' } });
    expect(released.status).toBe(400);
    expect((await readError(released)).typeKey).toBe('VssInvalidPreviewVersionException');
    expect((await get(3)).rev).toBe(ado.state.world.workItems[2]!.rev);
  });
});

describe('attachments', () => {
  const bytes = Buffer.from([
    0x89,
    0x50,
    0x4e,
    0x47,
    0x00,
    0xff,
    0xfe,
    0x0a,
    ...Buffer.from('not utf-8 safe'),
  ]);

  it('uploads a file, serves it before and after attaching, and attaches it in a new revision', async () => {
    const upload = await fetch(
      `${ado.url}/sandbox-org/Contoso/_apis/wit/attachments?fileName=screen%20shot.png&api-version=7.1`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/octet-stream', ...AUTH },
        body: new Uint8Array(bytes),
      },
    );
    expect(upload.status).toBe(200);
    const ref = (await conformant('POST', upload)) as { id: string; url: string };
    expect(ref.url).toBe(
      `${ado.url}/sandbox-org/${ado.state.world.projectId}/_apis/wit/attachments/${ref.id}?fileName=screen%20shot.png`,
    );
    const early = await fetch(ref.url.replace('?', '?api-version=7.1&'), { headers: AUTH });
    expect(early.status).toBe(200);
    expect(early.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await early.arrayBuffer())).toEqual(bytes);

    const item = ado.state.world.workItems.find((i) => i.attachments.length === 0 && i.type === 'Bug')!;
    const before = await get(item.id);
    const truthBefore = await ado.json<AdoScanTruth>('/_sandbox/ado/truth', { version: null });
    const after = await src.attach(item.id, ref.url, 'From the customer');
    expect(after.rev).toBe(before.rev + 1);
    expect(Date.parse(String(after.fields['System.ChangedDate']))).toBeGreaterThan(
      Date.parse(String(before.fields['System.ChangedDate'])),
    );
    const file = after.relations!.find((r) => r.rel === 'AttachedFile')!;
    expect(file.url).toBe(ref.url.split('?')[0]);
    expect(file.attributes).toMatchObject({
      name: 'screen shot.png',
      resourceSize: bytes.length,
      comment: 'From the customer',
      revisedDate: '9999-01-01T00:00:00Z',
    });
    expect(file.attributes!.resourceCreatedDate).toBe(after.fields['System.ChangedDate']);
    expect(typeof file.attributes!.id).toBe('number');
    const download = await ado.call(`${new URL(file.url).pathname}?download=true`);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
    expect(download.headers.get('content-disposition')).toContain('attachment; filename="screen shot.png"');

    const truth = await ado.json<AdoScanTruth>('/_sandbox/ado/truth', { version: null });
    expect(truth.attachmentCount).toBe(truthBefore.attachmentCount + 1);
    expect(truth.attachmentTotalBytes).toBe(truthBefore.attachmentTotalBytes + bytes.length);

    // Removing it by index: a new revision without the relation.
    const index = after.relations!.indexOf(file);
    const removed = await src.removeRelation(item.id, index);
    expect(removed.rev).toBe(after.rev + 1);
    expect((removed.relations ?? []).some((r) => r.rel === 'AttachedFile')).toBe(false);
    expect((await ado.json<AdoScanTruth>('/_sandbox/ado/truth', { version: null })).attachmentCount).toBe(
      truthBefore.attachmentCount,
    );
  });

  it('refuses an unknown attachment URL and leaves the item as it was', async () => {
    const before = await get(4, '?$expand=relations');
    const err = await refusal(
      src.attach(
        4,
        `${ado.url}/sandbox-org/Contoso/_apis/wit/attachments/00000000-0000-4000-8000-000000000000`,
      ),
    );
    expect(err.status).toBe(400);
    expect(messageOf(err)).toMatch(/attachment .* does not exist/);
    const notAnAttachment = await refusal(src.attach(4, 'https://example.com/file.txt'));
    expect(notAnAttachment.status).toBe(400);
    expect(await get(4, '?$expand=relations')).toEqual(before);
  });
});

describe('links', () => {
  const related = (w: AdoWorkItemJson, id: number) =>
    (w.relations ?? []).filter(
      (r) => r.rel === 'System.LinkTypes.Related' && r.url.endsWith(`/workItems/${id}`),
    );

  it('adds a link on both ends, revising only the item patched, and removes both ends', async () => {
    const [a, b] = [21, 22];
    const bBefore = await get(b, '?$expand=relations');
    const aBefore = await get(a);
    // The link type is matched case-insensitively, as the service does.
    const res = await ado.call(`wit/workitems/${a}?$expand=relations`, {
      method: 'PATCH',
      headers: PATCH,
      json: [
        { op: 'test', path: '/rev', value: aBefore.rev },
        {
          op: 'add',
          path: '/relations/-',
          value: {
            rel: 'system.linktypes.related',
            url: src.workItemUrl(b),
            attributes: { comment: 'same cause' },
          },
        },
      ],
    });
    expect(res.status).toBe(200);
    const aAfter = (await conformant('PATCH', res)) as AdoWorkItemJson;
    expect(aAfter.rev).toBe(aBefore.rev + 1);
    expect(related(aAfter, b)).toEqual([
      expect.objectContaining({ attributes: { isLocked: false, name: 'Related', comment: 'same cause' } }),
    ]);
    const bAfter = await get(b, '?$expand=relations');
    expect(related(bAfter, a)).toHaveLength(1);
    expect(bAfter.rev).toBe(bBefore.rev);
    expect(bAfter.fields['System.ChangedDate']).toBe(bBefore.fields['System.ChangedDate']);

    const duplicate = await refusal(src.addLink(b, 'System.LinkTypes.Related', a));
    expect(duplicate.status).toBe(400);

    const index = aAfter.relations!.indexOf(related(aAfter, b)[0]!);
    const aRemoved = await src.removeRelation(a, index);
    expect(related(aRemoved, b)).toEqual([]);
    expect(related(await get(b, '?$expand=relations'), a)).toEqual([]);
  });

  it('moves a child to another parent: remove, then add, with System.Parent following', async () => {
    const child = ado.state.world.workItems.find((i) => i.type === 'Task' && i.parentId !== null)!;
    const oldParent = child.parentId!;
    const newParent = ado.state.world.workItems.find((i) => i.type === 'User Story' && i.id !== oldParent)!;
    const second = await refusal(src.addLink(child.id, 'System.LinkTypes.Hierarchy-Reverse', newParent.id));
    expect(messageOf(second)).toBe(
      `TF201036: You cannot add a Parent link between work items ${child.id} and ${newParent.id} because a work item can have only one Parent link.`,
    );
    const fromAbove = await refusal(
      src.addLink(newParent.id, 'System.LinkTypes.Hierarchy-Forward', child.id),
    );
    expect(messageOf(fromAbove)).toMatch(/^TF201036: You cannot add a Child link/);

    const current = await get(child.id, '?$expand=relations');
    const parentIndex = current.relations!.findIndex((r) => r.rel === 'System.LinkTypes.Hierarchy-Reverse');
    const res = await ado.call(`wit/workitems/${child.id}?$expand=relations`, {
      method: 'PATCH',
      headers: PATCH,
      json: [
        { op: 'remove', path: `/relations/${parentIndex}` },
        {
          op: 'add',
          path: '/relations/-',
          value: { rel: 'System.LinkTypes.Hierarchy-Reverse', url: src.workItemUrl(newParent.id) },
        },
      ],
    });
    expect(res.status).toBe(200);
    const moved = (await res.json()) as AdoWorkItemJson;
    expect(moved.rev).toBe(current.rev + 1);
    expect(moved.fields['System.Parent']).toBe(newParent.id);
    const children = async (id: number) =>
      ((await get(id, '?$expand=relations')).relations ?? [])
        .filter((r) => r.rel === 'System.LinkTypes.Hierarchy-Forward')
        .map((r) => Number(r.url.split('/').at(-1)));
    expect(await children(newParent.id)).toContain(child.id);
    expect(await children(oldParent)).not.toContain(child.id);
    const wiql = await ado.json<{ workItems: { id: number }[] }>('wit/wiql', {
      method: 'POST',
      json: { query: `SELECT [System.Id] FROM WorkItems WHERE [System.Parent] = ${newParent.id}` },
    });
    expect(wiql.workItems.map((w) => w.id)).toContain(child.id);
  });

  it('refuses links to missing items or to itself, cycles, bad indexes and unknown link types', async () => {
    const before = await get(30, '?$expand=relations');
    expect((await refusal(src.addLink(30, 'System.LinkTypes.Related', 99999))).status).toBe(400);
    expect((await refusal(src.addLink(30, 'System.LinkTypes.Related', 30))).status).toBe(400);
    expect((await refusal(src.addLink(30, 'System.LinkTypes.Nope', 31))).status).toBe(400);
    expect((await refusal(src.removeRelation(30, 500))).status).toBe(400);
    // An epic under its own child.
    const epic = ado.state.world.workItems.find(
      (i) => i.type === 'Epic' && i.links.some((l) => l.rel === 'System.LinkTypes.Hierarchy-Forward'),
    )!;
    const childId = epic.links.find((l) => l.rel === 'System.LinkTypes.Hierarchy-Forward')!.targetId!;
    const cycle = await refusal(src.addLink(epic.id, 'System.LinkTypes.Hierarchy-Reverse', childId));
    expect(messageOf(cycle)).toMatch(/circular/);
    expect(await get(30, '?$expand=relations')).toEqual(before);
  });
});

describe('reads after writes', () => {
  it('WIQL with timePrecision finds exactly the items changed since a moment, the new one included', async () => {
    const since = new Date().toISOString();
    await tick();
    const task = ado.state.world.workItems.find((i) => i.type === 'Task' && i.state === 'New' && i.id > 44)!;
    const moved = await src.patchFields(task.id, { 'System.State': 'Active' });
    expect([moved.fields['System.State'], moved.fields['System.Reason']]).toEqual(['Active', 'Work started']);
    await src.addComment(41, 'A new comment');
    const created = await src.createWorkItem('Issue', { 'System.Title': 'Brand new issue' });
    await src.uploadAndAttach(42, 'log.txt', 'line 1\nline 2\n');
    await src.addLink(43, 'System.LinkTypes.Related', 44);
    const query = `SELECT [System.Id] FROM WorkItems WHERE [System.ChangedDate] > '${since}' ORDER BY [System.Id]`;
    const changed = await ado.json<{ workItems: { id: number }[] }>('wit/wiql?timePrecision=true', {
      method: 'POST',
      json: { query },
    });
    // 44 only gained the other end of 43's link: no revision, so not changed.
    expect(changed.workItems.map((w) => w.id)).toEqual(
      [41, 42, 43, task.id, created.id].sort((a, b) => a - b),
    );
    const found = await ado.json<{ workItems: { id: number }[] }>('wit/wiql', {
      method: 'POST',
      json: { query: "SELECT [System.Id] FROM WorkItems WHERE [System.Title] CONTAINS 'Brand new issue'" },
    });
    expect(found.workItems.map((w) => w.id)).toEqual([created.id]);
    const batch = await ado.json<{ value: AdoWorkItemJson[] }>('wit/workitemsbatch', {
      method: 'POST',
      json: { ids: [created.id, 42], $expand: 'relations' },
    });
    expect(batch.value[0]!.fields['System.Title']).toBe('Brand new issue');
    expect(
      batch.value[1]!.relations!.some((r) => r.rel === 'AttachedFile' && r.attributes?.name === 'log.txt'),
    ).toBe(true);
  });

  it('keeps the scan ground truth equal to what the API shows', async () => {
    const truth = await ado.json<AdoScanTruth>('/_sandbox/ado/truth', { version: null });
    const wiql = await ado.json<{ workItems: { id: number }[] }>('wit/wiql', {
      method: 'POST',
      json: { query: 'SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project' },
    });
    const ids = wiql.workItems.map((w) => w.id);
    const items: AdoWorkItemJson[] = [];
    for (let i = 0; i < ids.length; i += 200) {
      const page = await ado.json<{ value: AdoWorkItemJson[] }>('wit/workitemsbatch', {
        method: 'POST',
        json: { ids: ids.slice(i, i + 200), $expand: 'relations' },
      });
      items.push(...page.value);
    }
    const files = items.flatMap((i) => (i.relations ?? []).filter((r) => r.rel === 'AttachedFile'));
    const linkEnds = items.flatMap((i) =>
      (i.relations ?? []).filter((r) => r.url.includes('/_apis/wit/workItems/')),
    );
    let comments = 0;
    for (const item of items) {
      if (!item.fields['System.CommentCount']) continue;
      let token: string | undefined;
      do {
        const page = await ado.json<{ count: number; continuationToken?: string }>(
          `wit/workItems/${item.id}/comments${token ? `?continuationToken=${token}` : ''}`,
          { version: '7.1-preview.4' },
        );
        comments += page.count;
        token = page.continuationToken;
      } while (token);
    }
    const types: Record<string, number> = {};
    for (const i of items) {
      const t = String(i.fields['System.WorkItemType']);
      types[t] = (types[t] ?? 0) + 1;
    }
    const root = items.filter((i) => i.fields['System.AreaPath'] === 'Contoso').length;
    expect({
      totalWorkItems: items.length,
      typeCounts: types,
      root,
      attachmentCount: files.length,
      attachmentTotalBytes: files.reduce((s, r) => s + Number(r.attributes?.resourceSize), 0),
      commentCount: comments,
      linkCount: linkEnds.length / 2,
    }).toEqual({
      totalWorkItems: truth.totalWorkItems,
      typeCounts: truth.typeCounts,
      root: truth.areaPaths.find((p) => p.path === 'Contoso')!.itemCount,
      attachmentCount: truth.attachmentCount,
      attachmentTotalBytes: truth.attachmentTotalBytes,
      commentCount: truth.commentCount,
      linkCount: truth.linkCount,
    });
    // The writes above are in it.
    expect(truth.totalWorkItems).toBeGreaterThan(120);
  });
});
