/**
 * An item's `fields` object as the REST API returns it, current or as of a revision: identities as
 * IdentityRefs, dates in .NET's trimmed ISO form, HTML and test fields generated on demand, PATCHed values on
 * top. `baseUrl` is where the sandbox is reached (identity and image URLs point there).
 */
import { type ClassificationNode, flatten } from './classification.ts';
import { visibleCommentsAt } from './comments.ts';
import { type HtmlFields, htmlFields } from './html.ts';
import { CUSTOM_FIELDS, findField, type StateCategory, typeDef } from './process.ts';
import { categoryDates, type RevisionState, revisionPlan } from './revisions.ts';
import { type TestFields, testFields } from './steps.ts';
import type { AdoWorkItem, AdoWorld } from './types.ts';

export interface IdentityRef {
  displayName: string;
  url: string;
  _links: { avatar: { href: string } };
  id: string;
  uniqueName: string;
  imageUrl: string;
  descriptor: string;
}

/** .NET's round-trip format: milliseconds with trailing zeros dropped (`…:16.6Z`, `…:16Z`). */
export function adoDate(ms: number): string {
  return new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
}

export function identityRef(world: AdoWorld, index: number, baseUrl: string): IdentityRef {
  const p = world.people[index]!;
  const descriptor = `aad.${Buffer.from(p.adoId).toString('base64').replace(/=+$/, '')}`;
  const org = encodeURIComponent(world.org);
  return {
    displayName: p.displayName,
    url: `${baseUrl}/${org}/_apis/Identities/${p.adoId}`,
    _links: { avatar: { href: `${baseUrl}/${org}/_apis/GraphProfile/MemberAvatars/${descriptor}` } },
    id: p.adoId,
    uniqueName: p.email,
    imageUrl: `${baseUrl}/${org}/_api/_common/identityImage?id=${p.adoId}`,
    descriptor,
  };
}

interface Derived {
  plan: RevisionState[];
  html: HtmlFields;
  test: TestFields;
}

const NO_HTML: HtmlFields = {
  description: null,
  acceptanceCriteria: null,
  reproSteps: null,
  systemInfo: null,
};
const NO_TEST: TestFields = { steps: null, parameters: null, localDataSource: null };

/** A small per-world cache: a batch or a revisions list asks for the same item's content several times. */
const caches = new WeakMap<AdoWorld, Map<string, Derived>>();

function derived(world: AdoWorld, item: AdoWorkItem, baseUrl: string): Derived {
  let cache = caches.get(world);
  if (!cache) {
    cache = new Map();
    caches.set(world, cache);
  }
  const key = `${item.id}|${baseUrl}`;
  const hit = cache.get(key);
  if (hit) return hit;
  // Items created through the API hold only what their creator gave them.
  const created = !!item.createdFields;
  const value = {
    plan: revisionPlan(world, item),
    html: created ? NO_HTML : htmlFields(world, item, baseUrl),
    test: created ? NO_TEST : testFields(world, item),
  };
  // Created items cost nothing to derive, and a validateOnly create must not leave its id behind in the cache.
  if (created) return value;
  if (cache.size >= 512) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
  return value;
}

const nodeMaps = new WeakMap<AdoWorld, Map<string, ClassificationNode>>();

/** Area or iteration node by work-item path (case-insensitive; both trees, keyed by type). */
export function nodeByPath(
  world: AdoWorld,
  type: 'area' | 'iteration',
  path: string,
): ClassificationNode | undefined {
  let map = nodeMaps.get(world);
  if (!map) {
    map = new Map();
    for (const n of flatten(world.areas)) map.set(`area|${n.path.toLowerCase()}`, n);
    for (const n of flatten(world.iterations.root)) map.set(`iteration|${n.path.toLowerCase()}`, n);
    nodeMaps.set(world, map);
  }
  return map.get(`${type}|${path.toLowerCase()}`);
}

/** The item's current revision number (generated revisions plus PATCHes). */
export function currentRev(item: AdoWorkItem): number {
  return item.rev + (item.updates?.length ?? 0);
}

/** The latest PATCHed value of a field (null = cleared), or undefined when never PATCHed. */
export function patchedValue(item: AdoWorkItem, ref: string): unknown {
  if (!item.updates) return undefined;
  for (let i = item.updates.length - 1; i >= 0; i--) {
    const f = item.updates[i]!.fields;
    if (ref in f) return f[ref];
  }
  return undefined;
}

const BOARD_TYPES = new Set(['Epic', 'Feature', 'User Story', 'Bug']);

export interface FieldsOptions {
  /** A revision number; the current state when absent. */
  rev?: number;
  /** Add the bookkeeping fields `$expand=fields|all` returns (System.Id, Rev, AreaId, ...). */
  extras?: boolean;
}

