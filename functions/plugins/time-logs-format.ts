/**
 * A 7pace work log as a Jira worklog, and back: the pure half of the time-logs plugin.
 *
 * Jira sets a worklog's author to whoever calls the API (the migration's service account), so the original
 * author is named in the worklog's comment, in a first paragraph that also carries the marker:
 *
 *   Logged by Ava Adams (ava.adams@contoso.example.com) on 12 Mar 2026, 10:00 UTC in 7pace: 1h 30m
 *   (7pace work log 5d754739-..., work item 123)
 *
 * followed by the original comment. The marker is what makes the plugin idempotent (a log whose marker is on
 * the issue is never posted again, whichever run or resume posted it) and what the timesheets plugin reads to
 * learn which time the time logs already brought: `migratedTimeLogOf` reads a Jira worklog back into
 * (work item, user, day, seconds), `uncoveredSeconds` says how much of a timesheet entry is not covered yet.
 * The worklog in Jira is the record, so it survives a re-run into the same Jira and needs no store of its own.
 */
import { type AdfDoc, type AdfNode, JIRA_TEXT_LIMIT, textToAdf } from '#domain/adf/index.ts';
import type { TimetrackerWorkLog } from '#trackers/timetracker/client.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MARKER = /\(7pace work log ([^,()\s]+), work item (\d+)\)/;
const EMAIL = /\(([^()\s]+@[^()\s]+)\)/;
/** Room left for the header in Jira's comment limit: the original comment is cut to this. */
const COMMENT_MAX = JIRA_TEXT_LIMIT - 1_000;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * A 7pace timestamp as ms since the epoch. 7pace sends local time without a zone; it is read as UTC (the
 * sandbox's zone; a real account's zone would be an added setting). A timestamp with a zone keeps it.
 */
export function timestampMs(timestamp: string): number | undefined {
  const withZone = /(?:[zZ]|[+-]\d\d:?\d\d)$/.test(timestamp) ? timestamp : `${timestamp}Z`;
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?/.test(timestamp)) return undefined;
  const ms = Date.parse(withZone);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Jira's worklog `started` (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`, e.g. `2024-05-01T10:00:00.000+0000`); Jira refuses ISO's `Z`. */
