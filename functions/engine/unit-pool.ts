/**
 * One pool for a phase's units: at most `window` units worked and not yet checkpointed at any time, the
 * checkpoint moving over the finished ones, in order or not.
 *
 * Units start in order, while fewer than `window` units are under way or finished and not yet moved (so a crash
 * loses at most `window` units: "resume loses at most 50"), and only within `reach` positions of the checkpoint's
 * first unworked unit (which bounds the list of units it records as worked past that one). Whenever `minMove`
 * units have finished (or nothing else is under way, or `minMoveFull` have while the window or the reach lets
 * no unit start: waiting for more would idle the pool), the checkpoint moves over them, one move after another,
 * while the other units go on: its first unworked unit advances over the finished prefix, and the finished units
 * past it are recorded as done (`done`), so a resume passes over them. A slow unit so holds back no other unit
 * until the pool reaches `reach` units past it. `move` says whether to go on (false: a pause or cancel was asked,
 * the run was taken over): then no unit starts any more, those under way end and are moved too. An aborted `signal`
 * (the invocation's interrupt: its time budget spent, a token refused, a wait handed back) stops the starting the
 * same way; what is moved then is `move`'s to say. When a unit or a move throws, no unit starts,
 * `stopped()` turns true for those under way, and once all have settled the first error is thrown: what was not
 * moved is worked again by the next call (units are safe to work again). Pure: the runner brings the work and the
 * checkpoint's write.
 */
import { flowProbe } from '#platform/flow-probe.ts';

export interface UnitPoolOptions<R> {
  /** The checkpoint: the first unit not yet worked. */
  from: number;
  /** Units past `from` the checkpoint already covers (worked out of order): never worked again. */
  done?: readonly number[];
  /** The phase's units. */
  total: number;
  /** Most units under way or finished and not yet moved (50: "resume loses at most 50"). */
  window: number;
  /** A unit starts only this far past the checkpoint's first unworked unit (bounds `done`). */
  reach: number;
  /** This many finished units are moved at once; fewer only when nothing else is under way, or: */
  minMove: number;
  /** This many when no unit may start until the checkpoint moves (the window or the reach full). */
  minMoveFull: number;
  work(index: number, stopped: () => boolean): Promise<R>;
  /** Moves the checkpoint over `units` (ascending, with their results) to `to`; false: stop. */
  move(step: PoolMove<R>): Promise<boolean>;
  /** Read before each unit starts; aborted: start no more. */
  signal: AbortSignal;
}

/** One move of the checkpoint. */
export interface PoolMove<R> {
  units: { index: number; result: R }[];
  /** Where it stands after the move: the first unworked unit, and the worked ones past it (ascending). */
  to: { index: number; done: number[] };
}

/** Where the checkpoint stands once the pool ended, and why it ended. */
export interface UnitPoolEnd {
  checkpoint: number;
  ended: 'done' | 'stopped';
}

export async function workUnitPool<R>(o: UnitPoolOptions<R>): Promise<UnitPoolEnd> {
  const probe = flowProbe();
  const finished = new Map<number, R>();
  // Units at or past the checkpoint it covers already; the checkpoint is its first unit not among them.
  let covered = new Set((o.done ?? []).filter((i) => i >= o.from));
  let checkpoint = o.from;
  while (covered.has(checkpoint)) covered.delete(checkpoint++);
  let next = checkpoint;
  const skipCovered = () => {
    while (next < o.total && covered.has(next)) next++;
  };
  skipCovered();
  let running = 0;
  let failed: { error: unknown } | undefined;
  let halted = false;
  let wake: () => void = () => undefined;
  const stopped = () => failed !== undefined;
  const roomFor = () => running + finished.size < o.window && next < checkpoint + o.reach;
  // Units are left but none may start until the checkpoint moves: waiting for `minMove` would only idle the pool.
  const blocked = () => !failed && !halted && next < o.total && !roomFor();

  const start = (index: number) => {
    running++;
    probe?.unit(1);
    o.work(index, stopped)
      .then(
        (result) => {
          finished.set(index, result);
          probe?.held(1);
        },
        (error) => {
          failed ??= { error };
        },
      )
      .finally(() => {
        running--;
        probe?.unit(-1);
        wake();
      });
  };

  for (;;) {
    while (!failed && !halted && next < o.total && roomFor()) {
      if (o.signal.aborted) {
        halted = true;
        break;
      }
      start(next++);
      skipCovered();
    }
    probe?.windowFull(!failed && !halted && next < o.total);
    if (failed) {
      if (running === 0) throw failed.error;
    } else if (
      finished.size > 0 &&
      (finished.size >= o.minMove || running === 0 || (blocked() && finished.size >= o.minMoveFull))
    ) {
      const units = [...finished.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, result]) => ({ index, result }));
      finished.clear();
      const after = new Set(covered);
      for (const u of units) after.add(u.index);
      let to = checkpoint;
      while (after.has(to)) after.delete(to++);
      let goOn: boolean;
      const moveStarted = probe && performance.now();
      try {
        goOn = await o.move({ units, to: { index: to, done: [...after].sort((a, b) => a - b) } });
      } catch (error) {
        failed ??= { error };
        continue;
      } finally {
        probe?.held(-units.length);
      }
      if (probe) probe.moved(units.length, performance.now() - (moveStarted as number));
      covered = after;
      checkpoint = to;
      if (!goOn) halted = true;
      continue;
    } else if (running === 0) return { checkpoint, ended: checkpoint >= o.total ? 'done' : 'stopped' };
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
}
