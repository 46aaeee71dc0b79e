/**
 * ADO state -> Jira status (and resolution), per work item type, by the state's category.
 *
 * | ADO category | Jira status                                                                          |
 * |--------------|--------------------------------------------------------------------------------------|
 * | Proposed     | `new`: To Do, Backlog, Open, New, else the first `new` one                              |
 * | InProgress   | `indeterminate`: In Progress, Active, Doing, else the first one not review/test-like   |
 * | Resolved     | `indeterminate` named Resolved / In Review / QA / Testing / Verify; else `done` as for Completed |
 * | Completed    | `done`: Done, Closed, Resolved, Complete(d), else the first one not Won't-Do-like       |
 * | Removed      | `done`: Won't Do, Removed, Cancelled, Rejected, Closed, Done; resolution "Won't Do"     |
 *
 * Before the table, a status with the state's own name wins when its category suits (a Jira workflow that
 * mirrors ADO maps 1:1). When a workflow lacks the category, the next one in FALLBACKS is used with a
 * warning. `options.state_overrides` (source state name -> status name), then the project's confirmed states,
 * win over all of this, per issue type; a status the issue type's workflow lacks is a warning and the rules
 * apply.
 *
 * Removed items get the resolution "Won't Do" when the site has it ("Won't Fix" on classic sites); else
 * "Done" (or none) with a warning.
 * Other states carry no resolution: the workflow's own post-functions set it on done transitions.
 */
import type { IssueTypeRef } from './issue-types.ts';
import { layerName, overrideFor } from './overrides.ts';
import { findByName, quoteList, sameName } from './text.ts';

export type AdoStateCategory = 'Proposed' | 'InProgress' | 'Resolved' | 'Completed' | 'Removed';
export type JiraStatusCategory = 'new' | 'indeterminate' | 'done';

/** A state as ADO's `workitemtypes/{type}/states` lists it. */
export interface SourceState {
  name: string;
  category: string;
}

/** A status as Jira's `project/{key}/statuses` lists it. */
export interface TargetStatus {
  id: string;
  name: string;
  statusCategory?: { key?: string };
}

/** One entry of Jira's `project/{key}/statuses` answer: an issue type and its workflow's statuses. */
export interface IssueTypeStatuses {
  id: string;
  name: string;
  statuses: TargetStatus[];
}

export interface StatusRef {
  id: string;
  name: string;
}

export interface StateTarget {
  status: StatusRef;
  /** A resolution name to set on the transition into `status`. */
  resolution?: string;
}

export interface StateMapping {
  /** Source type -> source state -> where its items end up. A state missing here keeps the initial status. */
  map: Record<string, Record<string, StateTarget>>;
  warnings: string[];
}

export interface StateMappingOptions {
  /** `options.state_overrides`: source state name -> target status name. */
  overrides?: Record<string, string>;
  /**
   * The project's confirmed states (source state name -> status name), below `overrides`. Entries for
   * states no type in scope has are no warning: the record covers the whole project.
   */
  confirmed?: Record<string, string>;
  /** The site's resolution names; Jira Cloud's defaults when not given. */
  resolutions?: readonly string[];
}

/** Jira Cloud's default resolutions. */
export const JIRA_DEFAULT_RESOLUTIONS: readonly string[] = [
  'Done',
  "Won't Do",
  'Duplicate',
  'Cannot Reproduce',
];

