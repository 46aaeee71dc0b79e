/**
 * ADO priority (1 highest .. 4 lowest) -> Jira priority name. Jira's default scheme has five levels; ADO's
 * four map onto the top four so "Lowest" stays free for items teams demote in Jira later.
 */

export type JiraPriorityName = 'Highest' | 'High' | 'Medium' | 'Low';

export const PRIORITY_BY_ADO: Readonly<Record<number, JiraPriorityName>> = {
  1: 'Highest',
  2: 'High',
  3: 'Medium',
  4: 'Low',
};

/** Jira's own default, used for a missing or unexpected ADO value. */
export const DEFAULT_PRIORITY: JiraPriorityName = 'Medium';

/** Accepts the integer ADO returns, or the same as a string (picklist values arrive as either). */
export function priorityName(adoPriority: unknown): JiraPriorityName {
  const n =
    typeof adoPriority === 'number'
      ? adoPriority
      : typeof adoPriority === 'string' && /^\s*\d+\s*$/.test(adoPriority)
        ? Number(adoPriority)
        : Number.NaN;
  return PRIORITY_BY_ADO[n] ?? DEFAULT_PRIORITY;
}
