/**
 * The tenant dashboard's state, pure: every run of the tenant as one row, fed by the runs lists (on load,
 * and polled while the socket is down) and by the live events of the tenant's WebSocket (`/api/ws`,
 * docs/console.md). No React, no DOM: the hook and the page only call these functions (unit-tested in
 * test/unit/dashboard-board.test.ts).
 */
// With its extension: the unit tests' type check (the root tsconfig, NodeNext) reads this module too.
import { isActive, RUN_PHASES } from '../runs/figures.ts';

export type RunStatus =
  | 'PENDING'
  | 'RUNNING'
  | 'PAUSED'
  | 'COMPLETED'
  | 'PARTIAL'
  | 'FAILED'
  | 'CANCELLED'
  /** A finished run being verified (it goes back to how it ended). */
  | 'VERIFYING'
  /** A finished run being rolled back or its rollback previewed (a preview goes back to how it ended). */
  | 'ROLLING_BACK'
  | 'ROLLBACK_PAUSED'
  /** What the run created is deleted from Jira. */
  | 'ROLLED_BACK';

/** A run as the runs list (`GET /api/migrations`, RunListItem) gives it; the fields the board reads. */
export interface ListedRun {
  id: string;
  projectId: string;
  status: RunStatus;
  type: string;
  dryRun: boolean;
  progressPercent: number;
  currentPhase: number;
  successCount: number;
  skippedCount: number;
  failureCount: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** Only `GET /api/migrations/{id}/status` has it: the loader adds it for a paused run. */
  pauseReason?: string | null;
}

interface EventBase {
  runId: string;
  projectId: string;
  /** ISO 8601. */
  at: string;
}
export type TenantEvent = EventBase &
  (
    | { type: 'run.started'; runType: string; dryRun: boolean }
    | {
        type: 'run.progress';
        phase: number;
        phaseName: string;
        current: number;
        total: number;
        percent: number;
        speed: number;
      }
    | { type: 'run.phase'; phase: number; phaseName: string }
    | { type: 'run.paused'; reason: string }
    | { type: 'run.resumed' }
    | { type: 'run.rollingBack' }
    | { type: 'run.waiting'; tracker: string; reason: string; until: string }
    | { type: 'run.ended'; status: RunStatus; stats: RunStats }
  );

export interface RunStats {
  created: number;
  skipped: number;
  failed: number;
}

export interface BoardRun {
  id: string;
  projectId: string;
  type: string;
  dryRun: boolean;
  status: RunStatus;
  /** 1-based; 8+ are plugins. */
  phase: number;
  phaseName?: string;
  percent: number;
  /** The current phase's work: from progress events only. */
  progress?: { current: number; total: number; speed: number };
  pauseReason?: string;
  waiting?: { tracker: string; reason: string; until: string };
  stats?: RunStats;
  /** Ordering key (newest first); an event-made row uses the start event's time until the list tells. */
  createdAt: string;
  finishedAt?: string;
  /** The newest event applied: an older one (a late frame) changes nothing. */
  lastEventAt?: string;
}

/** The runs by id. Immutable: a function answers a new board when something changed, the same one if not. */
export type Board = ReadonlyMap<string, BoardRun>;
export const emptyBoard: Board = new Map();

const TERMINAL_STATUSES = new Set(['COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED', 'ROLLED_BACK']);

/** A parsed socket frame, or undefined for anything that is not a run event (a pong, garbage). */
export function parseTenantEvent(text: string): TenantEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const e = value as Record<string, unknown>;
  if (typeof e.type !== 'string' || !e.type.startsWith('run.')) return undefined;
  if (typeof e.runId !== 'string' || typeof e.projectId !== 'string' || typeof e.at !== 'string')
    return undefined;
  return e as unknown as TenantEvent;
}

