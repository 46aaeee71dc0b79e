/**
 * The live stream of one run: replays its stored events after the client's Last-Event-ID, then polls the
 * store for new ones until the run is over, the client goes away, the watcher's session ends (removed from
 * the team, role changed) or the invocation's time runs out. I/O and
 * time are injected, so the loop is tested without a table or a real clock.
 */

import type { Run, RunStatus } from '#domain/runs.ts';
import { sseComment, sseMessage } from '#domain/sse.ts';
import type { StoredRunEvent } from '#store/runs.ts';

/** Statuses a run never leaves: nothing more will be written to its stream. */
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set([
  'COMPLETED',
  'PARTIAL',
  'FAILED',
  'CANCELLED',
  'ROLLED_BACK',
]);

export interface RunStreamIo {
  /** The run's events after `afterId` (all of them without it), in id order, at most `pageSize`. */
  readEvents(afterId: string | undefined, pageSize: number): Promise<StoredRunEvent[]>;
  /** The run as it stands; undefined once it is gone (its project deleted). */
  readRun(): Promise<Pick<Run, 'status' | 'finishedAt'> | undefined>;
  /** Sends text to the client; may wait for the socket to drain. */
  write(text: string): void | Promise<void>;
  /** Waits `ms`, returning early once `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Milliseconds, the same clock `finishedAt` is written with. */
  now(): number;
  /**
   * Whether the watcher's session still stands (their user exists with the same token version). Asked at
   * every poll, after reading and before writing: what is read once the session has ended is never sent.
   */
  sessionHolds(): Promise<boolean>;
}

export interface RunStreamOptions {
  lastEventId?: string | undefined;
  pollMs: number;
  heartbeatMs: number;
  /**
   * How long after a run's end the stream still waits for events: the engine moves the status first and
   * writes the final `status` and `done` events just after, so "terminal and nothing new" right at the end
   * may only mean "not written yet".
   */
  settleMs: number;
  pageSize: number;
  /** Aborted when the client disconnects: the loop stops reading the store. */
  signal: AbortSignal;
  /** Time left in the invocation; the stream ends before it runs out (the client reconnects and resumes). */
  remainingMs?: () => number;
}

/** Why the stream ended. */
export type StreamEnd = 'done' | 'finished' | 'gone' | 'closed' | 'deadline' | 'revoked';

/**
 * The run's place an event id names (`04.00000050.`: phase and unit index, domain/run-events.ts), if it names one.
 * Ids sort by place and then within it, and more may be written at a place after the stream passed some of its
 * ids (a resume tells `running` at the place the pause left, then the first chunk writes its lines there with ids
 * sorting before that status); so each poll reads the last place again from its start and sends only what it has
 * not sent. Before the last place nothing new is written: the run has moved on from it.
 */
const PLACE = /^\d{2}\.\d{8}\./;

/**
 * A page's messages go out in pieces of about this many characters, one write a piece: a replay's page holds
 * thousands of events (a checkpoint's item holds its chunk's), and a write each kept the service's event loop
 * busy for 100 ms and more a page (the bench log's 50,000-line replay).
 */
const WRITE_PIECE_CHARS = 32 * 1024;
const placeOf = (id: string): string | undefined => PLACE.exec(id)?.[0];

export async function streamRun(io: RunStreamIo, opts: RunStreamOptions): Promise<StreamEnd> {
  let after = opts.lastEventId || undefined;
  /** What the client says it has: a place read again is sent from after it. */
  const resumedAfter = after;
  /** The place of the last event sent, and the ids sent there. */
  let place: string | undefined;
  const sentAtPlace = new Set<string>();
  let readFrom = after;
  let lastWrite = io.now();
  let terminalSeenAt: number | undefined;
  /**
   * Whether the last event sent was a `done`: the stream ends there unless a verification of the finished run
   * begins after it (`status: verifying`), whose events are sent from there. Anything else after a `done` (the
   * log lines of a chunk that was under way at a cancel) is not sent: a watcher's stream ends with `done`.
   */
  let lastWasDone = false;

  for (;;) {
    if (opts.signal.aborted) return 'closed';
    const page = await io.readEvents(readFrom, opts.pageSize);
    if (opts.signal.aborted) return 'closed';
    if (!(await io.sessionHolds())) return 'revoked';
    let fresh = 0;
    let piece = '';
    const send = async () => {
      if (!piece) return;
      const text = piece;
      piece = '';
      await io.write(text);
      lastWrite = io.now();
    };
    for (const stored of page) {
      if (sentAtPlace.has(stored.id) || (resumedAfter !== undefined && stored.id <= resumedAfter)) continue;
      if (lastWasDone && !(stored.event.type === 'status' && stored.event.status === 'verifying')) continue;
      fresh += 1;
      piece += sseMessage(stored.id, stored.event);
      after = stored.id;
      const at = placeOf(stored.id);
      if (at !== place) sentAtPlace.clear();
      place = at;
      if (place) sentAtPlace.add(stored.id);
      lastWasDone = stored.event.type === 'done';
      if (piece.length >= WRITE_PIECE_CHARS) await send();
    }
    await send();
    // A full page: there may be more right away, so read on after it before waiting.
    if (page.length >= opts.pageSize) {
      readFrom = page.at(-1)?.id;
      continue;
    }
    // The run's last `done`: one a verification follows (a finished run verified since) is not the end.
    if (lastWasDone) return 'done';
    readFrom = place ?? after;

    const run = await io.readRun();
    if (!run) return 'gone';
    if (TERMINAL_STATUSES.has(run.status)) {
      terminalSeenAt ??= io.now();
      const endedAt = run.finishedAt ? Date.parse(run.finishedAt) : terminalSeenAt;
      if (fresh === 0 && io.now() - endedAt >= opts.settleMs) return 'finished';
    }
    if (opts.remainingMs && opts.remainingMs() < opts.pollMs * 2) return 'deadline';

    const sinceWrite = io.now() - lastWrite;
    if (sinceWrite >= opts.heartbeatMs) {
      await io.write(sseComment('ping'));
      lastWrite = io.now();
    }
    await io.sleep(
      Math.max(1, Math.min(opts.pollMs, opts.heartbeatMs - (io.now() - lastWrite))),
      opts.signal,
    );
  }
}
