/**
 * Response bodies in the REST API's shapes (api-version 7.1): WorkItem, WorkItemRelation, Comment,
 * WorkItemClassificationNode, WorkItemType, WorkItemStateColor, WorkItemField2, WorkItemRelationType.
 * URLs are built from the host the request came in on, with the project's GUID as ADO does.
 */

import { guidFrom, hashString } from '../generator/hash.ts';
import {
  type AdoAttachment,
  type AdoLink,
  type AdoWorkItem,
  type AdoWorld,
  ALL_FIELDS,
  adoDate,
  type ClassificationNode,
  COMMON_FIELD_REFS,
  currentRev,
  type FieldDef,
  findField,
  type GeneratedComment,
  identityRef,
  LINK_TYPE_BY_REF,
  LINK_TYPES,
  revisionPlan,
  type TypeDef,
  workItemFields,
} from '../generator/index.ts';

export interface Ctx {
  world: AdoWorld;
  baseUrl: string;
}

const org = (ctx: Ctx) => encodeURIComponent(ctx.world.org);
export const projectApi = (ctx: Ctx) => `${ctx.baseUrl}/${org(ctx)}/${ctx.world.projectId}/_apis`;
export const workItemUrl = (ctx: Ctx, id: number) => `${projectApi(ctx)}/wit/workItems/${id}`;
export const fieldUrl = (ctx: Ctx, ref: string) => `${ctx.baseUrl}/${org(ctx)}/_apis/wit/fields/${ref}`;
export const attachmentApiUrl = (ctx: Ctx, att: AdoAttachment) =>
  `${projectApi(ctx)}/wit/attachments/${att.id}`;

export type Expand = 'none' | 'relations' | 'fields' | 'links' | 'all';

export const NEVER = '9999-01-01T00:00:00Z';

function relationJson(ctx: Ctx, link: AdoLink): Record<string, unknown> {
  if (link.targetId !== null) {
    const attributes: Record<string, unknown> = {
      isLocked: false,
      name: LINK_TYPE_BY_REF.get(link.rel)?.name ?? link.rel,
    };
    if (link.comment) attributes.comment = link.comment;
    return { rel: link.rel, url: workItemUrl(ctx, link.targetId), attributes };
  }
  const when = adoDate(link.createdDate);
  const attributes: Record<string, unknown> = {
    authorizedDate: when,
    id: hashString(`${link.url}`) % 1_000_000,
    resourceCreatedDate: when,
    resourceModifiedDate: when,
    revisedDate: NEVER,
  };
  if (link.name) attributes.name = link.name;
  if (link.comment) attributes.comment = link.comment;
  return { rel: link.rel, url: link.url, attributes };
}

function attachmentRelation(ctx: Ctx, att: AdoAttachment): Record<string, unknown> {
  const when = adoDate(att.createdDate);
  const attributes: Record<string, unknown> = {
    authorizedDate: when,
    id: att.fileId,
    resourceCreatedDate: when,
    resourceModifiedDate: when,
    revisedDate: NEVER,
    resourceSize: att.size,
    name: att.name,
  };
  if (att.comment) attributes.comment = att.comment;
  return { rel: 'AttachedFile', url: attachmentApiUrl(ctx, att), attributes };
}

/** Relations as of a moment (links and attachments added later are not shown in older revisions). */
export function relationsJson(ctx: Ctx, item: AdoWorkItem, asOf?: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const l of item.links) if (asOf === undefined || l.createdDate <= asOf) out.push(relationJson(ctx, l));
  for (const a of item.attachments)
    if (asOf === undefined || a.createdDate <= asOf) out.push(attachmentRelation(ctx, a));
  return out;
}

function itemLinks(ctx: Ctx, item: AdoWorkItem): Record<string, { href: string }> {
  const self = workItemUrl(ctx, item.id);
  return {
    self: { href: self },
    workItemUpdates: { href: `${self}/updates` },
    workItemRevisions: { href: `${self}/revisions` },
    workItemComments: { href: `${self}/comments` },
    html: { href: `${ctx.baseUrl}/${org(ctx)}/${ctx.world.projectId}/_workitems/edit/${item.id}` },
    workItemType: { href: `${projectApi(ctx)}/wit/workItemTypes/${encodeURIComponent(item.type)}` },
    fields: { href: `${projectApi(ctx)}/wit/fields` },
  };
}

export interface WorkItemJsonOptions {
  expand: Expand;
  /** Only these fields (reference names, resolved case-insensitively). */
  fields?: string[];
  /** A revision; current when absent. */
  rev?: number;
  /** Whether `_links` is part of the default answer (single-item GET) or needs `$expand=links|all`. */
  linksByDefault?: boolean;
  /** Revision URLs point at /revisions/{rev}. */
  asRevision?: boolean;
}

