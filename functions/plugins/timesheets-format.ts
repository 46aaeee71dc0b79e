/**
 * The pure half of the timesheets plugin: what a timesheet entry still has to add to Jira, and the worklog that
 * says so.
 *
 * The double-count rule. Per work item, person and UTC day, the time logs (7pace, brought by the time-logs
 * plugin) and the timesheet describe the same work twice. Jira must end with max(7pace, timesheet) for that
 * group: the 7pace worklogs stay as they are, and the timesheet entries add only what exceeds them. With several
 * entries in one group, the 7pace time covers them in entry id order (`planWorklogs`), so each entry's share is
 * fixed by the data and a re-run computes the same shares. Time logs of another item or day never cover an
 * entry. A group's seconds in Jira: 7pace T, timesheet S -> T + max(0, S - T) = max(T, S).
 *
 * The worklog's comment names the person and the source in a first paragraph that carries the marker:
 *
 *   Timesheet of Ava Adams (ava.adams@contoso.example.com) for 2 May 2024: 3h, of which 1h already logged in
 *   7pace (timesheet entry 123, work item 45)
 *
 * followed by the entry's notes. The marker is what makes the plugin idempotent: an entry whose marker is on the
 * issue is never posted again. It differs from the time-logs marker, so `migratedTimeLogOf` never reads it.
 */
import { type AdfDoc, type AdfNode, textToAdf } from '#domain/adf/index.ts';
import type { HarvestTimeEntry, HarvestUser } from '#trackers/timesheets/client.ts';
import { formatDuration, type MigratedTimeLog, uncoveredSeconds } from './time-logs-format.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MARKER = /\(timesheet entry (\d+), work item (\d+)\)/;
/** Notes longer than this are cut: timesheet notes are a line, not a document. */
const NOTES_MAX = 10_000;

/** A timesheet entry as the plugin works with it. */
export interface TimesheetEntry {
  id: string;
  workItemId: number;
  /** Lower case; undefined when the user list does not know the person (nothing can cover the entry then). */
  userEmail?: string;
  userName: string;
  /** `YYYY-MM-DD`. */
  date: string;
  seconds: number;
  notes: string;
}

/** A Harvest entry read for the plugin; undefined when it names no work item or no readable day. */
export function timesheetEntryOf(
  entry: HarvestTimeEntry,
  users: ReadonlyMap<number, HarvestUser>,
): TimesheetEntry | undefined {
  const workItemId = Number(entry.external_reference?.id);
  if (!Number.isInteger(workItemId) || workItemId <= 0) return undefined;
  if (!/^\d{4}-\d\d-\d\d$/.test(entry.spent_date ?? '')) return undefined;
  const user = entry.user ? users.get(entry.user.id) : undefined;
  const listed = `${user?.first_name ?? ''} ${user?.last_name ?? ''}`.trim();
  const email = user?.email?.trim().toLowerCase();
  return {
    id: String(entry.id),
    workItemId,
    ...(email ? { userEmail: email } : {}),
    userName: entry.user?.name?.trim() || listed || email || 'an unknown user',
    date: entry.spent_date,
    // Harvest keeps decimal hours: whole seconds are what Jira takes.
    seconds: Math.round((Number(entry.hours) || 0) * 3600),
    notes: (entry.notes ?? '').trim(),
  };
}

/** One entry's share: `seconds` still to log, `covered` what the time logs already brought of it. */
export interface PlannedWorklog {
  entry: TimesheetEntry;
  seconds: number;
  covered: number;
}

/**
 * What each entry adds beyond the migrated time logs (see the double-count rule above). Entries of one group
 * draw on the group's 7pace time in id order: an entry's share is what the group's uncovered time grows by
 * when it is added, so the shares sum to max(0, S - T).
 */
