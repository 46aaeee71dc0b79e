/**
 * String helpers the mapping rules share. Jira compares names case-insensitively and counts lengths in UTF-16
 * code units (Java strings), so both are done the same way here.
 */

/** Jira's limit for a summary, a label and a component name. */
export const JIRA_NAME_MAX = 255;

/** Case- and outer-whitespace-insensitive name equality (how Jira and ADO resolve type and status names). */
export function sameName(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** The first entry whose `name` matches, ignoring case. */
export function findByName<T extends { name: string }>(items: readonly T[], name: string): T | undefined {
  return items.find((item) => sameName(item.name, name));
}

/**
 * At most `max` UTF-16 units, never ending on half a surrogate pair (a lone surrogate would be mojibake in
 * Jira and could fail its validation).
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** `"a", "b"` for messages. */
export function quoteList(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(', ');
}
