/** Work item comments (7.1-preview.4): paging with continuationToken over more than 200, order, deleted ones. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdoTestSandbox, startAdoSandbox } from '../../local/sandbox/ado/testing.ts';

interface Comment {
  id: number;
  workItemId: number;
  version: number;
  text: string;
  createdBy: { displayName: string; uniqueName: string };
  createdDate: string;
  modifiedDate: string;
  isDeleted: boolean;
  url: string;
}
interface CommentList {
  totalCount: number;
  count: number;
  comments: Comment[];
  continuationToken?: string;
  nextPage?: string;
  url: string;
}

let ado: AdoTestSandbox;
beforeAll(async () => {
  ado = await startAdoSandbox({ items: 300, seed: 9 });
});
afterAll(() => ado.close());

const PREVIEW = '7.1-preview.4';
const page = (id: number, params = '') =>
  ado.json<CommentList>(`wit/workItems/${id}/comments${params}`, { version: PREVIEW });

/** Follows continuation tokens to the end; returns every page. */
async function allPages(id: number, params = ''): Promise<CommentList[]> {
  const pages = [await page(id, params)];
  while (pages.at(-1)!.continuationToken) {
    const token = encodeURIComponent(pages.at(-1)!.continuationToken!);
    pages.push(await page(id, `${params ? `${params}&` : '?'}continuationToken=${token}`));
  }
  return pages;
}

async function commentCount(id: number): Promise<number> {
  const item = await ado.json<{ fields: Record<string, unknown> }>(`wit/workitems/${id}`);
  return Number(item.fields['System.CommentCount']);
}

describe('comments', () => {
  it('pages through more than 200 comments with continuationToken, newest first', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentCount > 200)!;
    const pages = await allPages(item.id);
    expect(pages.length).toBe(Math.ceil(item.commentCount / 200));
    expect(pages.every((p) => p.count === p.comments.length && p.count <= 200)).toBe(true);
    expect(pages[0]!.count).toBe(200);
    expect(pages[0]!.nextPage).toContain(`continuationToken=${pages[0]!.continuationToken}`);
    expect(pages.at(-1)!.continuationToken).toBeUndefined();
    const comments = pages.flatMap((p) => p.comments);
    expect(comments).toHaveLength(await commentCount(item.id));
    expect(pages[0]!.totalCount).toBe(comments.length);
    expect(new Set(comments.map((c) => c.id)).size).toBe(comments.length);
    const ids = comments.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(comments.every((c) => c.workItemId === item.id && c.isDeleted === false)).toBe(true);
  });

  it('follows nextPage as given', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentCount > 200)!;
    const first = await page(item.id, '?$top=150&order=asc');
    const next = await ado.json<CommentList>(first.nextPage!.replace(ado.url, ''), { version: null });
    expect(next.comments[0]!.id).toBe(first.comments.at(-1)!.id + 1);
  });

  it('orders ascending on request and caps $top at 200', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentCount > 200)!;
    const asc = await allPages(item.id, '?order=asc&$top=500');
    expect(asc[0]!.count).toBe(200);
    const ids = asc.flatMap((p) => p.comments.map((c) => c.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const dates = asc.flatMap((p) => p.comments.map((c) => Date.parse(c.createdDate)));
    expect(dates).toEqual([...dates].sort((a, b) => a - b));
    const small = await allPages(item.id, '?$top=75');
    expect(small.map((p) => p.count).slice(0, 2)).toEqual([75, 75]);
    expect(small.flatMap((p) => p.comments).length).toBe(item.commentCount);
  });

  it('answers exactly 200 in one page and 201 in two', async () => {
    const two00 = ado.state.world.workItems.find((i) => i.commentCount === 200)!;
    const one = await allPages(two00.id);
    expect(one).toHaveLength(1);
    expect(one[0]!.count).toBe(200);
    const two01 = ado.state.world.workItems.find((i) => i.commentCount === 201)!;
    expect((await allPages(two01.id)).map((p) => p.count)).toEqual([200, 1]);
  });

  it('hides deleted comments unless includeDeleted=true', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentTotal > i.commentCount)!;
    const visible = await page(item.id);
    expect(visible.totalCount).toBe(await commentCount(item.id));
    const all = await page(item.id, '?includeDeleted=true');
    expect(all.totalCount).toBe(item.commentTotal);
    expect(all.comments.filter((c) => c.isDeleted).length).toBe(item.commentTotal - item.commentCount);
  });

  it('returns HTML comments with mentions, authors and dates', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentCount > 200)!;
    const comments = (await allPages(item.id)).flatMap((p) => p.comments);
    expect(comments.some((c) => /data-vss-mention="version:2\.0,[0-9a-f-]{36}"/.test(c.text))).toBe(true);
    expect(
      comments.some((c) => c.version > 1 && Date.parse(c.modifiedDate) > Date.parse(c.createdDate)),
    ).toBe(true);
    expect(
      comments.every((c) => c.createdBy.uniqueName.includes('@') && c.url.endsWith(`/comments/${c.id}`)),
    ).toBe(true);
  });

  it('answers an item without comments with an empty list, and refuses a forged token', async () => {
    const item = ado.state.world.workItems.find((i) => i.commentTotal === 0)!;
    expect(await page(item.id)).toMatchObject({ totalCount: 0, count: 0, comments: [] });
    const forged = await ado.call(`wit/workItems/${item.id}/comments?continuationToken=garbage`, {
      version: PREVIEW,
    });
    expect(forged.status).toBe(400);
    expect((await ado.call('wit/workItems/999999/comments', { version: PREVIEW })).status).toBe(404);
  });
});