export function workItemFields(
  world: AdoWorld,
  item: AdoWorkItem,
  baseUrl: string,
  opts: FieldsOptions = {},
): Record<string, unknown> {
  const latest = currentRev(item);
  const rev = Math.min(opts.rev ?? latest, latest);
  const { plan, html, test } = derived(world, item, baseUrl);
  const genRev = Math.min(rev, item.rev);
  const r = plan[genRev - 1]!;
  const who = (i: number) => identityRef(world, i, baseUrl);
  const f: Record<string, unknown> = {};
  const area = nodeByPath(world, 'area', item.areaPath);
  const iteration = nodeByPath(world, 'iteration', r.iterationPath);
  if (opts.extras) {
    f['System.Id'] = item.id;
    f['System.AreaId'] = area?.id;
    f['System.NodeName'] = area?.name;
  }
  f['System.AreaPath'] = item.areaPath;
  f['System.TeamProject'] = world.project;
  if (opts.extras) {
    f['System.Rev'] = genRev;
    f['System.AuthorizedDate'] = adoDate(r.changedDate);
    const next = plan[genRev];
    f['System.RevisedDate'] = genRev < item.rev && next ? adoDate(next.changedDate) : '9999-01-01T00:00:00Z';
    f['System.IterationId'] = iteration?.id;
  }
  f['System.IterationPath'] = r.iterationPath;
  f['System.WorkItemType'] = item.type;
  f['System.State'] = r.state;
  f['System.Reason'] = r.reason;
  if (r.assignedTo >= 0) f['System.AssignedTo'] = who(r.assignedTo);
  f['System.CreatedDate'] = adoDate(item.createdDate);
  f['System.CreatedBy'] = who(item.createdBy);
  f['System.ChangedDate'] = adoDate(r.changedDate);
  f['System.ChangedBy'] = who(r.changedBy);
  f['System.CommentCount'] =
    genRev === item.rev ? item.commentCount : visibleCommentsAt(world, item, r.changedDate);
  f['System.Title'] = r.title;
  const category = typeDef(item.type).states.find((s) => s.name === r.state)?.category ?? 'Proposed';
  if (BOARD_TYPES.has(item.type) && category !== 'Removed') {
    f['System.BoardColumn'] = r.state;
    f['System.BoardColumnDone'] = false;
  }
  const num = (ref: string, v: number | null) => {
    if (v !== null) f[ref] = v;
  };
  const date = (ref: string, v: number | null) => {
    if (v !== null) f[ref] = adoDate(v);
  };
  num('Microsoft.VSTS.Scheduling.StoryPoints', item.storyPoints);
  num('Microsoft.VSTS.Scheduling.Effort', item.effort);
  num('Microsoft.VSTS.Scheduling.OriginalEstimate', item.originalEstimate);
  num('Microsoft.VSTS.Scheduling.RemainingWork', item.remainingWork);
  num('Microsoft.VSTS.Scheduling.CompletedWork', item.completedWork);
  date('Microsoft.VSTS.Scheduling.StartDate', item.startDate);
  date('Microsoft.VSTS.Scheduling.TargetDate', item.targetDate);
  date('Microsoft.VSTS.Scheduling.DueDate', item.dueDate);
  f['Microsoft.VSTS.Common.StateChangeDate'] = adoDate(r.stateChangeDate);
  const reached = categoryDates(item, plan, genRev);
  const at = (c: StateCategory) => ['Proposed', 'InProgress', 'Resolved', 'Completed', 'Removed'].indexOf(c);
  const stamp = (name: string, c: StateCategory) => {
    const d = reached[c];
    if (d && at(category) >= at(c) && category !== 'Removed') {
      f[`Microsoft.VSTS.Common.${name}Date`] = adoDate(d.date);
      f[`Microsoft.VSTS.Common.${name}By`] = who(d.by);
    }
  };
  stamp('Activated', 'InProgress');
  stamp('Resolved', 'Resolved');
  stamp('Closed', 'Completed');
  num('Microsoft.VSTS.Common.Priority', r.priority);
  if (item.severity) f['Microsoft.VSTS.Common.Severity'] = item.severity;
  if (item.valueArea) f['Microsoft.VSTS.Common.ValueArea'] = item.valueArea;
  if (item.risk) f['Microsoft.VSTS.Common.Risk'] = item.risk;
  if (item.activity) f['Microsoft.VSTS.Common.Activity'] = item.activity;
  num('Microsoft.VSTS.Common.BusinessValue', item.businessValue);
  num('Microsoft.VSTS.Common.TimeCriticality', item.timeCriticality);
  if (item.automationStatus) f['Microsoft.VSTS.TCM.AutomationStatus'] = item.automationStatus;
  if (item.custom) {
    for (const def of CUSTOM_FIELDS) {
      const v = item.custom[def.referenceName];
      if (v === undefined) continue;
      f[def.referenceName] = def.type === 'identity' ? who(v as number) : v;
    }
  }
  if (html.description !== null) f['System.Description'] = html.description;
  if (html.acceptanceCriteria !== null)
    f['Microsoft.VSTS.Common.AcceptanceCriteria'] = html.acceptanceCriteria;
  if (html.reproSteps !== null) f['Microsoft.VSTS.TCM.ReproSteps'] = html.reproSteps;
  if (html.systemInfo !== null) f['Microsoft.VSTS.TCM.SystemInfo'] = html.systemInfo;
  if (test.steps !== null) f['Microsoft.VSTS.TCM.Steps'] = test.steps;
  if (test.parameters !== null) f['Microsoft.VSTS.TCM.Parameters'] = test.parameters;
  if (test.localDataSource !== null) f['Microsoft.VSTS.TCM.LocalDataSource'] = test.localDataSource;
  if (item.tags) f['System.Tags'] = item.tags;
  if (item.parentId !== null) f['System.Parent'] = item.parentId;
  for (const [ref, value] of Object.entries(item.createdFields ?? {})) {
    if (ref === 'System.History' && rev !== 1) continue;
    f[ref] = findField(ref)?.type === 'identity' && typeof value === 'number' ? who(value) : value;
  }

  // PATCHed revisions on top of the generated ones.
  for (const u of item.updates ?? []) {
    if (u.rev > rev) break;
    delete f['System.History'];
    for (const [ref, value] of Object.entries(u.fields)) {
      // History is what was said in that revision, not a value that carries over.
      if (ref === 'System.History' && u.rev !== rev) continue;
      if (value === null || value === undefined) delete f[ref];
      else f[ref] = findField(ref)?.type === 'identity' && typeof value === 'number' ? who(value) : value;
    }
    f['System.ChangedDate'] = adoDate(u.changedDate);
    f['System.ChangedBy'] = who(u.changedBy);
    if (opts.extras) {
      f['System.Rev'] = u.rev;
      f['System.AuthorizedDate'] = adoDate(u.changedDate);
    }
  }
  if (opts.extras) {
    // PATCHes may have moved the item.
    f['System.AreaId'] = nodeByPath(world, 'area', String(f['System.AreaPath']))?.id;
    f['System.NodeName'] = nodeByPath(world, 'area', String(f['System.AreaPath']))?.name;
    f['System.IterationId'] = nodeByPath(world, 'iteration', String(f['System.IterationPath']))?.id;
  }
  if (opts.extras && rev < latest && rev >= item.rev) {
    const next = item.updates?.find((u) => u.rev === rev + 1);
    if (next) f['System.RevisedDate'] = adoDate(next.changedDate);
  }
  if (opts.extras && rev === item.rev && rev < latest && item.updates?.[0]) {
    f['System.RevisedDate'] = adoDate(item.updates[0].changedDate);
  }
  return f;
}

