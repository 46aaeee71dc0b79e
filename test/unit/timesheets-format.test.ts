/** The timesheets plugin's pure half: what an entry adds beyond the migrated 7pace time, and how it reads. */
import { describe, expect, it } from 'vitest';
import { migratedTimeLogOf } from '../../functions/plugins/time-logs.ts';
import type { MigratedTimeLog } from '../../functions/plugins/time-logs-format.ts';
import {
  planWorklogs,
  type TimesheetEntry,
  timesheetComment,
  timesheetEntryOf,
  timesheetMarkerOf,
  timesheetStarted,
} from '../../functions/plugins/timesheets-format.ts';

const H = 3600;
const entry = (id: string, seconds: number, extra: Partial<TimesheetEntry> = {}): TimesheetEntry => ({
  id,
  workItemId: 7,
  userEmail: 'ava@contoso.example.com',
  userName: 'Ava Adams',
  date: '2024-05-02',
  seconds,
  notes: '',
  ...extra,
});
const log = (seconds: number, extra: Partial<MigratedTimeLog> = {}): MigratedTimeLog => ({
  sourceId: `log-${seconds}`,
  workItemId: 7,
  userEmail: 'ava@contoso.example.com',
  date: '2024-05-02',
  seconds,
  ...extra,
});
const shares = (entries: TimesheetEntry[], logs: MigratedTimeLog[]) =>
  planWorklogs(entries, logs).map((p) => [p.entry.id, p.seconds, p.covered]);

describe('planning timesheet worklogs', () => {
  it('logs only what exceeds the 7pace time of the same person, day and item', () => {
    expect(shares([entry('1', 3 * H)], [log(H)])).toEqual([['1', 2 * H, H]]);
    expect(shares([entry('1', H)], [log(H)])).toEqual([['1', 0, H]]);
    expect(shares([entry('1', H)], [log(2 * H)])).toEqual([['1', 0, H]]);
  });

  it('does not let 7pace time of another item, day or person cover an entry', () => {
    const others = [
      log(H, { workItemId: 8 }),
      log(H, { date: '2024-05-03' }),
      log(H, { userEmail: 'bo@x.example' }),
    ];
    expect(shares([entry('1', H)], others)).toEqual([['1', H, 0]]);
    // Nobody known: nothing can cover it.
    expect(shares([entry('1', H, { userEmail: undefined })], [log(H)])).toEqual([['1', H, 0]]);
  });

  it('shares one group’s 7pace time among its entries in id order: Jira ends with max(7pace, timesheet)', () => {
    const planned = planWorklogs([entry('12', 2 * H), entry('9', 2 * H)], [log(3 * H)]);
    expect(planned.map((p) => [p.entry.id, p.seconds, p.covered])).toEqual([
      ['12', H, H],
      ['9', 0, 2 * H],
    ]);
    const posted = planned.reduce((n, p) => n + p.seconds, 0);
    expect(3 * H + posted).toBe(Math.max(3 * H, 4 * H));
  });
});

describe('a timesheet worklog', () => {
  const plan = planWorklogs([entry('42', 3 * H, { notes: 'Bug fixing' })], [log(H)])[0];
  if (!plan) throw new Error('no plan');

  it('names the person, the day, the time and what 7pace already brought, and carries its marker', () => {
    const doc = timesheetComment(plan);
    expect(JSON.stringify(doc)).toContain('Ava Adams');
    const header = (doc.content[0] as { content: { text?: string }[] }).content
      .map((n) => n.text ?? '')
      .join('');
    expect(header).toBe(
      'Timesheet of Ava Adams (ava@contoso.example.com) for 2 May 2024: 3h, of which 1h already logged in 7pace ' +
        '(timesheet entry 42, work item 7)',
    );
    expect(JSON.stringify(doc.content[1])).toContain('Bug fixing');
    expect(timesheetMarkerOf(doc)).toBe('42');
    // Never mistaken for a 7pace time log.
    expect(
      migratedTimeLogOf({ comment: doc, started: timesheetStarted('2024-05-02'), timeSpentSeconds: 1 }),
    ).toBe(undefined);
  });

  it('mentions a person who has a Jira account, and starts at noon UTC of the day', () => {
    const doc = timesheetComment(plan, 'acc-1');
    expect(doc.content[0]).toMatchObject({ content: [{}, { type: 'mention', attrs: { id: 'acc-1' } }, {}] });
    expect(timesheetMarkerOf(doc)).toBe('42');
    expect(timesheetStarted('2024-05-02')).toBe('2024-05-02T12:00:00.000+0000');
  });

  it('reads a Harvest entry with its user’s e-mail; one without a work item is not an entry', () => {
    const users = new Map([
      [5, { id: 5, first_name: 'Ava', last_name: 'Adams', email: 'Ava@Contoso.example.com' }],
    ]);
    expect(
      timesheetEntryOf(
        {
          id: 9,
          spent_date: '2024-05-02',
          hours: 1.25,
          notes: ' x ',
          user: { id: 5, name: 'Ava Adams' },
          external_reference: { id: '7' },
        },
        users,
      ),
    ).toEqual({
      id: '9',
      workItemId: 7,
      userEmail: 'ava@contoso.example.com',
      userName: 'Ava Adams',
      date: '2024-05-02',
      seconds: 4500,
      notes: 'x',
    });
    expect(
      timesheetEntryOf({ id: 9, spent_date: '2024-05-02', hours: 1, external_reference: null }, users),
    ).toBe(undefined);
  });
});
