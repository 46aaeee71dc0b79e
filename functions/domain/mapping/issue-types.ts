/**
 * Work item type -> Jira issue type.
 *
 * Order of rules for each source type:
 * 1. `options.type_overrides`, then the project's confirmed mappings (keys and values matched
 *    case-insensitively; the run's win, see overrides.ts). An override naming an issue type the project lacks
 *    is a problem: silently mapping elsewhere would ignore what the user asked for.
 * 2. Types that are not migrated as issues (NOT_MIGRATED_TYPES) are listed in `notMigrated`.
 * 3. An issue type with the same name (case-insensitive), so a project that mirrors ADO maps 1:1
 *    (a "Feature" type is used for Feature when the project has one).
 * 4. The fallback table DEFAULT_TYPE_TARGETS, first name the project has.
 * 5. Otherwise a problem: the engine fails fast rather than guessing where a type's items should go.
 *
 * Steps 3 and 4 never pick a subtask type: a subtask cannot be created without a parent, and ADO items of
 * any type may have none. An override may still name one on purpose.
 */
import { layerName, overrideFor } from './overrides.ts';
import { findByName, quoteList, sameName } from './text.ts';

export interface TargetIssueType {
  id: string;
  name: string;
  subtask?: boolean;
  /** Jira's hierarchy: 1 Epic, 0 standard issues, -1 subtasks. */
  hierarchyLevel?: number;
}

export interface IssueTypeRef {
  id: string;
  name: string;
}

export interface TypeMapping {
  /** Source type name (as given) -> the issue type its items are created as. */
  map: Record<string, IssueTypeRef>;
  /** Source types whose items are deliberately not created as issues (skipped, not failed). */
  notMigrated: string[];
  /** Blocking: the engine fails fast with these. */
  problems: string[];
  /** Not blocking, e.g. an override for a type the scope does not contain. */
  warnings: string[];
}

/**
 * Fallback issue type names by source type (lower-case), tried in order after an exact name match.
 * - Feature -> Epic: Jira's default project has no Feature type and only one level above standard issues,
 *   so features become epics (an Epic -> Feature parent link then has nowhere to go in Jira).
 * - User Story (Agile), Product Backlog Item (Scrum), Requirement (CMMI) -> Story.
 * - Issue (Agile/Basic) and Impediment (Scrum) -> an "Issue" type when present (exact match), else Task.
 * - Test Case -> Test (what test-management apps add), else Task.
 */
export const DEFAULT_TYPE_TARGETS: Readonly<Record<string, readonly string[]>> = {
  epic: ['Epic'],
  feature: ['Epic'],
  'user story': ['Story'],
  'product backlog item': ['Story'],
  requirement: ['Story'],
  task: ['Task'],
  bug: ['Bug'],
  issue: ['Task'],
  impediment: ['Issue', 'Task'],
  'test case': ['Test', 'Task'],
};

/**
 * Types not migrated as issues unless overridden: Shared Steps and Shared Parameter are reusable fragments of
 * test cases (the test-steps plugin inlines them into the steps it migrates), Test Plan/Suite are test
 * management containers, and the Code Review / Feedback types are hidden process types no backlog shows.
 */
export const NOT_MIGRATED_TYPES: readonly string[] = [
  'Shared Steps',
  'Shared Parameter',
  'Test Plan',
  'Test Suite',
  'Code Review Request',
  'Code Review Response',
  'Feedback Request',
  'Feedback Response',
];

const ref = (t: TargetIssueType): IssueTypeRef => ({ id: t.id, name: t.name });
const isSubtask = (t: TargetIssueType) => t.subtask === true || t.hierarchyLevel === -1;

function defaultTarget(sourceType: string, standard: TargetIssueType[]): TargetIssueType | undefined {
  const exact = findByName(standard, sourceType);
  if (exact) return exact;
  for (const name of DEFAULT_TYPE_TARGETS[sourceType.trim().toLowerCase()] ?? []) {
    const found = findByName(standard, name);
    if (found) return found;
  }
  return undefined;
}

export function mapTypes(
  sourceTypes: readonly string[],
  targetIssueTypes: readonly TargetIssueType[],
  overrides: Record<string, string> = {},
  /**
   * The project's confirmed types (ADO type -> issue type name), below `overrides`. Entries for types the
   * scope lacks are no warning: the record covers the whole project, a run may migrate part of it.
   */
  confirmed: Record<string, string> = {},
): TypeMapping {
  const result: TypeMapping = { map: {}, notMigrated: [], problems: [], warnings: [] };
  const standard = targetIssueTypes.filter((t) => !isSubtask(t));
  const available = `(issue types: ${targetIssueTypes.map((t) => t.name).join(', ') || 'none'})`;
  const seen = new Set<string>();
  for (const sourceType of sourceTypes) {
    const key = sourceType.trim().toLowerCase();
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    const override = overrideFor(sourceType, overrides, confirmed);
    if (override !== undefined) {
      const target = findByName(targetIssueTypes, override.value);
      if (target) result.map[sourceType] = ref(target);
      else
        result.problems.push(
          `${layerName(override.from, 'options.type_overrides')} map${override.from === 'run' ? 's' : ''} "${sourceType}" to "${override.value}", which is not an issue type of the Jira project ${available}`,
        );
      continue;
    }
    if (NOT_MIGRATED_TYPES.some((t) => sameName(t, sourceType))) {
      result.notMigrated.push(sourceType);
      continue;
    }
    const target = defaultTarget(sourceType, standard);
    if (target) result.map[sourceType] = ref(target);
    else
      result.problems.push(
        `Work item type "${sourceType}" has no Jira issue type: add it to options.type_overrides ${available}`,
      );
  }
  const unused = Object.keys(overrides).filter((k) => !sourceTypes.some((t) => sameName(t, k)));
  if (unused.length > 0) {
    result.warnings.push(
      `options.type_overrides names types the source scope does not have: ${quoteList(unused)}`,
    );
  }
  return result;
}
