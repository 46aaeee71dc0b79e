/** The time-logs plugin's pure half: Jira's `started`, the worklog comment, its marker, and coverage for timesheets. */
import { describe, expect, it } from 'vitest';
import { validateAdf } from '../../functions/domain/adf/index.ts';
import { TimeLogsConfigSchema, timeLogsPlugin } from '../../functions/plugins/time-logs.ts';
import {
  compareTimeLogs,
  formatDuration,
  isCoveredByTimeLogs,
  jiraStarted,
  migratedTimeLogOf,
  timeLogMarkerOf,
  uncoveredSeconds,
  worklogComment,
} from '../../functions/plugins/time-logs-format.ts';

const LOG = {
  id: 'dc54d553-a762-47c3-a68f-80d64bdd2a66',
  timestamp: '2019-08-31T14:45:00',
  length: 5400,
  workItemId: 8948,
  comment: 'Fixed the build\nand the tests',
  user: { id: 'u1', name: 'Eugene K', uniqueName: 'Eugene.K@Example.com' },
};

describe('time-logs formatting', () => {
  it("writes 7pace's zone-less time as Jira's started, in UTC with milliseconds and a colon-less offset", () => {
    expect(jiraStarted('2019-08-31T14:45:00')).toBe('2019-08-31T14:45:00.000+0000');
    expect(jiraStarted('2019-08-31T14:45:00.5')).toBe('2019-08-31T14:45:00.500+0000');
    expect(jiraStarted('2019-08-31T14:45:00+02:00')).toBe('2019-08-31T12:45:00.000+0000');
    expect(jiraStarted('yesterday')).toBeUndefined();
  });

  it('says how long for a reader', () => {
    expect(formatDuration(5400)).toBe('1h 30m');
    expect(formatDuration(7200)).toBe('2h');
    expect(formatDuration(900)).toBe('15m');
    expect(formatDuration(30)).toBe('30s');
  });

  it('names the original author, date and length, keeps the comment and carries the marker', () => {
    const doc = worklogComment(LOG, 8948);
    expect(validateAdf(doc)).toEqual([]);
    const header = (doc.content[0]?.content ?? []).map((n) => n.text ?? '').join('');
    expect(header).toBe(
      'Logged by Eugene K (eugene.k@example.com) on 31 Aug 2019, 14:45 UTC in 7pace: 1h 30m ' +
        '(7pace work log dc54d553-a762-47c3-a68f-80d64bdd2a66, work item 8948)',
    );
    expect(doc.content.slice(1)).toEqual([
      {
        type: 'paragraph',
        content: [
          { type: 'text', text: 'Fixed the build' },
          { type: 'hardBreak' },
          { type: 'text', text: 'and the tests' },
        ],
      },
    ]);
    expect(timeLogMarkerOf(doc)).toBe(LOG.id);
  });

  it('names a person with a Jira account by a mention, and an empty comment adds nothing', () => {
    const doc = worklogComment({ ...LOG, comment: '' }, 8948, 'acc-1');
    expect(validateAdf(doc)).toEqual([]);
    expect(doc.content).toHaveLength(1);
    expect(doc.content[0]?.content?.[1]).toEqual({
      type: 'mention',
      attrs: { id: 'acc-1', text: '@Eugene K' },
    });
    expect(timeLogMarkerOf(doc)).toBe(LOG.id);
  });

  it('finds no marker in worklogs others wrote', () => {
    expect(timeLogMarkerOf(undefined)).toBeUndefined();
    expect(timeLogMarkerOf({ type: 'doc', version: 1, content: [] })).toBeUndefined();
    const other = {
      type: 'doc',
      version: 1,
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Pairing' }] }],
    };
    expect(timeLogMarkerOf(other)).toBeUndefined();
    expect(
      migratedTimeLogOf({ comment: other, started: '2019-08-31T14:45:00.000+0000', timeSpentSeconds: 60 }),
    ).toBeUndefined();
  });

  it('reads a migrated worklog back, and tells the timesheets plugin what a timesheet entry still adds', () => {
    const migrated = migratedTimeLogOf({
      comment: worklogComment(LOG, 8948, 'acc-1'),
      started: '2019-08-31T16:45:00.000+0200',
      timeSpentSeconds: 5400,
    });
    expect(migrated).toEqual({
      sourceId: LOG.id,
      workItemId: 8948,
      userEmail: 'eugene.k@example.com',
      date: '2019-08-31',
      seconds: 5400,
    });
    const all = [migrated!];
    const entry = { userEmail: 'EUGENE.K@example.com', date: '2019-08-31', seconds: 5400 };
    expect(isCoveredByTimeLogs(all, entry)).toBe(true);
    expect(isCoveredByTimeLogs(all, { ...entry, workItemId: 8948 })).toBe(true);
    expect(uncoveredSeconds(all, { ...entry, seconds: 8 * 3600 })).toBe(8 * 3600 - 5400);
    expect(uncoveredSeconds(all, { ...entry, workItemId: 1 })).toBe(5400);
    expect(uncoveredSeconds(all, { ...entry, date: '2019-09-01' })).toBe(5400);
    expect(uncoveredSeconds(all, { ...entry, userEmail: 'someone@example.com' })).toBe(5400);
  });
});