/** The list's view of a run merged into the board's: the list is the record, the events add what it lacks. */
function fromList(item: ListedRun, known: BoardRun | undefined): BoardRun {
  // A list fetched before the end event arrived must not bring an ended run back to life.
  if (known && TERMINAL_STATUSES.has(known.status) && isActive(item.status)) return known;
  const active = isActive(item.status);
  const samePhase = known?.phase === item.currentPhase;
  const run: BoardRun = {
    id: item.id,
    projectId: item.projectId,
    type: item.type,
    dryRun: item.dryRun,
    status: item.status,
    phase: item.currentPhase,
    // The events' figures are newer than a list's while the run moves (the list is written at checkpoints).
    percent:
      active && known && samePhase ? Math.max(known.percent, item.progressPercent) : item.progressPercent,
    createdAt: item.createdAt,
  };
  if (active && samePhase && known?.phaseName) run.phaseName = known.phaseName;
  if (active && samePhase && known?.progress) run.progress = known.progress;
  if (item.status === 'PAUSED') {
    const reason = item.pauseReason ?? known?.pauseReason;
    if (reason) run.pauseReason = reason;
  }
  if (active && item.status !== 'PAUSED' && known?.waiting) run.waiting = known.waiting;
  if (!active)
    run.stats = known?.stats ?? {
      created: item.successCount,
      skipped: item.skippedCount,
      failed: item.failureCount,
    };
  if (item.finishedAt) run.finishedAt = item.finishedAt;
  else if (known?.finishedAt) run.finishedAt = known.finishedAt;
  if (known?.lastEventAt) run.lastEventAt = known.lastEventAt;
  return run;
}

/** The board after a runs list (all of a project's runs, or several projects'). */
export function mergeList(board: Board, items: readonly ListedRun[]): Board {
  if (items.length === 0) return board;
  const next = new Map(board);
  for (const item of items) next.set(item.id, fromList(item, board.get(item.id)));
  return next;
}

/** A row for a run first heard of by an event (started in another console, by the CLI, by a schedule). */
function placeholder(e: TenantEvent): BoardRun {
  return {
    id: e.runId,
    projectId: e.projectId,
    type: e.type === 'run.started' ? e.runType : 'FULL',
    dryRun: e.type === 'run.started' ? e.dryRun : false,
    status: 'PENDING',
    phase: 1,
    percent: 0,
    createdAt: e.at,
  };
}

/** A new phase's work starts from nothing: the previous phase's counts do not carry over. */
function enterPhase(run: BoardRun, phase: number, phaseName: string): void {
  if (phase !== run.phase) delete run.progress;
  run.phase = phase;
  run.phaseName = phaseName;
}

function applyOne(run: BoardRun, e: TenantEvent): BoardRun {
  if (run.lastEventAt && e.at < run.lastEventAt) return run;
  // Nothing moves an ended run but its own end event again (a replay), its rollback's start (not once it is
  // rolled back), or a later list.
  const rollbackStart = e.type === 'run.rollingBack' && run.status !== 'ROLLED_BACK';
  if (TERMINAL_STATUSES.has(run.status) && e.type !== 'run.ended' && !rollbackStart) return run;
  const next: BoardRun = { ...run, lastEventAt: e.at };
  switch (e.type) {
    case 'run.started':
      next.type = e.runType;
      next.dryRun = e.dryRun;
      if (next.status === 'PENDING') next.status = 'RUNNING';
      break;
    case 'run.progress':
      enterPhase(next, e.phase, e.phaseName);
      next.percent = e.percent;
      next.progress = { current: e.current, total: e.total, speed: e.speed };
      // Items moving: whatever the run waited for is over.
      delete next.waiting;
      if (next.status === 'PENDING') next.status = 'RUNNING';
      break;
    case 'run.phase':
      enterPhase(next, e.phase, e.phaseName);
      break;
    case 'run.paused':
      next.status = next.status === 'ROLLING_BACK' ? 'ROLLBACK_PAUSED' : 'PAUSED';
      next.pauseReason = e.reason;
      delete next.waiting;
      break;
    case 'run.resumed':
      next.status = 'RUNNING';
      delete next.pauseReason;
      delete next.waiting;
      break;
    case 'run.rollingBack':
      next.status = 'ROLLING_BACK';
      delete next.pauseReason;
      delete next.waiting;
      delete next.progress;
      break;
    case 'run.waiting':
      next.waiting = { tracker: e.tracker, reason: e.reason, until: e.until };
      break;
    case 'run.ended':
      next.status = e.status;
      next.stats = e.stats;
      next.finishedAt = e.at;
      if (e.status === 'COMPLETED') next.percent = 100;
      delete next.waiting;
      delete next.pauseReason;
      delete next.progress;
      break;
  }
  return next;
}

export interface Applied {
  board: Board;
  /** Projects with a run the board had not seen: the caller fetches their runs lists. */
  unknownProjects: Set<string>;
}