const WONT_DO = /^won[’']?t do$/i;
const WONT_FIX = /^won[’']?t fix$/i;
/** Done statuses that mean "abandoned": never the target of a completed item. */
const ABANDONED = /^(won[’']?t do|removed|cancell?ed|rejected|obsolete|declined|abandoned)$/i;
/** Indeterminate statuses that mean "waiting for verification": the place for Resolved, not for Active. */
const VERIFYING = /resolv|review|\bqa\b|test|verif/i;

interface Rule {
  category: JiraStatusCategory;
  /** Tried in order, each over every status of the category. */
  prefer: RegExp[];
  /** The first status of the category not matching this is the last resort (then any of the category). */
  avoid?: RegExp;
  /** Only `prefer` matches count (no "first of the category"). */
  preferOnly?: boolean;
}

const COMPLETED: Rule = {
  category: 'done',
  prefer: [/^done$/i, /^closed$/i, /^resolved$/i, /^completed?$/i],
  avoid: ABANDONED,
};

/** Rules tried in order; a rule after the first is a fallback and is reported, except where noted. */
const RULES: Record<AdoStateCategory, Rule[]> = {
  Proposed: [
    { category: 'new', prefer: [/^to ?do$/i, /^backlog$/i, /^open$/i, /^new$/i] },
    { category: 'indeterminate', prefer: [/^in progress$/i], avoid: VERIFYING },
  ],
  InProgress: [
    { category: 'indeterminate', prefer: [/^in progress$/i, /^active$/i, /^doing$/i], avoid: VERIFYING },
    { category: 'new', prefer: [/^to ?do$/i] },
  ],
  Resolved: [
    {
      category: 'indeterminate',
      prefer: [/^resolved$/i, /review/i, /\bqa\b/i, /test/i, /verif/i],
      preferOnly: true,
    },
    COMPLETED,
    { category: 'indeterminate', prefer: [] },
  ],
  Completed: [COMPLETED],
  Removed: [
    {
      category: 'done',
      prefer: [WONT_DO, /^removed$/i, /^cancell?ed$/i, /^rejected$/i, /^closed$/i, /^done$/i],
    },
  ],
};

/** Jira categories where a status of the state's own name is accepted. */
const SAME_NAME_CATEGORIES: Record<AdoStateCategory, JiraStatusCategory[]> = {
  Proposed: ['new'],
  InProgress: ['indeterminate'],
  Resolved: ['indeterminate', 'done'],
  Completed: ['done'],
  Removed: ['done'],
};

/** Resolved falling back to a done status is the documented rule, not a degradation. */
const QUIET_FALLBACK: Partial<Record<AdoStateCategory, number>> = { Resolved: 1 };

const isAdoCategory = (c: string): c is AdoStateCategory => Object.hasOwn(RULES, c);
const categoryOf = (s: TargetStatus) => s.statusCategory?.key;
const statusRef = (s: TargetStatus): StatusRef => ({ id: s.id, name: s.name });

function applyRule(rule: Rule, statuses: readonly TargetStatus[]): TargetStatus | undefined {
  const inCategory = statuses.filter((s) => categoryOf(s) === rule.category);
  for (const pattern of rule.prefer) {
    const hit = inCategory.find((s) => pattern.test(s.name.trim()));
    if (hit) return hit;
  }
  if (rule.preferOnly) return undefined;
  return inCategory.find((s) => !rule.avoid?.test(s.name.trim())) ?? inCategory[0];
}

/** The status a state goes to by the category rules, with the index of the rule that matched. */
function byCategory(
  state: SourceState,
  category: AdoStateCategory,
  statuses: readonly TargetStatus[],
): { status: TargetStatus; rule: number } | undefined {
  const same = findByName(statuses, state.name);
  if (same && SAME_NAME_CATEGORIES[category].some((c) => c === categoryOf(same)))
    return { status: same, rule: 0 };
  const rules = RULES[category];
  for (let i = 0; i < rules.length; i++) {
    const status = applyRule(rules[i]!, statuses);
    if (status) return { status, rule: i };
  }
  return undefined;
}

/** The resolution a removed item is closed with, and the warning when the site lacks "Won't Do". */
function removedResolution(resolutions: readonly string[]): { resolution?: string; warning?: string } {
  // Classic Jira sites call it "Won't Fix": the same meaning, so no warning.
  const wontDo =
    resolutions.find((r) => WONT_DO.test(r.trim())) ?? resolutions.find((r) => WONT_FIX.test(r.trim()));
  if (wontDo) return { resolution: wontDo };
  const done = resolutions.find((r) => sameName(r, 'Done'));
  if (done)
    return {
      resolution: done,
      warning: `Jira has no "Won't Do" resolution: removed items are resolved as "${done}"`,
    };
  return {
    warning: `Jira has neither a "Won't Do" nor a "Done" resolution: removed items get no resolution`,
  };
}

export function mapStates(
  sourceStatesByType: Readonly<Record<string, readonly SourceState[]>>,
  targetStatusesByIssueType: readonly IssueTypeStatuses[],
  typeMap: Readonly<Record<string, IssueTypeRef>>,
  options: StateMappingOptions = {},
): StateMapping {
  const overrides = options.overrides ?? {};
  const removed = removedResolution(options.resolutions ?? JIRA_DEFAULT_RESOLUTIONS);
  const warnings: string[] = [];
  const map: StateMapping['map'] = {};

  for (const [sourceType, states] of Object.entries(sourceStatesByType)) {
    const issueType = typeMap[sourceType];
    // Unmapped or not-migrated types are reported by mapTypes; their items are never created.
    if (!issueType) continue;
    const workflow =
      targetStatusesByIssueType.find((t) => t.id === issueType.id) ??
      findByName(targetStatusesByIssueType, issueType.name);
    const statuses = workflow?.statuses ?? [];
    if (statuses.length === 0) {
      warnings.push(
        `Jira issue type "${issueType.name}" lists no statuses: "${sourceType}" items keep their initial status`,
      );
      continue;
    }
    const byState: Record<string, StateTarget> = {};
    map[sourceType] = byState;
    for (const state of states) {
      const label = `"${sourceType}" state "${state.name}"`;
      const category = isAdoCategory(state.category) ? state.category : undefined;
      let status: TargetStatus | undefined;

      const override = overrideFor(state.name, overrides, options.confirmed);
      if (override !== undefined) {
        status = findByName(statuses, override.value);
        if (!status) {
          warnings.push(
            `${layerName(override.from, 'options.state_overrides')} map${override.from === 'run' ? 's' : ''} "${state.name}" to "${override.value}", which the workflow of Jira issue type "${issueType.name}" does not have: the default rule applies`,
          );
        }
      }
      if (!status && category) {
        const found = byCategory(state, category, statuses);
        if (found && found.rule > 0 && QUIET_FALLBACK[category] !== found.rule) {
          warnings.push(
            `${label} (${category}) has no matching status in the workflow of Jira issue type "${issueType.name}": using "${found.status.name}"`,
          );
        }
        status = found?.status;
      }
      if (!status && !category) {
        // ADO's categories are fixed; an unknown one still maps when a status has the state's own name.
        status = findByName(statuses, state.name);
      }
      if (!status) {
        warnings.push(
          `${label} has no Jira status in the workflow of issue type "${issueType.name}": its items keep their initial status`,
        );
        continue;
      }
      const target: StateTarget = { status: statusRef(status) };
      if (category === 'Removed' && categoryOf(status) === 'done') {
        if (removed.resolution) target.resolution = removed.resolution;
        if (removed.warning) warnings.push(removed.warning);
      }
      byState[state.name] = target;
    }
  }

  const allStates = Object.values(sourceStatesByType).flat();
  const unused = Object.keys(overrides).filter((k) => !allStates.some((s) => sameName(s.name, k)));
  if (unused.length > 0) {
    warnings.push(`options.state_overrides names states no work item type has: ${quoteList(unused)}`);
  }
  return { map, warnings: [...new Set(warnings)] };
}
