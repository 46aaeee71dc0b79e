/**
 * ADO work item links -> Jira issue links.
 *
 * A relation sits on item X and points at item Y. `outward: true` means X is the subject of the Jira link
 * type's outward phrase ("X blocks Y", "X duplicates Y", "X tests Y"); `outward: false` means Y is.
 *
 * | ADO relation (on X, to Y)                     | ADO reads            | Jira link                 |
 * |-----------------------------------------------|----------------------|---------------------------|
 * | System.LinkTypes.Hierarchy-Forward / -Reverse | Y is X's child/parent | none: the parent field    |
 * | System.LinkTypes.Related                      | X related to Y       | Relates                   |
 * | System.LinkTypes.Duplicate-Forward            | Y is a duplicate of X | Duplicate: Y duplicates X |
 * | System.LinkTypes.Duplicate-Reverse            | X is a duplicate of Y | Duplicate: X duplicates Y |
 * | System.LinkTypes.Dependency-Forward           | Y is X's successor   | Blocks: X blocks Y        |
 * | System.LinkTypes.Dependency-Reverse           | Y is X's predecessor | Blocks: Y blocks X        |
 * | Microsoft.VSTS.Common.TestedBy-Forward        | X is tested by Y     | Tests: Y tests X          |
 * | Microsoft.VSTS.Common.TestedBy-Reverse        | X tests Y            | Tests: X tests Y          |
 * | Microsoft.VSTS.Common.Affects-Forward/Reverse | X affects Y / back   | Relates                   |
 * | anything else (shared steps, hyperlinks, commits, attachments) | | none                      |
 *
 * Predecessor blocks successor: the work that must finish first is what holds the other up.
 * Relates reads the same both ways, so its two ends are one link whichever item carries it.
 */

export interface JiraLinkKind {
  /** The Jira issue link type name. */
  name: string;
  /** Whether the item carrying the relation is the subject of the type's outward phrase. */
  outward: boolean;
}

export type LinkMapping = JiraLinkKind | 'hierarchy' | undefined;

export const LINK_TABLE: Readonly<Record<string, JiraLinkKind | 'hierarchy'>> = {
  'System.LinkTypes.Hierarchy-Forward': 'hierarchy',
  'System.LinkTypes.Hierarchy-Reverse': 'hierarchy',
  'System.LinkTypes.Related': { name: 'Relates', outward: true },
  'System.LinkTypes.Duplicate-Forward': { name: 'Duplicate', outward: false },
  'System.LinkTypes.Duplicate-Reverse': { name: 'Duplicate', outward: true },
  'System.LinkTypes.Dependency-Forward': { name: 'Blocks', outward: true },
  'System.LinkTypes.Dependency-Reverse': { name: 'Blocks', outward: false },
  'Microsoft.VSTS.Common.TestedBy-Forward': { name: 'Tests', outward: false },
  'Microsoft.VSTS.Common.TestedBy-Reverse': { name: 'Tests', outward: true },
  'Microsoft.VSTS.Common.Affects-Forward': { name: 'Relates', outward: true },
  'Microsoft.VSTS.Common.Affects-Reverse': { name: 'Relates', outward: false },
};

/** Link types whose two phrases are the same, so direction carries no meaning. */
const SYMMETRIC = new Set(['relates']);
const FALLBACK_TYPE = 'Relates';
const BY_LOWER = new Map(Object.entries(LINK_TABLE).map(([rel, m]) => [rel.toLowerCase(), m]));

/**
 * The Jira link of an ADO relation: LINK_TABLE's, with the type a confirmed mapping names instead (keys
 * matched case-insensitively). The direction stays the table's: the confirmed record names a type only, and
 * which end is the subject follows from the ADO relation.
 */
export function linkTypeFor(adoRel: string, confirmed: Readonly<Record<string, string>> = {}): LinkMapping {
  const rel = adoRel.trim().toLowerCase();
  const kind = BY_LOWER.get(rel);
  if (kind === undefined || kind === 'hierarchy') return kind;
  const key = Object.keys(confirmed).find((k) => k.trim().toLowerCase() === rel);
  const name = key === undefined ? undefined : confirmed[key]?.trim();
  return name ? { name, outward: kind.outward } : kind;
}

/**
 * ADO relations that are their own reverse (Related on both ends): one link whichever end carries it, so its
 * ends are put in a fixed order even when it is mapped to a directional Jira type.
 */
const selfReverse = (adoRel: string) => !/-(forward|reverse)$/i.test(adoRel.trim());

export interface SourceRelation {
  rel: string;
  url: string;
  attributes?: Record<string, unknown>;
}

export interface SourceItemRelations {
  id: number;
  relations?: readonly SourceRelation[];
  fields?: Readonly<Record<string, unknown>>;
}