/** The board after a batch of events, in arrival order. */
export function applyEvents(board: Board, events: readonly TenantEvent[]): Applied {
  const unknownProjects = new Set<string>();
  if (events.length === 0) return { board, unknownProjects };
  const next = new Map(board);
  for (const e of events) {
    let run = next.get(e.runId);
    if (!run) {
      unknownProjects.add(e.projectId);
      run = placeholder(e);
    }
    next.set(e.runId, applyOne(run, e));
  }
  return { board: next, unknownProjects };
}

/**
 * The rows to show, newest first: every active run, and the most recent `endedLimit` ended ones (a tenant's
 * history stays on the project pages).
 */
export function visibleRuns(board: Board, endedLimit = 20): BoardRun[] {
  const newestFirst = [...board.values()].sort((a, b) =>
    a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : a.createdAt < b.createdAt ? 1 : -1,
  );
  let ended = 0;
  return newestFirst.filter((r) => isActive(r.status) || ended++ < endedLimit);
}

/** A project as the projects list gives it; the fields the board reads. */
export interface ListedProject {
  id: string;
  status: string;
  /** Kept on the project by its runs' creation and status changes (absent for a project without one). */
  lastRun?: { id: string; status: string };
}

/**
 * The projects whose runs lists a poll reads: those with a run the board shows active, and those whose last run
 * (from the projects list) is active or one the board has not seen (started since the last read).
 */
export function busyProjects(board: Board, projects: readonly ListedProject[]): string[] {
  const busy = new Set<string>();
  for (const p of projects) {
    const last = p.lastRun;
    if (p.status === 'MIGRATING' || (last && (isActive(last.status) || !board.has(last.id)))) busy.add(p.id);
  }
  const known = new Set(projects.map((p) => p.id));
  for (const run of board.values())
    if (isActive(run.status) && known.has(run.projectId)) busy.add(run.projectId);
  return [...busy].sort();
}

/** The phase for people: the event's name when there is one, the console's name for the number otherwise. */
export function phaseLabel(run: Pick<BoardRun, 'phase' | 'phaseName'>): string {
  const name =
    run.phaseName ??
    (run.phase > RUN_PHASES.length ? `Plugin ${run.phase - 7}` : (RUN_PHASES[run.phase - 1] ?? 'Preflight'));
  return `Phase ${run.phase}: ${name.charAt(0).toUpperCase()}${name.slice(1)}`;
}

/** A pause for people: the server says `requested` for a person's pause, else the engine's reason. */
export function pausedText(reason: string | undefined): string {
  if (!reason) return 'Paused';
  return reason === 'requested' ? 'Paused on request' : `Paused: ${reason}`;
}

/** `14:00` at a whole minute, `14:03:20` otherwise, UTC (as the engine's log line says it). */
function clockTime(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const text = at.toISOString();
  return text.slice(17, 19) === '00' ? text.slice(11, 16) : text.slice(11, 19);
}

/** "waiting for Jira's hourly quota until 14:00 UTC": the same sentence as the run's log line. */
export function waitingText(w: NonNullable<BoardRun['waiting']>): string {
  const until = `until ${clockTime(w.until)} UTC`;
  if (w.reason === 'jira-quota-global-based') return `Waiting for Jira's hourly quota ${until}`;
  const tracker = w.tracker === 'target' ? 'Jira' : w.tracker === 'source' ? 'Azure DevOps' : w.tracker;
  return `Waiting for ${tracker}: it asked the run to slow down (rate limited) ${until}`;
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/**
 * Collects items and hands them over together `intervalMs` after the first of a batch, so a burst of progress
 * frames from many runs costs one render, not one each (at most one flush per interval).
 */
export function createBatcher<T>(
  flush: (items: T[]) => void,
  intervalMs: number,
  timers: Timers,
): { push(item: T): void; stop(): void } {
  let pending: T[] = [];
  let timer: unknown;
  return {
    push(item) {
      pending.push(item);
      if (timer !== undefined) return;
      timer = timers.set(() => {
        timer = undefined;
        const items = pending;
        pending = [];
        flush(items);
      }, intervalMs);
    },
    stop() {
      if (timer !== undefined) timers.clear(timer);
      timer = undefined;
      pending = [];
    },
  };
}
