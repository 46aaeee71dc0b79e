/**
 * ADO priority (1 highest .. 4 lowest) -> Jira priority name. Jira's default scheme has five levels; ADO's
 * four map onto the top four so "Lowest" stays free for items teams demote in Jira later. A site with other
 * priorities (renamed or custom ones) may lack some: preflight reads the project's list, warns for each missing
 * one, and its items are created without a priority (Jira's default applies).
 */
import { sameName } from './text.ts';

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

/** The site's spelling of the Jira priority an ADO priority maps to, or undefined when the site lacks it. */
export function sitePriorityFor(adoPriority: unknown, siteNames: readonly string[]): string | undefined {
  const wanted = priorityName(adoPriority);
  return siteNames.find((n) => sameName(n, wanted));
}

/**
 * The mapped priorities the site does not have, with how many of these ADO priority values ask for each
 * (most first, then in Highest .. Low order): their items are created without a priority (Jira's default).
 */
export function missingPriorities(
  siteNames: readonly string[],
  adoPriorities: Iterable<unknown>,
): { name: JiraPriorityName; items: number }[] {
  const counts = new Map<JiraPriorityName, number>();
  for (const value of adoPriorities) {
    const wanted = priorityName(value);
    if (!siteNames.some((n) => sameName(n, wanted))) counts.set(wanted, (counts.get(wanted) ?? 0) + 1);
  }
  const order = Object.values(PRIORITY_BY_ADO);
  return [...counts]
    .map(([name, items]) => ({ name, items }))
    .sort((a, b) => b.items - a.items || order.indexOf(a.name) - order.indexOf(b.name));
}
