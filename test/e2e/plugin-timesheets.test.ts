/**
 * The timesheets plugin through both sandboxes, after the time-logs plugin: per work item, person and day, Jira
 * ends with max(7pace time, timesheet time), never their sum, whatever crashes, resumes and second runs happen;
 * without the time-logs plugin every timesheet entry's whole time is logged. Runner, store and sandboxes are real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../functions/phase-kit/context.ts';
import { SimulatedCrash } from '../../functions/phase-kit/context.ts';
import { migratedTimeLogOf, timeLogsPlugin } from '../../functions/plugins/time-logs.ts';
import { timesheetsPlugin } from '../../functions/plugins/timesheets.ts';
import { timesheetMarkerOf } from '../../functions/plugins/timesheets-format.ts';
import { timesheetsToken } from '../../local/sandbox/timesheets/index.ts';
import { timetrackerToken } from '../../local/sandbox/timetracker/index.ts';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import {
  countingChunks,
  crashCollector,
  jiraWorklogs,
  keysByItem,
  newPluginRun,
  worklogPosts,
} from '../support/plugin-fixtures.ts';

interface Entry {
  id: number;
  spent_date: string;
  hours: number;
  external_reference: { id: string };
  user_email: string;
}
interface SourceLog {
  timestamp: string;
  length: number;
  workItemId: number;
  user: { name: string; uniqueName: string };
}
interface Worklog {
  started: string;
  timeSpentSeconds: number;
  comment?: unknown;
}

const group = (item: number, email: string, day: string) => `${item}|${email.toLowerCase()}|${day}`;

/** What the sandboxes and Jira hold, summed per (item, person, day). */
async function tally(h: EngineHarness) {
  const keys = await keysByItem(h);
  const entries = ((await h.control('ado', 'GET', '/_sandbox/timesheets/entries')) as Entry[]).filter((e) =>
    keys.has(Number(e.external_reference.id)),
  );
  const logs = ((await h.control('ado', 'GET', '/_sandbox/7pace/worklogs')) as SourceLog[]).filter((l) =>
    keys.has(l.workItemId),
  );
  const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);
  const sheet = new Map<string, number>();
  const entryGroup = new Map<string, string>();
  for (const e of entries) {
    const k = group(Number(e.external_reference.id), e.user_email, e.spent_date);
    add(sheet, k, Math.round(e.hours * 3600));
    entryGroup.set(String(e.id), k);
  }
  const pace = new Map<string, number>();
  for (const l of logs) add(pace, group(l.workItemId, l.user.uniqueName, l.timestamp.slice(0, 10)), l.length);

  const jira = new Map<string, number>();
  const markers: string[] = [];
  let worklogs = 0;
  for (const id of new Set([
    ...entries.map((e) => Number(e.external_reference.id)),
    ...logs.map((l) => l.workItemId),
  ])) {
    for (const w of await jiraWorklogs<Worklog>(h, keys.get(id))) {
      worklogs++;
      const own = timesheetMarkerOf(w.comment);
      const log = migratedTimeLogOf(w);
      if (own) {
        markers.push(own);
        add(jira, entryGroup.get(own) ?? `unknown entry ${own}`, w.timeSpentSeconds);
      } else if (log) add(jira, group(log.workItemId, log.userEmail ?? '', log.date), w.timeSpentSeconds);
      else add(jira, 'foreign', w.timeSpentSeconds);
    }
  }
  return { entries, sheet, pace, jira, markers, worklogs };
}

async function newRun(h: EngineHarness, name: string) {
  return (await newPluginRun(h, name)).run;
}

