/** Reading work items (single, list, batch), revisions and PATCH, through real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, readError, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { LINK_TYPE_BY_REF, typeDef } from '../../local/sandbox/generator/index.ts';

interface WorkItem {
  id: number;
  rev: number;
  fields: Record<string, unknown>;
  relations?: { rel: string; url: string; attributes: Record<string, unknown> }[];
  _links?: Record<string, { href: string }>;
  url: string;
}
interface List<T> {
  count: number;
  value: T[];
}

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 400, seed: 5 });
});
afterAll(() => ado.close());

const batch = (body: unknown) => ado.call('wit/workitemsbatch', { method: 'POST', json: body });
const idFromUrl = (url: string) => Number(url.split('/').at(-1));

describe('GET workitems/{id}', () => {
  it('answers id, rev, fields, _links and url; relations only when expanded', async () => {
    const plain = await ado.json<WorkItem>('wit/workitems/3');
    expect(plain.id).toBe(3);
    expect(plain.rev).toBe(ado.state.world.workItems[2]!.rev);
    expect(plain.fields['System.WorkItemType']).toBe('User Story');
    expect(plain.fields['System.TeamProject']).toBe('Contoso');
    expect(plain.fields['System.Id']).toBeUndefined();
    expect(plain.relations).toBeUndefined();
    expect(plain._links?.self?.href).toBe(plain.url);
    const all = await ado.json<WorkItem>('wit/workitems/3?$expand=all');
    expect(all.fields['System.Id']).toBe(3);
    expect(all.fields['System.Rev']).toBe(all.rev);
    expect(all.relations?.length).toBeGreaterThan(0);
    const relations = await ado.json<WorkItem>('wit/workitems/3?$expand=Relations');
    expect(relations.relations).toEqual(all.relations);
  });

  it('returns only the requested fields, and refuses fields with $expand', async () => {
    const item = await ado.json<WorkItem>('wit/workitems/3?fields=System.Title,system.state,System.Id');
    expect(Object.keys(item.fields).sort()).toEqual(['System.Id', 'System.State', 'System.Title']);
    const both = await ado.call('wit/workitems/3?fields=System.Title&$expand=relations');
    expect(both.status).toBe(400);
    const unknown = await ado.call('wit/workitems/3?fields=System.Nope');
    expect(unknown.status).toBe(400);
    expect((await readError(unknown)).message).toMatch(/^TF51535/);
  });

  it('shows each link on both ends through the API', async () => {
    const item = await ado.json<WorkItem>('wit/workitems/2?$expand=relations');
    const links = item.relations!.filter((r) => r.url.includes('/workItems/'));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      const other = await ado.json<WorkItem>(`wit/workitems/${idFromUrl(link.url)}?$expand=relations`);
      const opposite = LINK_TYPE_BY_REF.get(link.rel)!.opposite;
      expect(
        other.relations!.some((r) => r.rel === opposite && idFromUrl(r.url) === 2),
        `${link.rel} → ${link.url}`,
      ).toBe(true);
      expect(link.attributes).toMatchObject({ isLocked: false, name: LINK_TYPE_BY_REF.get(link.rel)!.name });
    }
  });

  it('picks the revision in force with asOf', async () => {
    const item = ado.state.world.workItems.find((i) => i.rev >= 3)!;
    const revisions = await ado.json<List<WorkItem>>(`wit/workItems/${item.id}/revisions`);
    const second = revisions.value[1]!;
    const asOf = String(second.fields['System.ChangedDate']);
    const then = await ado.json<WorkItem>(`wit/workitems/${item.id}?asOf=${encodeURIComponent(asOf)}`);
    expect(then.rev).toBe(2);
    expect(then.fields['System.State']).toBe(second.fields['System.State']);
  });
});

describe('lists of work items', () => {
  it('GET workitems?ids= answers {count, value} in the requested order, at most 200', async () => {
    const list = await ado.json<List<WorkItem>>('wit/workitems?ids=9,2,5');
    expect(list.count).toBe(3);
    expect(list.value.map((w) => w.id)).toEqual([9, 2, 5]);
    const ids = Array.from({ length: 201 }, (_, i) => i + 1).join(',');
    const tooMany = await ado.call(`wit/workitems?ids=${ids}`);
    expect(tooMany.status).toBe(400);
    expect((await readError(tooMany)).message).toMatch(
      /^VS403474: You requested 201 work items which exceeds the limit of 200/,
    );
  });

  it('POST workitemsbatch takes 200 ids, refuses 201, and honours $expand and fields', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => i + 1);
    const res = await batch({ ids });
    expect(res.status).toBe(200);
    const body = (await res.json()) as List<WorkItem>;
    expect(body.count).toBe(200);
    expect(body.value.map((w) => w.id)).toEqual(ids);
    expect(body.value.every((w) => w.relations === undefined && w._links === undefined)).toBe(true);

    const over = await batch({ ids: [...ids, 201] });
    expect(over.status).toBe(400);
    expect((await readError(over)).message).toMatch(/^VS403474/);

    const expanded = (await (await batch({ ids: [2, 3], $expand: 'relations' })).json()) as List<WorkItem>;
    expect(expanded.value.every((w) => w.relations && w.relations.length > 0)).toBe(true);
    const all = (await (await batch({ ids: [5], $expand: 'all' })).json()) as List<WorkItem>;
    expect(all.value[0]!._links).toBeDefined();
    expect(all.value[0]!.fields['System.Id']).toBe(5);
    const none = (await (await batch({ ids: [2], $expand: 'none' })).json()) as List<WorkItem>;
    expect(none.value[0]!.relations).toBeUndefined();

    const picked = (await (
      await batch({ ids: [1, 2], fields: ['System.Title', 'System.WorkItemType'] })
    ).json()) as List<WorkItem>;
    expect(picked.value.map((w) => Object.keys(w.fields).sort())).toEqual([
      ['System.Title', 'System.WorkItemType'],
      ['System.Title', 'System.WorkItemType'],
    ]);
    expect((await batch({ ids: [1], fields: ['System.Title'], $expand: 'all' })).status).toBe(400);
  });

  it('fails on a missing id unless errorPolicy is omit', async () => {
    const fail = await batch({ ids: [1, 99_999] });
    expect(fail.status).toBe(404);
    expect((await readError(fail)).message).toMatch(/^TF401232/);
    const omit = (await (
      await batch({ ids: [1, 99_999], errorPolicy: 'Omit' })
    ).json()) as List<WorkItem | null>;
    expect(omit.value[0]?.id).toBe(1);
    expect(omit.value[1]).toBeNull();
    expect((await batch({ ids: 'nope' })).status).toBe(400);
  });

  it('lists AttachedFile relations with size and name', async () => {
    const item = ado.state.world.workItems.find((i) => i.attachments.length > 1)!;
    const got = await ado.json<WorkItem>(`wit/workitems/${item.id}?$expand=relations`);
    const files = got.relations!.filter((r) => r.rel === 'AttachedFile');
    expect(files.map((f) => f.attributes.name)).toEqual(item.attachments.map((a) => a.name));
    expect(files.map((f) => f.attributes.resourceSize)).toEqual(item.attachments.map((a) => a.size));
    expect(files[0]!.url).toMatch(/\/_apis\/wit\/attachments\/[0-9a-f-]{36}$/);
  });
});

describe('revisions', () => {
  it('lists every revision in order, the last equal to the current item', async () => {
    const item = ado.state.world.workItems.find((i) => i.rev >= 4)!;
    const revs = await ado.json<List<WorkItem>>(`wit/workitems/${item.id}/revisions`);
    expect(revs.count).toBe(item.rev);
    expect(revs.value.map((r) => r.rev)).toEqual(Array.from({ length: item.rev }, (_, i) => i + 1));
    const dates = revs.value.map((r) => Date.parse(String(r.fields['System.ChangedDate'])));
    expect([...dates].sort((a, b) => a - b)).toEqual(dates);
    expect(revs.value[0]!.fields['System.State']).toBe(typeDef(item.type).states[0]!.name);
    const current = await ado.json<WorkItem>(`wit/workitems/${item.id}`);
    expect(revs.value.at(-1)!.fields).toEqual(current.fields);
    expect(revs.value[0]!.url).toMatch(/\/revisions\/1$/);
  });

  it('pages with $top and $skip, and answers one revision by number', async () => {
    const item = ado.state.world.workItems.find((i) => i.rev >= 4)!;
    const page = await ado.json<List<WorkItem>>(`wit/workItems/${item.id}/revisions?$top=2&$skip=1`);
    expect(page.value.map((r) => r.rev)).toEqual([2, 3]);
    const one = await ado.json<WorkItem>(`wit/workItems/${item.id}/revisions/2`);
    expect(one.fields).toEqual(page.value[0]!.fields);
    expect((await ado.call(`wit/workItems/${item.id}/revisions/99`)).status).toBe(404);
  });

  it('has items whose history changes state, title or assignee', async () => {
    const changed = new Set<string>();
    for (const item of ado.state.world.workItems.filter((i) => i.rev >= 3).slice(0, 25)) {
      const revs = await ado.json<List<WorkItem>>(`wit/workItems/${item.id}/revisions`);
      for (let i = 1; i < revs.value.length; i++) {
        const [a, b] = [revs.value[i - 1]!.fields, revs.value[i]!.fields];
        for (const f of ['System.State', 'System.Title', 'System.AssignedTo']) {
          if (JSON.stringify(a[f]) !== JSON.stringify(b[f])) changed.add(f);
        }
      }
    }
    expect([...changed].sort()).toEqual(['System.AssignedTo', 'System.State', 'System.Title']);
  });
});

describe('PATCH workitems/{id}', () => {
  const patch = (id: number, ops: unknown, params = '') =>
    ado.call(`wit/workitems/${id}${params}`, {
      method: 'PATCH',
      json: ops,
      headers: { 'Content-Type': 'application/json-patch+json' },
    });

  it('adds a revision dated now, which an incremental WIQL query finds', async () => {
    const before = await ado.json<WorkItem>('wit/workitems/12');
    const since = new Date().toISOString();
    const res = await patch(12, [
      { op: 'test', path: '/rev', value: before.rev },
      { op: 'add', path: '/fields/System.Title', value: 'Renamed in the sandbox' },
    ]);
    expect(res.status).toBe(200);
    const after = (await res.json()) as WorkItem;
    expect(after.rev).toBe(before.rev + 1);
    expect(after.fields['System.Title']).toBe('Renamed in the sandbox');
    expect(Date.parse(String(after.fields['System.ChangedDate']))).toBeGreaterThan(
      Date.parse(String(before.fields['System.ChangedDate'])),
    );

    const found = await ado.call('wit/wiql?timePrecision=true', {
      method: 'POST',
      json: { query: `SELECT [System.Id] FROM WorkItems WHERE [System.ChangedDate] >= '${since}'` },
    });
    expect(((await found.json()) as { workItems: { id: number }[] }).workItems.map((w) => w.id)).toEqual([
      12,
    ]);
    const revs = await ado.json<List<WorkItem>>('wit/workItems/12/revisions');
    expect(revs.count).toBe(after.rev);
    expect(revs.value.at(-2)!.fields['System.Title']).toBe(before.fields['System.Title']);
  });

  it('changes state with its default reason, merges tags on add, and assigns by e-mail', async () => {
    const person = ado.state.world.people[2]!;
    const res = await patch(14, [
      { op: 'add', path: '/fields/System.State', value: 'Active' },
      { op: 'add', path: '/fields/System.Tags', value: 'from-sandbox' },
      { op: 'add', path: '/fields/System.AssignedTo', value: person.email },
    ]);
    expect(res.status).toBe(200);
    const item = (await res.json()) as WorkItem;
    expect(item.fields['System.State']).toBe('Active');
    expect(item.fields['System.Reason']).toBe(
      typeDef(String(item.fields['System.WorkItemType'])).states.find((s) => s.name === 'Active')!.reasons[0],
    );
    expect(String(item.fields['System.Tags'])).toContain('from-sandbox');
    expect(item.fields['System.AssignedTo']).toMatchObject({ uniqueName: person.email, id: person.adoId });
    const again = (await (
      await patch(14, [{ op: 'add', path: '/fields/System.Tags', value: 'second' }])
    ).json()) as WorkItem;
    expect(String(again.fields['System.Tags']).split('; ')).toEqual(
      expect.arrayContaining(['from-sandbox', 'second']),
    );
  });

  it('refuses a stale rev, an unknown state, a read-only field and a non-patch body', async () => {
    expect(
      (
        await patch(15, [
          { op: 'test', path: '/rev', value: 99 },
          { op: 'add', path: '/fields/System.Title', value: 'x' },
        ])
      ).status,
    ).toBe(412);
    const state = await patch(15, [{ op: 'add', path: '/fields/System.State', value: 'Dancing' }]);
    expect(state.status).toBe(400);
    expect((await readError(state)).message).toMatch(/^TF401320/);
    expect(
      (await patch(15, [{ op: 'add', path: '/fields/System.CreatedDate', value: '2020-01-01' }])).status,
    ).toBe(400);
    expect((await patch(15, { op: 'add' })).status).toBe(400);
    const area = await patch(15, [{ op: 'add', path: '/fields/System.AreaPath', value: 'Contoso\\Nowhere' }]);
    expect((await readError(area)).message).toMatch(/^TF401347/);
    // Nothing above was saved.
    expect((await ado.json<List<WorkItem>>('wit/workItems/15/revisions')).count).toBe(
      ado.state.world.workItems[14]!.rev,
    );
  });

  it('refuses a title over 255 characters with TF401324, on update and on create, and saves nothing', async () => {
    const before = await ado.json<WorkItem>('wit/workitems/18');
    const long = `${'Title '.repeat(42)}abcd`;
    expect(long).toHaveLength(256);
    const res = await patch(18, [{ op: 'add', path: '/fields/System.Title', value: long }]);
    expect(res.status).toBe(400);
    expect(await readError(res)).toMatchObject({
      message: "TF401324: Value for field 'System.Title' is too long.",
      typeKey: 'RuleValidationException',
    });
    expect((await ado.json<WorkItem>('wit/workitems/18')).rev).toBe(before.rev);
    // Other string fields have the same limit.
    const ticket = await patch(18, [
      { op: 'add', path: '/fields/Custom.ExternalTicketId', value: 'Z'.repeat(256) },
    ]);
    expect((await readError(ticket)).message).toBe(
      "TF401324: Value for field 'Custom.ExternalTicketId' is too long.",
    );
    const created = await ado.call('wit/workitems/$Task', {
      method: 'POST',
      json: [{ op: 'add', path: '/fields/System.Title', value: long }],
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(created.status).toBe(400);
    expect((await readError(created)).message).toMatch(/^TF401324: Value for field 'System.Title'/);
    // Exactly 255 is fine.
    const ok = await patch(18, [{ op: 'add', path: '/fields/System.Title', value: long.slice(0, 255) }]);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as WorkItem).fields['System.Title']).toHaveLength(255);
  });

  it('keeps System.History on the revision it was written in only', async () => {
    await patch(17, [{ op: 'add', path: '/fields/System.History', value: '<div>Moved to QA</div>' }]);
    const withHistory = await ado.json<WorkItem>('wit/workitems/17');
    expect(withHistory.fields['System.History']).toBe('<div>Moved to QA</div>');
    await patch(17, [{ op: 'add', path: '/fields/Microsoft.VSTS.Common.Priority', value: 1 }]);
    const later = await ado.json<WorkItem>('wit/workitems/17');
    expect(later.fields['System.History']).toBeUndefined();
    expect(later.fields['Microsoft.VSTS.Common.Priority']).toBe(1);
    const revs = await ado.json<List<WorkItem>>('wit/workItems/17/revisions');
    expect(revs.value.at(-2)!.fields['System.History']).toBe('<div>Moved to QA</div>');
  });

  it('validates without saving when validateOnly=true', async () => {
    const before = await ado.json<WorkItem>('wit/workitems/16');
    const res = await patch(
      16,
      [{ op: 'add', path: '/fields/System.Title', value: 'Dry run' }],
      '?validateOnly=true',
    );
    expect(((await res.json()) as WorkItem).fields['System.Title']).toBe('Dry run');
    expect((await ado.json<WorkItem>('wit/workitems/16')).fields['System.Title']).toBe(
      before.fields['System.Title'],
    );
  });
});

describe('updates', () => {
  interface Update {
    rev: number;
    fields?: Record<string, { oldValue?: unknown; newValue?: unknown }>;
    relations?: { added?: { rel: string; url: string }[]; removed?: { rel: string; url: string }[] };
  }

  it('replayed in order, rebuild every revision: fields and relations', async () => {
    const items = ado.state.world.workItems.filter((i) => i.rev >= 4).slice(0, 5);
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) {
      const { value: updates } = await ado.json<{ value: Update[] }>(`wit/workItems/${item.id}/updates`);
      const { value: revisions } = await ado.json<{ value: WorkItem[] }>(
        `wit/workItems/${item.id}/revisions?$expand=relations`,
      );
      expect(updates.map((u) => u.rev)).toEqual(revisions.map((r) => r.rev));
      const fields: Record<string, unknown> = {};
      const relations = new Set<string>();
      for (const [k, update] of updates.entries()) {
        for (const [name, change] of Object.entries(update.fields ?? {})) {
          if (change.oldValue !== undefined) expect(fields[name]).toEqual(change.oldValue);
          if ('newValue' in change) fields[name] = change.newValue;
          else delete fields[name];
        }
        for (const r of update.relations?.added ?? []) relations.add(`${r.rel} ${r.url}`);
        for (const r of update.relations?.removed ?? []) relations.delete(`${r.rel} ${r.url}`);
        const revision = revisions[k]!;
        const bookkeeping = ['System.Rev', 'System.AuthorizedDate', 'System.RevisedDate'];
        const rebuilt = Object.fromEntries(
          Object.entries(fields).filter(([name]) => !bookkeeping.includes(name)),
        );
        expect(rebuilt).toEqual(revision.fields);
        expect([...relations].sort()).toEqual(
          ((revision as { relations?: { rel: string; url: string }[] }).relations ?? [])
            .map((r) => `${r.rel} ${r.url}`)
            .sort(),
        );
        expect(fields['System.Rev']).toBe(update.rev);
      }
    }
  });

  it('pages with $top and $skip, and names a missing update', async () => {
    const item = ado.state.world.workItems.find((i) => i.rev >= 4)!;
    const page = await ado.json<{ count: number; value: Update[] }>(
      `wit/workItems/${item.id}/updates?$top=2&$skip=1`,
    );
    expect(page.value.map((u) => u.rev)).toEqual([2, 3]);
    const missing = await ado.call(`wit/workItems/${item.id}/updates/${item.rev + 5}`);
    expect(missing.status).toBe(404);
  });
});