/**
 * A queryable field's current value (PATCHes included), in comparable form: dates as epoch ms, identities as
 * person indexes (-1 for none), absent values as null. Undefined for fields this accessor does not cover.
 */
export function currentValue(item: AdoWorkItem, ref: string): unknown {
  const patched = patchedValue(item, ref);
  if (patched !== undefined) {
    if (patched === null) return ref === 'System.AssignedTo' ? -1 : null;
    const def = findField(ref);
    return def?.type === 'dateTime' && typeof patched === 'string' ? Date.parse(patched) : patched;
  }
  switch (ref) {
    case 'System.Id':
      return item.id;
    case 'System.Title':
      return item.title;
    case 'System.State':
      return item.state;
    case 'System.Reason':
      return item.reason;
    case 'System.WorkItemType':
      return item.type;
    case 'System.AreaPath':
      return item.areaPath;
    case 'System.IterationPath':
      return item.iterationPath;
    case 'System.Tags':
      return item.tags;
    case 'System.AssignedTo':
      return item.assignedTo;
    case 'System.CreatedBy':
      return item.createdBy;
    case 'System.ChangedBy':
      return item.updates?.length ? item.updates.at(-1)!.changedBy : item.changedBy;
    case 'System.CreatedDate':
      return item.createdDate;
    case 'System.ChangedDate':
      return item.updates?.length ? item.updates.at(-1)!.changedDate : item.changedDate;
    case 'System.Rev':
      return currentRev(item);
    case 'System.CommentCount':
      return item.commentCount;
    case 'System.Parent':
      return item.parentId;
    case 'Microsoft.VSTS.Common.Priority':
      return item.priority;
    case 'Microsoft.VSTS.Common.Severity':
      return item.severity;
    case 'Microsoft.VSTS.Scheduling.StoryPoints':
      return item.storyPoints;
    default:
      if (ref.startsWith('Custom.')) return item.custom?.[ref] ?? null;
      return undefined;
  }
}
