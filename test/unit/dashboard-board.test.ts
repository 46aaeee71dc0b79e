/** The tenant dashboard's pure state (web/src/features/dashboard/board.ts): lists and live events into rows. */
import { describe, expect, it, vi } from 'vitest';
import {
  applyEvents,
  type Board,
  busyProjects,
  createBatcher,
  emptyBoard,
  type ListedRun,
  mergeList,
  parseTenantEvent,
  pausedText,
  phaseLabel,
  type TenantEvent,
  visibleRuns,
  waitingText,
} from '../../web/src/features/dashboard/board.ts';

const P1 = 'project-1';
const P2 = 'project-2';

function listed(id: string, over: Partial<ListedRun> = {}): ListedRun {
  return {
    id,
    projectId: P1,
    status: 'RUNNING',
    type: 'FULL',
    dryRun: false,
    progressPercent: 10,
    currentPhase: 2,
    successCount: 0,
    skippedCount: 0,
    failureCount: 0,
    createdAt: '2026-11-26T08:00:00.000Z',
    startedAt: '2026-11-26T08:00:01.000Z',
    finishedAt: null,
    ...over,
  };
}

const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 8, 0, s)).toISOString();
const base = (runId: string, s: number, projectId = P1) => ({ runId, projectId, at: at(s) });
const progress = (runId: string, s: number, percent: number, phase = 2): TenantEvent => ({
  ...base(runId, s),
  type: 'run.progress',
  phase,
  phaseName: phase === 2 ? 'create' : 'links',
  current: percent,
  total: 100,
  percent,
  speed: 12.5,
});

const run = (board: Board, id: string) => {
  const r = board.get(id);
  if (!r) throw new Error(`no row ${id}`);
  return r;
};

