/** Jira's date and duration formats. */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Jira's timestamp format, e.g. `2024-05-01T12:34:56.789+0000` (RFC 822 offset, no colon). */
export function jiraDateTime(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}+0000`
  );
}

/**
 * Parses a worklog `started`, which Jira reads with `yyyy-MM-dd'T'HH:mm:ss.SSSZ`: milliseconds and an offset
 * without a colon are required, so `2024-05-01T10:00:00Z` is refused as the real API refuses it.
 */
export function parseJiraStarted(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})([+-])(\d\d)(\d\d)$/.exec(value);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[2]}${m[3]}:${m[4]}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** `YYYY-MM-DD` that is a real calendar date. */
export function isJiraDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\d$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value);
}

// Jira's default time tracking settings: a working day is 8 hours, a working week 5 days.
const UNIT_SECONDS: Record<string, number> = { w: 5 * 8 * 3600, d: 8 * 3600, h: 3600, m: 60 };

/** Parses a Jira duration such as `3h`, `1d 4h`, `2w 30m` (a bare number means minutes); undefined if invalid. */
export function parseJiraDuration(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 60;
  let seconds = 0;
  const seen = new Set<string>();
  for (const part of text.split(/\s+/)) {
    const m = /^(\d+(?:\.\d+)?)([wdhm])$/.exec(part);
    if (!m?.[1] || !m[2] || seen.has(m[2])) return undefined;
    seen.add(m[2]);
    seconds += Number(m[1]) * (UNIT_SECONDS[m[2]] ?? 0);
  }
  return Math.round(seconds);
}

/** Formats seconds the way Jira shows them: `1w 2d 3h 30m`, `0m` for zero. */
export function formatJiraDuration(seconds: number): string {
  let rest = Math.max(0, Math.round(seconds / 60) * 60);
  const parts: string[] = [];
  for (const unit of ['w', 'd', 'h', 'm']) {
    const size = UNIT_SECONDS[unit] ?? 1;
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.length > 0 ? parts.join(' ') : '0m';
}