export function jiraStarted(timestamp: string): string | undefined {
  const ms = timestampMs(timestamp);
  if (ms === undefined) return undefined;
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}+0000`;
}

/** `12 Mar 2026, 10:04 UTC`, as the comments phase writes dates. */
export function formatLogDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** `1h 30m`, `45m`, `2h`, `30s` for under a minute: how long, for a reader (never 8h days as Jira's `1d`). */
export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const parts = [h ? `${h}h` : '', m ? `${m}m` : ''].filter(Boolean);
  return parts.length ? parts.join(' ') : `${Math.max(0, Math.round(seconds))}s`;
}

/** The marker of a log, as the header carries it. */
export const timeLogMarker = (logId: string, workItemId: number) =>
  `(7pace work log ${logId}, work item ${workItemId})`;

/**
 * The Jira worklog comment of a log: the header (author, date, length, marker) in italics, then the original
 * comment. A person with a Jira account (`accountId` from the run's people map) is named by a mention.
 */
export function worklogComment(log: TimetrackerWorkLog, workItemId: number, accountId?: string): AdfDoc {
  const name = log.user?.name?.trim() || log.user?.uniqueName?.trim() || 'an unknown user';
  const email = log.user?.uniqueName?.includes('@') ? log.user.uniqueName.toLowerCase() : undefined;
  const ms = timestampMs(log.timestamp);
  const em = [{ type: 'em' }];
  const header: AdfNode[] = [
    { type: 'text', text: 'Logged by ', marks: em },
    accountId
      ? { type: 'mention', attrs: { id: accountId, text: `@${name}` } }
      : { type: 'text', text: name, marks: em },
    {
      type: 'text',
      text:
        `${email ? ` (${email})` : ''}${ms === undefined ? '' : ` on ${formatLogDate(ms)}`} in 7pace: ` +
        `${formatDuration(log.length)} ${timeLogMarker(log.id, workItemId)}`,
      marks: em,
    },
  ];
  const original = (log.comment ?? '').trim();
  const body = original
    ? textToAdf(original.length > COMMENT_MAX ? `${original.slice(0, COMMENT_MAX)} …` : original)
    : undefined;
  return {
    type: 'doc',
    version: 1,
    content: [{ type: 'paragraph', content: header }, ...(body?.content ?? [])],
  };
}

/** The plain text of an ADF node's first paragraph (mentions as their text). */
function firstParagraphText(doc: unknown): string {
  const first = (doc as { content?: unknown[] } | undefined)?.content?.[0] as
    | { content?: unknown[] }
    | undefined;
  return (first?.content ?? [])
    .map((n) => {
      const node = n as { type?: string; text?: string; attrs?: { text?: string } };
      return node.type === 'text'
        ? (node.text ?? '')
        : node.type === 'mention'
          ? (node.attrs?.text ?? '')
          : '';
    })
    .join('');
}

/** The 7pace log id a worklog comment carries; undefined for worklogs the plugin did not write. */
export function timeLogMarkerOf(comment: unknown): string | undefined {
  return MARKER.exec(firstParagraphText(comment))?.[1];
}

/** What the time-logs plugin brought, read back from one Jira worklog. */
export interface MigratedTimeLog {
  sourceId: string;
  workItemId: number;
  /** Lower case; undefined when 7pace named no e-mail. */
  userEmail?: string;
  /** The UTC day the work started, `YYYY-MM-DD`. */
  date: string;
  seconds: number;
}

/** A Jira worklog (as GET .../worklog answers it) read back; undefined when the time-logs plugin did not write it. */
export function migratedTimeLogOf(worklog: {
  comment?: unknown;
  started?: string;
  timeSpentSeconds?: number;
}): MigratedTimeLog | undefined {
  const header = firstParagraphText(worklog.comment);
  const marker = MARKER.exec(header);
  const started = worklog.started
    ? Date.parse(worklog.started.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'))
    : Number.NaN;
  if (!marker?.[1] || !marker[2] || Number.isNaN(started)) return undefined;
  const email = EMAIL.exec(header.slice(0, marker.index))?.[1];
  return {
    sourceId: marker[1],
    workItemId: Number(marker[2]),
    ...(email ? { userEmail: email.toLowerCase() } : {}),
    date: new Date(started).toISOString().slice(0, 10),
    seconds: worklog.timeSpentSeconds ?? 0,
  };
}

/**
 * For the timesheets plugin: how many seconds of a timesheet entry (a user's time on a day, on one work item
 * or, without `workItemId`, on any) the time logs did not already bring. 0: fully covered, log nothing.
 */
export function uncoveredSeconds(
  migrated: readonly MigratedTimeLog[],
  entry: { userEmail: string; date: string; seconds: number; workItemId?: number },
): number {
  const email = entry.userEmail.toLowerCase();
  const covered = migrated
    .filter(
      (m) =>
        m.userEmail === email &&
        m.date === entry.date &&
        (entry.workItemId === undefined || m.workItemId === entry.workItemId),
    )
    .reduce((sum, m) => sum + m.seconds, 0);
  return Math.max(0, entry.seconds - covered);
}

/** Whether a timesheet entry is already wholly covered by migrated time logs. */
export const isCoveredByTimeLogs = (
  migrated: readonly MigratedTimeLog[],
  entry: { userEmail: string; date: string; seconds: number; workItemId?: number },
) => uncoveredSeconds(migrated, entry) === 0;

/** A verification's difference for the plugin's worklogs (the audit counts them under this field). */
export const WORKLOGS_FIELD = 'worklogs';

/** A log as the audit names it: `7pace log <id>: 1h 30m from 12 Mar 2026, 10:04 UTC`. */
const logText = (id: string, seconds: number, ms: number | undefined) =>
  `7pace log ${id}: ${formatDuration(seconds)}${ms === undefined ? '' : ` from ${formatLogDate(ms)}`}`;

/**
 * What a verification finds between an item's 7pace logs and its issue's worklogs (pure): each log with time and
 * a readable timestamp is there exactly once (by its marker), with its seconds and start. Logs the phase leaves
 * out (no time, no timestamp) are not expected; worklogs without a marker are somebody else's, not compared.
 */
export function compareTimeLogs(
  logs: readonly TimetrackerWorkLog[],
  worklogs: readonly { comment?: unknown; started?: string; timeSpentSeconds?: number }[],
): { field: string; expected: string; actual: string }[] {
  const byMarker = new Map<string, typeof worklogs>();
  for (const w of worklogs) {
    const id = timeLogMarkerOf(w.comment);
    if (id) byMarker.set(id, [...(byMarker.get(id) ?? []), w]);
  }
  const differences: { field: string; expected: string; actual: string }[] = [];
  for (const log of logs) {
    const ms = timestampMs(log.timestamp);
    if (!(log.length > 0) || ms === undefined) continue;
    const seconds = Math.round(log.length);
    const expected = logText(log.id, seconds, ms);
    const found = byMarker.get(log.id) ?? [];
    if (found.length !== 1) {
      differences.push({
        field: WORKLOGS_FIELD,
        expected,
        actual: found.length === 0 ? '(no worklog)' : `${found.length} worklogs`,
      });
      continue;
    }
    const [w] = found as [(typeof worklogs)[number]];
    const started = w.started ? Date.parse(w.started.replace(/([+-]\d\d)(\d\d)$/, '$1:$2')) : Number.NaN;
    if (w.timeSpentSeconds !== seconds || started !== ms)
      differences.push({
        field: WORKLOGS_FIELD,
        expected,
        actual: logText(log.id, w.timeSpentSeconds ?? 0, Number.isNaN(started) ? undefined : started),
      });
  }
  return differences;
}
