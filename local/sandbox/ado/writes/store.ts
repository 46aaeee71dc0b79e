/**
 * Bookkeeping for writes, per world (a reset or reseed starts afresh): the next comment id and attachment file
 * id (past every generated one, so ids stay unique across the organisation), and uploaded files.
 */
import { guidFrom } from '../../generator/hash.ts';
import { type AdoAttachment, type AdoWorld, contentTypeFor } from '../../generator/index.ts';

interface Counters {
  nextCommentId: number;
  nextFileId: number;
  uploads: number;
}

const counters = new WeakMap<AdoWorld, Counters>();

function countersOf(world: AdoWorld): Counters {
  let c = counters.get(world);
  if (!c) {
    let nextComment = 1;
    for (const i of world.workItems) nextComment = Math.max(nextComment, i.commentIdBase + i.commentTotal);
    let maxFile = 0;
    for (const a of world.attachments.values()) maxFile = Math.max(maxFile, a.fileId);
    c = { nextCommentId: nextComment, nextFileId: maxFile + 1, uploads: 0 };
    counters.set(world, c);
  }
  return c;
}

export function nextCommentId(world: AdoWorld): number {
  return countersOf(world).nextCommentId++;
}

/**
 * Stores an uploaded file, downloadable at once through the attachment route (as on the service, before any
 * work item links it). workItemId stays 0 until a relation attaches it.
 */
export function storeUpload(world: AdoWorld, name: string, bytes: Buffer, now: number): AdoAttachment {
  const c = countersOf(world);
  const att: AdoAttachment = {
    id: guidFrom(world.seed, 0x0a0d, ++c.uploads),
    fileId: c.nextFileId++,
    name,
    size: bytes.length,
    contentType: contentTypeFor(name),
    workItemId: 0,
    createdDate: now,
    comment: null,
    inline: false,
    bytes,
  };
  world.attachments.set(att.id, att);
  return att;
}

/** When the next revision of an item is dated: now, but always after its last change. */
export function nextChangeDate(lastChange: number, now = Date.now()): number {
  return Math.max(now, lastChange + 1);
}
