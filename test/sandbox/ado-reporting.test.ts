/**
 * The reporting revisions API (GET/POST reporting/workitemrevisions) through real HTTP: every revision of the
 * project exactly once, in change order, batch by batch by watermark (`continuationToken`, `nextLink`,
 * `isLastBatch`), the same revisions as the per-item revisions route, and its filters. The answers' shapes are
 * checked against the official spec in ado-conformance.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTING_BATCH_MAX } from '../../local/sandbox/ado/routes/reporting.ts';
import { type AdoTestSandbox, readError, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';
import { currentRev } from '../../local/sandbox/generator/index.ts';

interface Revision {
  id: number;
  rev: number;
  fields: Record<string, unknown>;
  url: string;
}
interface Batch {
  values: Revision[];
  nextLink: string;
  continuationToken: string;
  isLastBatch: boolean;
}

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 60, seed: 12 });
});
afterAll(() => ado.close());

const PATH = 'wit/reporting/workitemrevisions';

/** Every batch from the start, following `nextLink` as the docs' workflow does. */
async function readAll(first: string): Promise<Batch[]> {
  const batches = [await ado.json<Batch>(first)];
  while (!batches.at(-1)!.isLastBatch) {
    const next = new URL(batches.at(-1)!.nextLink);
    batches.push(await ado.json<Batch>(`/${next.pathname.slice(1)}${next.search}`, { version: null }));
  }
  return batches;
}

const changed = (r: Revision) => Date.parse(String(r.fields['System.ChangedDate']));

describe('GET reporting/workitemrevisions', () => {
  it('answers every revision of the project once, in change order, in batches of at most 200', async () => {
    const batches = await readAll(`${PATH}?$expand=fields&includeIdentityRef=true`);
    const all = batches.flatMap((b) => b.values);
    const world = ado.state.world;
    const expected = world.workItems.reduce((n, i) => n + currentRev(i), 0);
    expect(batches.length).toBe(Math.ceil(expected / REPORTING_BATCH_MAX));
    expect(batches.every((b) => b.values.length <= REPORTING_BATCH_MAX)).toBe(true);
    expect(all).toHaveLength(expected);
    expect(new Set(all.map((r) => `${r.id}/${r.rev}`)).size).toBe(expected);
    for (let i = 1; i < all.length; i++)
      expect(changed(all[i]!)).toBeGreaterThanOrEqual(changed(all[i - 1]!));
    // Each item's revisions come oldest first, and each is the revision the per-item route answers.
    const item = world.workItems.find((i) => i.rev >= 3)!;
    const mine = all.filter((r) => r.id === item.id);
    expect(mine.map((r) => r.rev)).toEqual(mine.map((_, i) => i + 1));
    const perItem = await ado.json<{ value: Revision[] }>(
      `wit/workItems/${item.id}/revisions?$expand=fields`,
    );
    expect(mine.map((r) => r.fields)).toEqual(perItem.value.map((r) => r.fields));
    expect(mine[0]!.url).toMatch(new RegExp(`/_apis/wit/workItems/${item.id}/revisions/1$`));
    // The last batch names where a later read goes on from: nothing new yet.
    const last = batches.at(-1)!;
    const again = await ado.json<Batch>(`${PATH}?continuationToken=${last.continuationToken}`);
    expect(again).toMatchObject({ values: [], isLastBatch: true, continuationToken: last.continuationToken });
  });

  it('goes on from its watermark: a revision made later comes after it, not before', async () => {
    const first = await readAll(PATH);
    const token = first.at(-1)!.continuationToken;
    const patched = await ado.json<{ rev: number }>('wit/workitems/5', {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json-patch+json' },
      json: [{ op: 'add', path: '/fields/System.Title', value: 'Changed after the first read' }],
    });
    const next = await ado.json<Batch>(`${PATH}?continuationToken=${token}`);
    expect(next.values.map((r) => [r.id, r.rev])).toEqual([[5, patched.rev]]);
    expect(next.values[0]!.fields['System.Title']).toBe('Changed after the first read');
    expect(next.isLastBatch).toBe(true);
  });

  it('filters by type, fields, latest only and date, and pages by $maxPageSize', async () => {
    const world = ado.state.world;
    const bugs = world.workItems.filter((i) => i.type === 'Bug');
    const onlyBugs = (await readAll(`${PATH}?types=Bug&fields=System.Title,System.AssignedTo`)).flatMap(
      (b) => b.values,
    );
    expect(new Set(onlyBugs.map((r) => r.id))).toEqual(new Set(bugs.map((i) => i.id)));
    for (const r of onlyBugs) {
      expect(Object.keys(r.fields).every((f) => ['System.Title', 'System.AssignedTo'].includes(f))).toBe(
        true,
      );
      // Identities as the reporting API gives them unless asked for references: "Name <unique name>".
      if (r.fields['System.AssignedTo'] !== undefined)
        expect(r.fields['System.AssignedTo']).toMatch(/^.+ <.+@.+>$/);
    }
    const latest = (await readAll(`${PATH}?includeLatestOnly=true`)).flatMap((b) => b.values);
    expect(latest.map((r) => r.id).sort((a, b) => a - b)).toEqual(world.workItems.map((i) => i.id));
    expect(latest.every((r) => r.rev === currentRev(world.workItems[r.id - 1]!))).toBe(true);
    // Long text (HTML, History) only with $expand=fields.
    expect(latest.some((r) => 'System.Description' in r.fields || 'System.History' in r.fields)).toBe(false);
    const small = await ado.json<Batch>(`${PATH}?$maxPageSize=7`);
    expect(small.values).toHaveLength(7);
    expect(small.isLastBatch).toBe(false);
    const since = changed(small.values[6]!);
    const after = (await readAll(`${PATH}?startDateTime=${new Date(since).toISOString()}`)).flatMap(
      (b) => b.values,
    );
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((r) => changed(r) > since)).toBe(true);
  });

  it('refuses a token with startDateTime, a bad token and an unknown field', async () => {
    const both = await ado.call(`${PATH}?continuationToken=3&startDateTime=2020-01-01T00:00:00Z`);
    expect(both.status).toBe(400);
    expect((await ado.call(`${PATH}?continuationToken=abc`)).status).toBe(400);
    const unknown = await ado.call(`${PATH}?fields=No.Such`);
    expect(unknown.status).toBe(400);
    expect((await readError(unknown)).message).toMatch(/No\.Such/);
    expect((await ado.call(`${PATH}?$maxPageSize=0`)).status).toBe(400);
  });
});

describe('POST reporting/workitemrevisions', () => {
  it('takes the filter in its body and pages by the token in the query', async () => {
    const world = ado.state.world;
    const body = { types: ['User Story'], includeIdentityRef: true };
    const seen: Revision[] = [];
    let token: string | undefined;
    for (;;) {
      const b = await ado.json<Batch>(`${PATH}?$expand=fields${token ? `&continuationToken=${token}` : ''}`, {
        method: 'POST',
        json: body,
      });
      seen.push(...b.values);
      token = b.continuationToken;
      if (b.isLastBatch) break;
    }
    const stories = world.workItems.filter((i) => i.type === 'User Story');
    expect(seen).toHaveLength(stories.reduce((n, i) => n + currentRev(i), 0));
    const assigned = seen.find((r) => r.fields['System.ChangedBy'] !== undefined)!;
    expect(assigned.fields['System.ChangedBy']).toMatchObject({ uniqueName: expect.any(String) });
    const bad = await ado.call(PATH, { method: 'POST', json: { types: 'Bug' } });
    expect(bad.status).toBe(400);
  });
});