describe('the dashboard board', () => {
  it('takes the runs list as rows, newest first across projects', () => {
    const board = mergeList(emptyBoard, [
      listed('a', { createdAt: '2026-11-26T07:00:00.000Z' }),
      listed('b', { projectId: P2, createdAt: '2026-11-26T09:00:00.000Z' }),
      listed('c', { createdAt: '2026-11-26T08:00:00.000Z', status: 'COMPLETED', successCount: 5 }),
    ]);
    expect(visibleRuns(board).map((r) => r.id)).toEqual(['b', 'c', 'a']);
    expect(run(board, 'c').stats).toEqual({ created: 5, skipped: 0, failed: 0 });
    expect(run(board, 'a').stats).toBeUndefined();
  });

  it('moves two runs of two projects with their progress events, then ends both with their stats', () => {
    let board = mergeList(emptyBoard, [listed('a'), listed('b', { projectId: P2 })]);
    board = applyEvents(board, [progress('a', 1, 20), { ...progress('b', 1, 30), projectId: P2 }]).board;
    expect(run(board, 'a')).toMatchObject({ percent: 20, phaseName: 'create', progress: { current: 20 } });
    expect(run(board, 'b').percent).toBe(30);
    board = applyEvents(board, [
      {
        ...base('a', 2),
        type: 'run.ended',
        status: 'COMPLETED',
        stats: { created: 9, skipped: 1, failed: 0 },
      },
      {
        ...base('b', 2, P2),
        type: 'run.ended',
        status: 'PARTIAL',
        stats: { created: 7, skipped: 0, failed: 3 },
      },
    ]).board;
    expect(run(board, 'a')).toMatchObject({ status: 'COMPLETED', percent: 100, finishedAt: at(2) });
    expect(run(board, 'a').stats).toEqual({ created: 9, skipped: 1, failed: 0 });
    expect(run(board, 'b')).toMatchObject({ status: 'PARTIAL', percent: 30 });
    expect(run(board, 'a').progress).toBeUndefined();
  });

  it('adds a run it did not know from its events and names the project to fetch', () => {
    const { board, unknownProjects } = applyEvents(emptyBoard, [
      { ...base('new', 5, P2), type: 'run.started', runType: 'SAMPLE', dryRun: true },
      progress('other', 6, 40),
    ]);
    expect(run(board, 'new')).toMatchObject({
      status: 'RUNNING',
      type: 'SAMPLE',
      dryRun: true,
      createdAt: at(5),
    });
    expect(run(board, 'other')).toMatchObject({ status: 'RUNNING', percent: 40, projectId: P1 });
    expect([...unknownProjects].sort()).toEqual([P1, P2]);
    // Known runs name nothing.
    expect(applyEvents(board, [progress('other', 7, 41)]).unknownProjects.size).toBe(0);
  });

  it('shows a pause with its reason, a wait with its end, and clears both when the run moves again', () => {
    let board = mergeList(emptyBoard, [listed('a')]);
    board = applyEvents(board, [{ ...base('a', 1), type: 'run.paused', reason: 'Jira token revoked' }]).board;
    expect(run(board, 'a')).toMatchObject({ status: 'PAUSED', pauseReason: 'Jira token revoked' });
    board = applyEvents(board, [{ ...base('a', 2), type: 'run.resumed' }]).board;
    expect(run(board, 'a').status).toBe('RUNNING');
    expect(run(board, 'a').pauseReason).toBeUndefined();
    const until = '2026-11-26T14:00:00.000Z';
    board = applyEvents(board, [
      { ...base('a', 3), type: 'run.waiting', tracker: 'target', reason: 'jira-quota-global-based', until },
    ]).board;
    expect(waitingText(run(board, 'a').waiting!)).toBe("Waiting for Jira's hourly quota until 14:00 UTC");
    board = applyEvents(board, [progress('a', 4, 50)]).board;
    expect(run(board, 'a').waiting).toBeUndefined();
  });

  it('ignores a late frame and anything but an end after the run ended', () => {
    let board = mergeList(emptyBoard, [listed('a')]);
    board = applyEvents(board, [progress('a', 5, 60)]).board;
    board = applyEvents(board, [progress('a', 4, 55)]).board;
    expect(run(board, 'a').percent).toBe(60);
    board = applyEvents(board, [
      { ...base('a', 6), type: 'run.ended', status: 'FAILED', stats: { created: 1, skipped: 0, failed: 2 } },
      { ...base('a', 7), type: 'run.resumed' },
    ]).board;
    expect(run(board, 'a').status).toBe('FAILED');
  });

  it("follows a finished run's rollback: rolling back, its progress and pause, then ROLLED_BACK", () => {
    // Prepare: a run that ended
    let board = mergeList(emptyBoard, [listed('a', { status: 'COMPLETED', progressPercent: 100 })]);

    // Act: its rollback starts, moves, pauses, resumes and ends
    board = applyEvents(board, [
      { ...base('a', 1), type: 'run.rollingBack' },
      progress('a', 2, 40, 9),
      { ...base('a', 3), type: 'run.paused', reason: 'requested' },
    ]).board;

    // Assess
    expect(run(board, 'a')).toMatchObject({
      status: 'ROLLBACK_PAUSED',
      percent: 40,
      pauseReason: 'requested',
    });
    board = applyEvents(board, [
      { ...base('a', 4), type: 'run.rollingBack' },
      {
        ...base('a', 5),
        type: 'run.ended',
        status: 'ROLLED_BACK',
        stats: { created: 3, skipped: 0, failed: 0 },
      },
      { ...base('a', 6), type: 'run.rollingBack' },
    ]).board;
    expect(run(board, 'a')).toMatchObject({
      status: 'ROLLED_BACK',
      stats: { created: 3, skipped: 0, failed: 0 },
    });
  });

  it('keeps the live figures over an older list, and never revives an ended run from a stale list', () => {
    let board = mergeList(emptyBoard, [listed('a', { progressPercent: 10 })]);
    board = applyEvents(board, [progress('a', 1, 35)]).board;
    board = mergeList(board, [listed('a', { progressPercent: 20 })]);
    expect(run(board, 'a')).toMatchObject({ percent: 35, phaseName: 'create', progress: { current: 35 } });
    board = applyEvents(board, [
      {
        ...base('a', 2),
        type: 'run.ended',
        status: 'COMPLETED',
        stats: { created: 3, skipped: 0, failed: 0 },
      },
    ]).board;
    board = mergeList(board, [listed('a', { status: 'RUNNING', progressPercent: 40 })]);
    expect(run(board, 'a').status).toBe('COMPLETED');
  });

  it('follows a polled list alone: pause reason, a new phase, the end', () => {
    let board = mergeList(emptyBoard, [listed('a')]);
    board = mergeList(board, [listed('a', { status: 'PAUSED', pauseReason: 'Paused by a user' })]);
    expect(run(board, 'a')).toMatchObject({ status: 'PAUSED', pauseReason: 'Paused by a user' });
    board = mergeList(board, [listed('a', { currentPhase: 4, progressPercent: 5 })]);
    expect(run(board, 'a')).toMatchObject({ status: 'RUNNING', phase: 4, percent: 5 });
    expect(run(board, 'a').pauseReason).toBeUndefined();
    board = mergeList(board, [
      listed('a', { status: 'COMPLETED', progressPercent: 100, successCount: 8, finishedAt: at(9) }),
    ]);
    expect(run(board, 'a')).toMatchObject({ status: 'COMPLETED', percent: 100, finishedAt: at(9) });
    expect(run(board, 'a').stats).toEqual({ created: 8, skipped: 0, failed: 0 });
  });

  it('shows every active run and only the most recent ended ones', () => {
    const items = Array.from({ length: 5 }, (_, i) =>
      listed(`r${i}`, { createdAt: at(i), status: i === 0 ? 'RUNNING' : 'COMPLETED' }),
    );
    expect(visibleRuns(mergeList(emptyBoard, items), 2).map((r) => r.id)).toEqual(['r4', 'r3', 'r0']);
  });

  it('names the projects a poll reads: an active run, a last run active or not seen yet, migrating', () => {
    const board = mergeList(emptyBoard, [
      listed('a', { projectId: P1, status: 'PAUSED' }),
      listed('b', { projectId: P2, status: 'COMPLETED' }),
      listed('c', { projectId: 'gone', status: 'RUNNING' }),
    ]);
    const projects = [
      { id: P1, status: 'READY', lastRun: { id: 'a', status: 'PAUSED' } },
      { id: P2, status: 'COMPLETED', lastRun: { id: 'b', status: 'COMPLETED' } },
      { id: 'p3', status: 'MIGRATING' },
      { id: 'p4', status: 'READY' },
      { id: 'p5', status: 'COMPLETED', lastRun: { id: 'new dry run', status: 'COMPLETED' } },
      { id: 'p6', status: 'READY', lastRun: { id: 'b', status: 'RUNNING' } },
    ];
    expect(busyProjects(board, projects)).toEqual(['p3', 'p5', 'p6', P1]);
  });

  it('answers the same board when nothing arrives', () => {
    const board = mergeList(emptyBoard, [listed('a')]);
    expect(mergeList(board, [])).toBe(board);
    expect(applyEvents(board, []).board).toBe(board);
  });

  it('parses run events and drops pongs and garbage', () => {
    expect(parseTenantEvent(JSON.stringify({ ...base('a', 1), type: 'run.resumed' }))?.type).toBe(
      'run.resumed',
    );
    expect(parseTenantEvent('{"type":"pong"}')).toBeUndefined();
    expect(parseTenantEvent('not json')).toBeUndefined();
    expect(parseTenantEvent('{"type":"run.resumed","runId":1}')).toBeUndefined();
    expect(parseTenantEvent('null')).toBeUndefined();
  });

  it('names phases and waits for people', () => {
    expect(phaseLabel({ phase: 4, phaseName: 'links' })).toBe('Phase 4: Links');
    expect(phaseLabel({ phase: 3 })).toBe('Phase 3: Hierarchy');
    expect(phaseLabel({ phase: 9 })).toBe('Phase 9: Plugin 2');
    expect(pausedText('requested')).toBe('Paused on request');
    expect(pausedText('Jira token revoked')).toBe('Paused: Jira token revoked');
    expect(pausedText(undefined)).toBe('Paused');
    expect(
      waitingText({ tracker: 'source', reason: 'ado-rate-limited', until: '2026-11-26T10:03:20.000Z' }),
    ).toBe('Waiting for Azure DevOps: it asked the run to slow down (rate limited) until 10:03:20 UTC');
  });
});

describe('the event batcher', () => {
  it('hands a burst over as one batch, at most once per interval', () => {
    vi.useFakeTimers();
    try {
      const batches: number[][] = [];
      const batcher = createBatcher<number>((items) => batches.push(items), 250, {
        set: (fn, ms) => setTimeout(fn, ms),
        clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
      });
      for (let i = 0; i < 50; i++) batcher.push(i);
      expect(batches).toEqual([]);
      vi.advanceTimersByTime(250);
      expect(batches).toHaveLength(1);
      expect(batches[0]).toHaveLength(50);
      batcher.push(50);
      vi.advanceTimersByTime(100);
      batcher.push(51);
      vi.advanceTimersByTime(150);
      expect(batches[1]).toEqual([50, 51]);
      batcher.push(52);
      batcher.stop();
      vi.advanceTimersByTime(1000);
      expect(batches).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