export function planWorklogs(
  entries: readonly TimesheetEntry[],
  migrated: readonly MigratedTimeLog[],
): PlannedWorklog[] {
  const sorted = [...entries].sort((a, b) => compareIds(a.id, b.id));
  const booked = new Map<string, { seconds: number; uncovered: number }>();
  const planned = new Map<string, PlannedWorklog>();
  for (const entry of sorted) {
    const group = `${entry.workItemId}|${entry.userEmail ?? `?${entry.id}`}|${entry.date}`;
    const before = booked.get(group) ?? { seconds: 0, uncovered: 0 };
    const seconds = before.seconds + Math.max(0, entry.seconds);
    const uncovered = entry.userEmail
      ? uncoveredSeconds(migrated, {
          userEmail: entry.userEmail,
          date: entry.date,
          workItemId: entry.workItemId,
          seconds,
        })
      : seconds;
    booked.set(group, { seconds, uncovered });
    const share = uncovered - before.uncovered;
    planned.set(entry.id, { entry, seconds: share, covered: Math.max(0, entry.seconds) - share });
  }
  // In the caller's order.
  return entries.map((e) => planned.get(e.id) as PlannedWorklog);
}

/** Numeric ids by value (Harvest's are integers), anything else as text. */
function compareIds(a: string, b: string): number {
  const [x, y] = [Number(a), Number(b)];
  return Number.isSafeInteger(x) && Number.isSafeInteger(y) ? x - y : a.localeCompare(b);
}

/**
 * The hour (UTC) a timesheet worklog starts on its day: a timesheet has no time of day. Noon keeps the day the
 * same for readers in every zone from UTC-11 to UTC+11, and matches how `migratedTimeLogOf` reads days (UTC).
 */
export const TIMESHEET_HOUR_UTC = 12;

/** Jira's worklog `started` for an entry's day. */
export const timesheetStarted = (date: string) =>
  `${date}T${String(TIMESHEET_HOUR_UTC).padStart(2, '0')}:00:00.000+0000`;

/** `2 May 2024`. */
export function formatDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return `${d} ${MONTHS[m - 1]} ${y}`;
}

export const timesheetMarker = (entryId: string, workItemId: number) =>
  `(timesheet entry ${entryId}, work item ${workItemId})`;

/**
 * The worklog comment of a planned entry: the header (person, day, the entry's time, what 7pace already
 * brought, the marker) in italics, then the notes. A person with a Jira account is named by a mention.
 */
export function timesheetComment(plan: PlannedWorklog, accountId?: string): AdfDoc {
  const { entry, covered } = plan;
  const em = [{ type: 'em' }];
  const already = covered > 0 ? `, of which ${formatDuration(covered)} already logged in 7pace` : '';
  const header: AdfNode[] = [
    { type: 'text', text: 'Timesheet of ', marks: em },
    accountId
      ? { type: 'mention', attrs: { id: accountId, text: `@${entry.userName}` } }
      : { type: 'text', text: entry.userName, marks: em },
    {
      type: 'text',
      text:
        `${entry.userEmail ? ` (${entry.userEmail})` : ''} for ${formatDay(entry.date)}: ` +
        `${formatDuration(entry.seconds)}${already} ${timesheetMarker(entry.id, entry.workItemId)}`,
      marks: em,
    },
  ];
  const notes = entry.notes.length > NOTES_MAX ? `${entry.notes.slice(0, NOTES_MAX)} …` : entry.notes;
  const body = notes ? textToAdf(notes) : undefined;
  return {
    type: 'doc',
    version: 1,
    content: [{ type: 'paragraph', content: header }, ...(body?.content ?? [])],
  };
}

/** The timesheet entry id a worklog comment carries; undefined for worklogs this plugin did not write. */
export function timesheetMarkerOf(comment: unknown): string | undefined {
  const first = (comment as { content?: unknown[] } | undefined)?.content?.[0] as
    | { content?: { type?: string; text?: string }[] }
    | undefined;
  const text = (first?.content ?? []).map((n) => (n.type === 'text' ? (n.text ?? '') : '')).join('');
  return MARKER.exec(text)?.[1];
}