/**
 * One Jira link to create: reads "`from` <outward phrase> `to`" ("from blocks to"). Jira's POST /issueLink
 * takes the subject of the outward phrase as `inwardIssue` (`{inwardIssue: from, outwardIssue: to}` shows
 * "from blocks to"), which the field names do not suggest.
 */
export interface PlannedLink {
  type: string;
  from: number;
  to: number;
  /** The ADO link comment, for the Jira link's comment. */
  comment?: string;
}

/** The work item id at the end of a relation URL (`.../_apis/wit/workItems/123`), or undefined. */
export function workItemIdFromUrl(url: string): number | undefined {
  const m = /\/_apis\/wit\/workitems\/(\d+)(?:[/?#]|$)/i.exec(url);
  const id = m ? Number(m[1]) : Number.NaN;
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** The parent's id: the Hierarchy-Reverse relation, else the System.Parent field. */
export function parentIdFrom(item: SourceItemRelations): number | undefined {
  for (const r of item.relations ?? []) {
    if (r.rel.toLowerCase() === 'system.linktypes.hierarchy-reverse') {
      const id = workItemIdFromUrl(r.url);
      if (id !== undefined) return id;
    }
  }
  const parent = item.fields?.['System.Parent'];
  return typeof parent === 'number' && Number.isSafeInteger(parent) && parent > 0 ? parent : undefined;
}

export interface LinkPlanOptions {
  /**
   * The site's link type names. A mapped type the site lacks (Tests comes with test-management apps) is
   * created as Relates when the site has it, else dropped; either way once as a warning.
   */
  availableTypes?: readonly string[];
  /** The project's confirmed link types (ADO relation -> Jira link type name), replacing LINK_TABLE's. */
  linkTypes?: Readonly<Record<string, string>>;
}

/**
 * Every issue link among the items, each once: ADO stores a link on both of its ends (Dependency-Forward on
 * one, Dependency-Reverse on the other), and both ends name the same Jira link. Self-links are dropped.
 * Links to items outside `items` are kept (the engine skips those whose other end was not migrated).
 */
export function planIssueLinks(
  items: Iterable<SourceItemRelations>,
  options: LinkPlanOptions = {},
): { links: PlannedLink[]; warnings: string[] } {
  const planner = new IssueLinkPlanner(options);
  for (const item of items) planner.add(item);
  return planner.planned();
}

/**
 * planIssueLinks item by item, for a caller that reads the items a few at a time (the import files' planner):
 * it keeps the links, not the items.
 */
export class IssueLinkPlanner {
  private readonly available: string[] | undefined;
  private readonly linkTypes: LinkPlanOptions['linkTypes'];
  private readonly resolved = new Map<string, string | undefined>();
  private readonly warnings: string[] = [];
  private readonly links = new Map<string, PlannedLink>();

  constructor(options: LinkPlanOptions = {}) {
    this.available = options.availableTypes?.map((t) => t.toLowerCase());
    this.linkTypes = options.linkTypes;
  }

  private resolve(name: string): string | undefined {
    const available = this.available;
    if (!available) return name;
    if (!this.resolved.has(name)) {
      if (available.includes(name.toLowerCase())) this.resolved.set(name, name);
      else if (available.includes(FALLBACK_TYPE.toLowerCase())) {
        this.resolved.set(name, FALLBACK_TYPE);
        this.warnings.push(`Jira has no "${name}" link type: those links are created as "${FALLBACK_TYPE}"`);
      } else {
        this.resolved.set(name, undefined);
        this.warnings.push(`Jira has no "${name}" link type: those links are not migrated`);
      }
    }
    return this.resolved.get(name);
  }

  /** One item's links. */
  add(item: SourceItemRelations): void {
    for (const relation of item.relations ?? []) {
      const kind = linkTypeFor(relation.rel, this.linkTypes);
      if (kind === undefined || kind === 'hierarchy') continue;
      const other = workItemIdFromUrl(relation.url);
      if (other === undefined || other === item.id) continue;
      const type = this.resolve(kind.name);
      if (type === undefined) continue;
      let [from, to] = kind.outward ? [item.id, other] : [other, item.id];
      if ((SYMMETRIC.has(type.toLowerCase()) || selfReverse(relation.rel)) && from > to)
        [from, to] = [to, from];
      const key = `${type.toLowerCase()}|${from}|${to}`;
      const comment = relation.attributes?.comment;
      const existing = this.links.get(key);
      if (!existing) {
        this.links.set(key, {
          type,
          from,
          to,
          ...(typeof comment === 'string' && comment ? { comment } : {}),
        });
      } else if (existing.comment === undefined && typeof comment === 'string' && comment) {
        existing.comment = comment;
      }
    }
  }

  /** The links of every item added, each once, in the order first met, and the warnings. */
  planned(): { links: PlannedLink[]; warnings: string[] } {
    return { links: [...this.links.values()], warnings: [...this.warnings] };
  }
}