describe('the timesheets plugin after the time-logs plugin', () => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ items: 30, seed: 21 });
    await h.app.store.plugins.enable(h.tenant.tenantId, 'time-logs');
    await h.app.store.plugins.enable(h.tenant.tenantId, 'timesheets');
  });
  afterAll(async () => {
    await h?.close();
  });

  const deps = (extra: Partial<EngineDeps> = {}): EngineDeps =>
    h.deps({
      plugins: {
        'time-logs': timeLogsPlugin.phase({
          baseUrl: `${h.sandboxes.ado.url}/_7pace/api`,
          apiToken: timetrackerToken(),
        }),
        timesheets: timesheetsPlugin.phase({
          baseUrl: `${h.sandboxes.ado.url}/_timesheets/v2`,
          apiToken: timesheetsToken(),
        }),
      },
      ...extra,
    });

  /** Per (item, person, day) Jira holds max(7pace, timesheet); each entry is posted at most once. */
  function expectNoTimeTwice(t: Awaited<ReturnType<typeof tally>>) {
    const groups = new Set([...t.sheet.keys(), ...t.pace.keys()]);
    for (const k of groups) {
      expect(t.jira.get(k) ?? 0, k).toBe(Math.max(t.pace.get(k) ?? 0, t.sheet.get(k) ?? 0));
    }
    expect([...t.jira.keys()].filter((k) => !groups.has(k))).toEqual([]);
    expect(new Set(t.markers).size).toBe(t.markers.length);
  }

  it('logs only the time 7pace did not bring, through a crash mid-phase and one before its checkpoint', async () => {
    // Make sure both cases are there: an entry equal to a 7pace log (counted twice if posted) and one above it.
    const logs = (await h.control('ado', 'GET', '/_sandbox/7pace/worklogs')) as SourceLog[];
    const a = logs[0] as SourceLog;
    const b = logs.find((l) => l.workItemId !== a.workItemId) as SourceLog;
    await h.control('ado', 'DELETE', `/_sandbox/timesheets/entries?workItemId=${a.workItemId}`);
    await h.control('ado', 'DELETE', `/_sandbox/timesheets/entries?workItemId=${b.workItemId}`);
    const same = logs.filter(
      (l) =>
        l.workItemId === a.workItemId &&
        l.user.uniqueName === a.user.uniqueName &&
        l.timestamp.slice(0, 10) === a.timestamp.slice(0, 10),
    );
    const samePace = same.reduce((n, l) => n + l.length, 0);
    const at = (l: SourceLog, hours: number) => ({
      workItemId: l.workItemId,
      hours,
      date: l.timestamp.slice(0, 10),
      notes: 'From the timesheet',
      user: { name: l.user.name, email: l.user.uniqueName },
    });
    await h.control('ado', 'POST', '/_sandbox/timesheets/entries', at(a, samePace / 3600));
    const bPace = logs
      .filter(
        (l) =>
          l.workItemId === b.workItemId &&
          l.user.uniqueName === b.user.uniqueName &&
          l.timestamp.slice(0, 10) === b.timestamp.slice(0, 10),
      )
      .reduce((n, l) => n + l.length, 0);
    await h.control('ado', 'POST', '/_sandbox/timesheets/entries', at(b, bPace / 3600 + 2));

    const run = await newRun(h, 'Timesheets crash');
    let sheetPosts = 0;
    let sheetChunksDone = 0;
    let checkpointCrashed = false;
    const d = deps({
      crash: (point) => {
        if (point === 'before-checkpoint' && sheetChunksDone === 1 && !checkpointCrashed) {
          checkpointCrashed = true;
          throw new SimulatedCrash('killed before the timesheets checkpoint');
        }
      },
    });
    const jira = d.target;
    const real = jira.http.request.bind(jira.http);
    jira.http.request = (async (method: string, path: string, options?: { body?: unknown }) => {
      const res = await real(method, path, options);
      // The 2nd timesheet worklog lands in Jira, then the worker dies.
      if (
        method === 'POST' &&
        JSON.stringify(options?.body ?? '').includes('timesheet entry') &&
        ++sheetPosts === 2
      ) {
        throw new SimulatedCrash('killed between two timesheet worklogs');
      }
      return res;
    }) as typeof jira.http.request;
    const module = d.plugins?.timesheets;
    if (!module) throw new Error('no timesheets module');
    const counting = countingChunks(module, () => sheetChunksDone++);
    const { crashes, onError } = crashCollector();
    const answers = await h.drive(run.id, { ...d, plugins: { ...d.plugins, timesheets: counting } }, onError);
    expect(answers.at(-1)).toBe('done');
    expect(crashes).toHaveLength(2);
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({ status: 'COMPLETED' });

    const t = await tally(h);
    expectNoTimeTwice(t);
    // The entry equal to its 7pace time posted nothing; the one 2h above posted exactly those 2h.
    const aKey = group(a.workItemId, a.user.uniqueName, a.timestamp.slice(0, 10));
    const bKey = group(b.workItemId, b.user.uniqueName, b.timestamp.slice(0, 10));
    expect(t.jira.get(aKey)).toBe(samePace);
    expect(t.jira.get(bKey)).toBe(bPace + 2 * 3600);
    expect(t.markers.length).toBeGreaterThan(2);
    expect(t.markers.length).toBeLessThan(t.entries.length); // some entries were wholly covered
    // Every timesheet worklog left the remaining estimate alone.
    expect((await worklogPosts(h)).every((path) => path.includes('adjustEstimate=leave'))).toBe(true);
  });

  it('a second run into the same Jira adds no worklog', async () => {
    const before = await tally(h);
    const run = await newRun(h, 'Timesheets again');
    expect((await h.drive(run.id, deps())).at(-1)).toBe('done');
    expect(await h.app.store.runs.get(h.tenant.tenantId, run.id)).toMatchObject({ status: 'COMPLETED' });
    const after = await tally(h);
    expect(after.worklogs).toBe(before.worklogs);
    expectNoTimeTwice(after);
  });

  it('without the time-logs plugin in the run, the 7pace worklogs already in Jira still cover: no time twice', async () => {
    await h.app.store.plugins.disable(h.tenant.tenantId, 'time-logs');
    try {
      const logs = (await h.control('ado', 'GET', '/_sandbox/7pace/worklogs')) as SourceLog[];
      const l = logs[0] as SourceLog;
      // The same time as a 7pace log an earlier run migrated: nothing to post.
      const same = (await h.control('ado', 'POST', '/_sandbox/timesheets/entries', {
        workItemId: l.workItemId,
        hours: l.length / 3600,
        date: l.timestamp.slice(0, 10),
        user: { name: l.user.name, email: l.user.uniqueName },
      })) as Entry;
      const before = await tally(h);
      const run = await newRun(h, 'Timesheets alone');
      const d = deps();
      expect(
        (await h.drive(run.id, { ...d, plugins: { timesheets: d.plugins?.timesheets as never } })).at(-1),
      ).toBe('done');
      const after = await tally(h);
      // Per group Jira still holds max(7pace, timesheet): the new entry is posted only for what the group's
      // timesheet total now exceeds the 7pace time by (nothing when the group had no other entry).
      expectNoTimeTwice(after);
      const k = group(l.workItemId, l.user.uniqueName, l.timestamp.slice(0, 10));
      // (`before` was tallied with the new entry in the sheet already.)
      const others = (before.sheet.get(k) ?? 0) - l.length;
      if (others === 0) expect(after.markers).not.toContain(String(same.id));
      expect(after.jira.get(k)).toBe(Math.max(after.pace.get(k) ?? 0, others + l.length));
    } finally {
      await h.app.store.plugins.enable(h.tenant.tenantId, 'time-logs');
    }
  });
});