describe('the time-logs plugin definition', () => {
  it('carries the catalogue descriptor and takes only a URL and a token', () => {
    expect(timeLogsPlugin).toMatchObject({ key: 'time-logs', displayName: 'Time logs', icon: 'clock' });
    expect(
      TimeLogsConfigSchema.safeParse({ baseUrl: 'https://acme.timehub.7pace.com/api', apiToken: 't' })
        .success,
    ).toBe(true);
    expect(
      TimeLogsConfigSchema.safeParse({ baseUrl: 'https://acme.timehub.7pace.com/api', apiToken: '' }).success,
    ).toBe(false);
    expect(TimeLogsConfigSchema.safeParse({ baseUrl: 'ftp://x', apiToken: 't' }).success).toBe(false);
    expect(
      TimeLogsConfigSchema.safeParse({ baseUrl: 'https://a.example/api', apiToken: 't', extra: 1 }).success,
    ).toBe(false);
  });
});

describe("a verification's worklog comparison", () => {
  const worklogOf = (log: typeof LOG, over: Partial<{ started: string; timeSpentSeconds: number }> = {}) => ({
    started: jiraStarted(log.timestamp),
    timeSpentSeconds: log.length,
    comment: worklogComment(log, 8948),
    ...over,
  });
  const OTHER = {
    ...LOG,
    id: 'a1b2c3d4-0000-4000-8000-000000000001',
    timestamp: '2019-09-01T09:00:00',
    length: 600,
  };

  it('finds nothing when each log is there once with its time and start; unmarked worklogs are not compared', () => {
    const somebodys = { started: '2020-01-01T00:00:00.000+0000', timeSpentSeconds: 60, comment: 'mine' };
    expect(compareTimeLogs([LOG, OTHER], [worklogOf(OTHER), somebodys, worklogOf(LOG)])).toEqual([]);
  });

  it('names a missing log, one there twice, and one whose time or start changed: one difference each', () => {
    expect(compareTimeLogs([LOG, OTHER], [worklogOf(LOG)])).toEqual([
      {
        field: 'worklogs',
        expected: `7pace log ${OTHER.id}: 10m from 1 Sep 2019, 09:00 UTC`,
        actual: '(no worklog)',
      },
    ]);
    expect(compareTimeLogs([LOG], [worklogOf(LOG), worklogOf(LOG)])).toEqual([
      {
        field: 'worklogs',
        expected: `7pace log ${LOG.id}: 1h 30m from 31 Aug 2019, 14:45 UTC`,
        actual: '2 worklogs',
      },
    ]);
    expect(compareTimeLogs([LOG], [worklogOf(LOG, { timeSpentSeconds: 3600 })])).toEqual([
      {
        field: 'worklogs',
        expected: `7pace log ${LOG.id}: 1h 30m from 31 Aug 2019, 14:45 UTC`,
        actual: `7pace log ${LOG.id}: 1h from 31 Aug 2019, 14:45 UTC`,
      },
    ]);
    expect(compareTimeLogs([LOG], [worklogOf(LOG, { started: '2019-08-31T15:45:00.000+0100' })])).toEqual([]);
    expect(
      compareTimeLogs([LOG], [worklogOf(LOG, { started: '2019-08-31T15:45:00.000+0000' })]),
    ).toHaveLength(1);
  });

  it('expects no worklog for a log the phase leaves out (no time, an unreadable timestamp)', () => {
    expect(
      compareTimeLogs(
        [
          { ...LOG, length: 0 },
          { ...OTHER, timestamp: 'yesterday' },
        ],
        [],
      ),
    ).toEqual([]);
  });
});