export function workItemJson(
  ctx: Ctx,
  item: AdoWorkItem,
  opts: WorkItemJsonOptions,
): Record<string, unknown> {
  const latest = currentRev(item);
  const rev = opts.rev ?? latest;
  const extras = opts.expand === 'all' || opts.expand === 'fields' || !!opts.fields;
  let fields = workItemFields(ctx.world, item, ctx.baseUrl, { rev, extras });
  if (opts.fields) {
    const picked: Record<string, unknown> = {};
    for (const name of opts.fields) {
      const def = findField(name)!;
      if (def.referenceName in fields) picked[def.referenceName] = fields[def.referenceName];
    }
    fields = picked;
  }
  const out: Record<string, unknown> = { id: item.id, rev, fields };
  if (opts.expand === 'relations' || opts.expand === 'all') {
    // Older revisions show the relations they had; the latest shows all.
    const asOf = rev < item.rev ? revisionPlan(ctx.world, item)[rev - 1]?.changedDate : undefined;
    const relations = relationsJson(ctx, item, asOf);
    if (relations.length) out.relations = relations;
  }
  if (opts.expand === 'links' || opts.expand === 'all' || (opts.linksByDefault && opts.expand !== 'fields')) {
    out._links = itemLinks(ctx, item);
  }
  out.url = opts.asRevision ? `${workItemUrl(ctx, item.id)}/revisions/${rev}` : workItemUrl(ctx, item.id);
  return out;
}

export function commentJson(ctx: Ctx, c: GeneratedComment, renderedText: boolean): Record<string, unknown> {
  const who = (i: number) => identityRef(ctx.world, i, ctx.baseUrl);
  return {
    workItemId: c.workItemId,
    id: c.id,
    version: c.version,
    text: c.text,
    ...(renderedText ? { renderedText: c.text } : {}),
    createdBy: who(c.createdBy),
    createdDate: adoDate(c.createdDate),
    modifiedBy: who(c.modifiedBy),
    modifiedDate: adoDate(c.modifiedDate),
    isDeleted: c.isDeleted,
    url: `${workItemUrl(ctx, c.workItemId)}/comments/${c.id}`,
  };
}

const GROUP = { area: 'Areas', iteration: 'Iterations' } as const;
const SEGMENT = { area: 'Area', iteration: 'Iteration' } as const;

/** The node's path below the project root ('' for the root). */
export function relativePath(ctx: Ctx, node: ClassificationNode): string {
  return node.path.slice(ctx.world.project.length + 1);
}

export function nodeJson(ctx: Ctx, node: ClassificationNode, depth: number): Record<string, unknown> {
  const rel = relativePath(ctx, node);
  const encoded = rel ? `/${rel.split('\\').map(encodeURIComponent).join('/')}` : '';
  const self = `${projectApi(ctx)}/wit/classificationNodes/${GROUP[node.structureType]}${encoded}`;
  const out: Record<string, unknown> = {
    id: node.id,
    identifier: node.identifier,
    name: node.name,
    structureType: node.structureType,
    hasChildren: node.children.length > 0,
  };
  if (depth > 0 && node.children.length) out.children = node.children.map((c) => nodeJson(ctx, c, depth - 1));
  // The API's node paths carry the structure segment: \Contoso\Iteration\Release 1.
  out.path = `\\${ctx.world.project}\\${SEGMENT[node.structureType]}${rel ? `\\${rel}` : ''}`;
  if (node.startDate && node.finishDate)
    out.attributes = { startDate: node.startDate, finishDate: node.finishDate };
  const links: Record<string, { href: string }> = { self: { href: self } };
  if (rel) links.parent = { href: self.slice(0, self.lastIndexOf('/')) };
  out._links = links;
  out.url = self;
  return out;
}

const OPERATIONS: Record<string, [string, string][]> = {
  base: [
    ['SupportedOperations.Equals', '='],
    ['SupportedOperations.NotEquals', '<>'],
    ['SupportedOperations.In', 'In'],
    ['SupportedOperations.NotIn', 'Not In'],
    ['SupportedOperations.Ever', 'Was Ever'],
  ],
  ordered: [
    ['SupportedOperations.GreaterThan', '>'],
    ['SupportedOperations.LessThan', '<'],
    ['SupportedOperations.GreaterThanEquals', '>='],
    ['SupportedOperations.LessThanEquals', '<='],
  ],
  text: [
    ['SupportedOperations.Contains', 'Contains'],
    ['SupportedOperations.NotContains', 'Does Not Contain'],
  ],
  words: [
    ['SupportedOperations.ContainsWords', 'Contains Words'],
    ['SupportedOperations.NotContainsWords', 'Does Not Contain Words'],
    ['SupportedOperations.IsEmpty', 'Is Empty'],
    ['SupportedOperations.IsNotEmpty', 'Is Not Empty'],
  ],
  tree: [
    ['SupportedOperations.Under', 'Under'],
    ['SupportedOperations.NotUnder', 'Not Under'],
  ],
};

