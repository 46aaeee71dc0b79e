/**
 * Comments, generated one at a time from (seed, item, index): paging through several hundred never builds the
 * whole list. Comment k (creation order) has id `commentIdBase + k`, is dated inside the k-th slice of the
 * item's lifetime (so dates ascend with ids), and a few are deleted (visible only with includeDeleted).
 */

import { Purpose, rngFor } from './hash.ts';
import { commentHtml } from './html.ts';
import type { AdoWorkItem, AdoWorld } from './types.ts';
import { isDeletedComment } from './world.ts';

export interface GeneratedComment {
  id: number;
  workItemId: number;
  index: number;
  version: number;
  text: string;
  createdBy: number;
  createdDate: number;
  modifiedBy: number;
  modifiedDate: number;
  isDeleted: boolean;
}

export function commentDate(item: AdoWorkItem, k: number, jitter: number): number {
  const span = item.changedDate - item.createdDate;
  return Math.floor(item.createdDate + (span * (k + 0.5 + (jitter - 0.5) * 0.8)) / item.commentTotal);
}

export function commentDeleted(world: AdoWorld, item: AdoWorkItem, k: number): boolean {
  return k < item.commentTotal && item.commentTotal < 150 && isDeletedComment(world.seed, item.id, k);
}

/** Comments including deleted ones and those added through the API (indexes 0..n-1). */
export function commentSlots(item: AdoWorkItem): number {
  return item.commentTotal + (item.addedComments?.length ?? 0);
}

/** The index of the comment with this id, or -1. */
export function commentIndex(item: AdoWorkItem, id: number): number {
  if (id >= item.commentIdBase && id < item.commentIdBase + item.commentTotal) return id - item.commentIdBase;
  const added = item.addedComments?.findIndex((c) => c.id === id) ?? -1;
  return added < 0 ? -1 : item.commentTotal + added;
}

export function commentAt(world: AdoWorld, item: AdoWorkItem, k: number, baseUrl: string): GeneratedComment {
  const added = item.addedComments?.[k - item.commentTotal];
  if (k >= item.commentTotal && added) {
    const { id, text, createdBy, createdDate } = added;
    return {
      id,
      workItemId: item.id,
      index: k,
      version: 1,
      text,
      createdBy,
      createdDate,
      modifiedBy: createdBy,
      modifiedDate: createdDate,
      isDeleted: false,
    };
  }
  const rnd = rngFor(world.seed, item.id, Purpose.comments, 0x10000 + k);
  const createdDate = commentDate(item, k, rnd.next());
  const author = rnd.int(0, world.people.length - 1);
  const edited = rnd.chance(0.1);
  return {
    id: item.commentIdBase + k,
    workItemId: item.id,
    index: k,
    version: edited ? 2 : 1,
    text: commentHtml(world, item.id, k, baseUrl),
    createdBy: author,
    createdDate,
    modifiedBy: author,
    modifiedDate: edited ? createdDate + rnd.int(60_000, 3_600_000) : createdDate,
    isDeleted: commentDeleted(world, item, k),
  };
}

/** Visible comments created at or before `at` (System.CommentCount of an older revision). */
export function visibleCommentsAt(world: AdoWorld, item: AdoWorkItem, at: number): number {
  let count = 0;
  for (let k = 0; k < item.commentTotal; k++) {
    // Slot k ends no earlier than its comment, so once a slot starts after `at`, later ones do too.
    const slotStart =
      item.createdDate + ((item.changedDate - item.createdDate) * (k + 0.1)) / item.commentTotal;
    if (slotStart > at) break;
    const rnd = rngFor(world.seed, item.id, Purpose.comments, 0x10000 + k);
    if (commentDate(item, k, rnd.next()) <= at && !commentDeleted(world, item, k)) count++;
  }
  return count;
}
