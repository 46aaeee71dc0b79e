/**
 * Relation operations of a JSON Patch (PATCH workitems/{id}, POST workitems/$Type):
 *  - `add /relations/-` with {rel, url, attributes.comment}: a work item link (any link type, its `rel` matched
 *    case-insensitively as the service does), an AttachedFile (an uploaded or existing attachment's URL) or a
 *    Hyperlink;
 *  - `remove /relations/{index}`, the index into the relations as GET $expand=relations lists them (links,
 *    then attached files).
 * Operations apply in order to a working copy, as JSON Patch does, and the whole patch is validated before
 * anything changes. A work item link is written on both ends, as the service keeps them: the other item shows
 * the opposite end, without a revision of its own (the service records a link change made from the other end
 * as an update that does not increment rev: https://github.com/Sedeniono/ADO-History-Diff, src/RevisionUpdates.js).
 */
import {
  type AdoAttachment,
  type AdoLink,
  type AdoWorkItem,
  LINK_TYPE_BY_REF,
  LINK_TYPES,
} from '../../generator/index.ts';
import type { AdoState } from '../state.ts';
import { WriteErrors } from './errors.ts';

export interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
}

export interface RelationPlan {
  /** Whether the patch adds or removes any relation. */
  changes: boolean;
  /** Applies the changes, dated `when` (the time of the item's new revision). */
  apply(when: number): void;
}

const PARENT = 'System.LinkTypes.Hierarchy-Reverse';
const CHILD = 'System.LinkTypes.Hierarchy-Forward';

type Entry = { link: AdoLink; file?: undefined } | { file: AdoAttachment; link?: undefined };

export const isRelationPath = (path: string) => /^\/relations(\/|$)/i.test(path);

function linkType(rel: string) {
  const lower = rel.toLowerCase();
  return LINK_TYPES.find((l) => l.referenceName.toLowerCase() === lower);
}

/** The work item id in a work item URL (`.../_apis/wit/workItems/12`), or null. */
function workItemIdOf(url: string): number | null {
  const m = /\/_apis\/wit\/workitems\/(\d+)\/?(?:\?.*)?$/i.exec(url);
  return m ? Number(m[1]) : null;
}

/** The attachment GUID in an attachment URL (`.../_apis/wit/attachments/{guid}?fileName=...`), or null. */
function attachmentIdOf(url: string): string | null {
  const m = /\/_apis\/wit\/attachments\/([0-9a-f-]{36})(?:[/?].*)?$/i.exec(url);
  return m ? m[1]!.toLowerCase() : null;
}

/** Whether `descendant` sits below `ancestor` in the current hierarchy. */
function isBelow(state: AdoState, descendant: number, ancestor: number): boolean {
  const seen = new Set<number>();
  let at: number | null = descendant;
  while (at !== null && !seen.has(at)) {
    if (at === ancestor) return true;
    seen.add(at);
    at = state.world.workItems[at - 1]?.parentId ?? null;
  }
  return false;
}

function comment(value: Record<string, unknown>): string | null {
  const attrs = value.attributes;
  if (attrs && typeof attrs === 'object') {
    const c = (attrs as Record<string, unknown>).comment;
    if (typeof c === 'string' && c !== '') return c;
  }
  return null;
}