function operations(def: FieldDef): { referenceName: string; name: string }[] {
  const groups: string[] =
    def.type === 'html' || def.type === 'history'
      ? ['words']
      : def.type === 'treePath'
        ? ['base', 'tree']
        : def.type === 'plainText'
          ? ['text', 'words']
          : def.type === 'boolean'
            ? ['base']
            : def.type === 'string' || def.type === 'identity'
              ? ['base', 'ordered', 'text']
              : ['base', 'ordered'];
  return groups.flatMap((g) => OPERATIONS[g]!.map(([referenceName, name]) => ({ referenceName, name })));
}

export function fieldJson(ctx: Ctx, def: FieldDef): Record<string, unknown> {
  const custom = def.referenceName.startsWith('Custom.');
  const picklist = custom && !!def.picklist;
  return {
    name: def.name,
    referenceName: def.referenceName,
    ...(def.description ? { description: def.description } : {}),
    type: def.type,
    usage: 'workItem',
    readOnly: !!def.readOnly,
    canSortBy: def.type !== 'html' && def.type !== 'history' && def.type !== 'plainText',
    isQueryable: true,
    supportedOperations: operations(def),
    isIdentity: !!def.isIdentity,
    isPicklist: picklist,
    isPicklistSuggested: false,
    ...(picklist ? { picklistId: guidFrom(ctx.world.seed, hashString(def.referenceName)) } : {}),
    isLocked: !custom,
    url: fieldUrl(ctx, def.referenceName),
  };
}

export function typeFieldRefs(type: TypeDef): string[] {
  return [...new Set([...COMMON_FIELD_REFS, ...type.fields])];
}

export function typeJson(ctx: Ctx, type: TypeDef): Record<string, unknown> {
  const fields = typeFieldRefs(type).map((ref) => {
    const def = ALL_FIELDS.find((x) => x.referenceName === ref)!;
    const out: Record<string, unknown> = {
      alwaysRequired: ref === 'System.Title' || ref === 'System.State',
      dependentFields: [],
      referenceName: def.referenceName,
      name: def.name,
      url: fieldUrl(ctx, def.referenceName),
    };
    if (def.picklist) out.allowedValues = def.picklist;
    if (ref === 'System.State') {
      out.allowedValues = type.states.map((s) => s.name);
      out.defaultValue = type.states[0]!.name;
    }
    return out;
  });
  const transitions: Record<string, { to: string; actions: string[] | null }[]> = {
    '': [{ to: type.states[0]!.name, actions: null }],
  };
  for (const from of type.states) {
    transitions[from.name] = type.states
      .filter((to) => to !== from)
      .map((to) => ({
        to: to.name,
        actions: to.category === 'InProgress' ? ['Microsoft.VSTS.Actions.StartWork'] : null,
      }));
  }
  const self = `${projectApi(ctx)}/wit/workItemTypes/${encodeURIComponent(type.name)}`;
  return {
    name: type.name,
    referenceName: type.referenceName,
    description: type.description,
    color: type.color,
    icon: {
      id: type.icon,
      url: `${ctx.baseUrl}/${org(ctx)}/_apis/wit/workItemIcons/${type.icon}?color=${type.color}&v=2`,
    },
    isDisabled: false,
    xmlForm: `<FORM><Layout HideReadOnlyEmptyFields="true" HideControlBorders="true"><Group><Column PercentWidth="100"><Control FieldName="System.Title" Type="FieldControl" ControlFontSize="large" /></Column></Group></Layout></FORM>`,
    fields,
    fieldInstances: fields,
    transitions: Object.fromEntries(
      Object.entries(transitions).map(([k, v]) => [k, v.map((t) => (t.actions ? t : { to: t.to }))]),
    ),
    states: type.states.map(stateJson),
    _links: { self: { href: self } },
    url: self,
  };
}

export function stateJson(s: TypeDef['states'][number]): Record<string, unknown> {
  return { name: s.name, color: s.color, category: s.category };
}

export function relationTypesJson(ctx: Ctx): Record<string, unknown>[] {
  const base = `${ctx.baseUrl}/${org(ctx)}/_apis/wit/workItemRelationTypes`;
  const links = LINK_TYPES.map((l) => ({
    referenceName: l.referenceName,
    name: l.name,
    attributes: {
      usage: 'workItemLink',
      editable: false,
      enabled: true,
      acyclic: l.topology !== 'network',
      directional: l.topology !== 'network',
      singleTarget: l.referenceName === 'System.LinkTypes.Hierarchy-Reverse',
      topology: l.topology,
    },
    url: `${base}/${l.referenceName}`,
  }));
  const resources = [
    ['AttachedFile', 'Attached File'],
    ['Hyperlink', 'Hyperlink'],
    ['ArtifactLink', 'Artifact Link'],
  ].map(([referenceName, name]) => ({
    referenceName,
    name,
    attributes: { usage: 'resourceLink', editable: false, enabled: true },
    url: `${base}/${referenceName}`,
  }));
  return [...links, ...resources];
}
