/**
 * Estimates: ADO hours -> Jira time tracking strings, and the story point value.
 *
 * Durations are written in hours and minutes only: Jira reads `d` and `w` with the site's working-day and
 * working-week lengths (8h and 5d by default, but configurable), while hours mean the same everywhere.
 */

/** A finite, non-negative number from an ADO numeric field (a double, sometimes sent as a string). */
export function nonNegativeNumber(value: unknown): number | undefined {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** `3` -> `3h`, `1.5` -> `1h 30m`, `0.25` -> `15m`, `0` -> `0m`; rounded to the minute; undefined if invalid. */
export function hoursToJiraDuration(hours: unknown): string | undefined {
  const h = nonNegativeNumber(hours);
  if (h === undefined) return undefined;
  const minutes = Math.round(h * 60);
  const parts: string[] = [];
  if (minutes >= 60) parts.push(`${Math.floor(minutes / 60)}h`);
  if (minutes % 60 > 0) parts.push(`${minutes % 60}m`);
  return parts.length > 0 ? parts.join(' ') : '0m';
}

/**
 * Fields holding an item's size, in order: Story Points (Agile stories and bugs), Effort (Scrum, and
 * Agile epics and features), Size (CMMI requirements). An item has at most one in practice.
 */
export const SIZE_FIELDS = [
  'Microsoft.VSTS.Scheduling.StoryPoints',
  'Microsoft.VSTS.Scheduling.Effort',
  'Microsoft.VSTS.Scheduling.Size',
] as const;

export function storyPointsFrom(fields: Readonly<Record<string, unknown>>): number | undefined {
  for (const ref of SIZE_FIELDS) {
    const n = nonNegativeNumber(fields[ref]);
    if (n !== undefined) return n;
  }
  return undefined;
}