function newEntry(state: AdoState, item: AdoWorkItem, working: Entry[], raw: unknown): Entry {
  if (!raw || typeof raw !== 'object') {
    throw WriteErrors.badRelation('The value of a relation operation must be an object with rel and url.');
  }
  const value = raw as Record<string, unknown>;
  const rel = typeof value.rel === 'string' ? value.rel : '';
  const url = typeof value.url === 'string' ? value.url : '';
  if (!rel || !url) throw WriteErrors.badRelation('A relation needs both rel and url.');
  const note = comment(value);
  if (rel.toLowerCase() === 'attachedfile') {
    const stored = state.world.attachments.get(attachmentIdOf(url) ?? '');
    if (!stored) throw WriteErrors.unknownAttachment(url);
    return { file: { ...stored, workItemId: item.id, comment: note, inline: false } };
  }
  if (rel.toLowerCase() === 'hyperlink') {
    if (working.some((e) => e.link?.rel === 'Hyperlink' && e.link.url === url)) {
      throw WriteErrors.badRelation(`The hyperlink ${url} is already on work item ${item.id}.`);
    }
    return { link: { rel: 'Hyperlink', targetId: null, url, name: null, comment: note, createdDate: 0 } };
  }
  const type = linkType(rel);
  if (!type) {
    throw WriteErrors.badRelation(
      rel.toLowerCase() === 'artifactlink'
        ? 'The Azure DevOps sandbox does not support adding ArtifactLink relations.'
        : `The relation type ${rel} does not exist.`,
    );
  }
  const target = workItemIdOf(url);
  if (target === null) throw WriteErrors.badRelation(`The URL ${url} is not a work item URL.`);
  if (!state.world.workItems[target - 1]) throw WriteErrors.missingTarget(target);
  if (target === item.id) throw WriteErrors.selfLink(item.id);
  const ref = type.referenceName;
  if (working.some((e) => e.link?.targetId === target && e.link.rel === ref)) {
    throw WriteErrors.duplicateLink(type.name, item.id, target);
  }
  if (ref === PARENT) {
    if (working.some((e) => e.link?.rel === PARENT)) throw WriteErrors.oneParent('Parent', item.id, target);
    if (isBelow(state, target, item.id)) throw WriteErrors.circular(item.id, target);
  }
  if (ref === CHILD) {
    if (state.world.workItems[target - 1]!.parentId !== null) {
      throw WriteErrors.oneParent('Child', item.id, target);
    }
    if (isBelow(state, item.id, target)) throw WriteErrors.circular(item.id, target);
  }
  return { link: { rel: ref, targetId: target, url: null, name: null, comment: note, createdDate: 0 } };
}

/** Validates the relation operations against the item and says what applying them does. */
export function planRelations(state: AdoState, item: AdoWorkItem, ops: PatchOp[]): RelationPlan {
  const original: Entry[] = [
    ...item.links.map((link) => ({ link })),
    ...item.attachments.map((file) => ({ file })),
  ];
  const working = [...original];
  for (const op of ops) {
    const name = String(op.op ?? '').toLowerCase();
    const rest = op.path.replace(/^\/relations/i, '');
    if (name === 'add' && /^\/(-|\d+)$/.test(rest)) {
      working.push(newEntry(state, item, working, op.value));
    } else if (name === 'remove' && /^\/\d+$/.test(rest)) {
      const index = Number(rest.slice(1));
      if (index >= working.length) {
        throw WriteErrors.badRelation(
          `The relation index ${index} is out of range for work item ${item.id}.`,
        );
      }
      working.splice(index, 1);
    } else {
      throw WriteErrors.badRelation(`The sandbox does not support the operation '${name}' on '${op.path}'.`);
    }
  }
  const removed = original.filter((e) => !working.includes(e));
  const added = working.filter((e) => !original.includes(e));
  return {
    changes: removed.length + added.length > 0,
    apply(when) {
      for (const e of removed) {
        if (e.file) item.attachments.splice(item.attachments.indexOf(e.file), 1);
        else unlink(state, item, e.link);
      }
      for (const e of added) {
        if (e.file) item.attachments.push({ ...e.file, createdDate: when });
        else link(state, item, { ...e.link, createdDate: when });
      }
    },
  };
}

function link(state: AdoState, item: AdoWorkItem, l: AdoLink): void {
  item.links.push(l);
  if (l.targetId === null) return;
  const other = state.world.workItems[l.targetId - 1]!;
  other.links.push({ ...l, rel: LINK_TYPE_BY_REF.get(l.rel)!.opposite, targetId: item.id });
  if (l.rel === PARENT) item.parentId = other.id;
  if (l.rel === CHILD) other.parentId = item.id;
}

function unlink(state: AdoState, item: AdoWorkItem, l: AdoLink): void {
  item.links.splice(item.links.indexOf(l), 1);
  if (l.targetId === null) return;
  const other = state.world.workItems[l.targetId - 1]!;
  const opposite = LINK_TYPE_BY_REF.get(l.rel)!.opposite;
  const back = other.links.findIndex((x) => x.rel === opposite && x.targetId === item.id);
  if (back >= 0) other.links.splice(back, 1);
  if (l.rel === PARENT) item.parentId = null;
  if (l.rel === CHILD) other.parentId = null;
}
