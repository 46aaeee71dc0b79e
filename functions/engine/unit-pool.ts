/**
 * One pool for a phase's units: a sliding window over them, the checkpoint moving over the finished prefix.
 *
 * Unit i starts only while i < checkpoint + window (at most `window` units not yet checkpointed are under way or
 * finished), in order. Whenever the units finished from the checkpoint on make a prefix of `minMove` units (or
 * nothing else is under way), the checkpoint moves over it, at most `window` units at a time, one move after
 * another, while the other units go on. So a slow unit holds back only the checkpoint, never the units behind
 * it, and the window fills again as soon as it ends. `move` says whether to go on (false: a pause or cancel was
 * asked, the run was taken over): then no unit starts any more, those under way end and their prefix is moved
 * too. `canStart` false (the time budget running low) stops the starting the same way. When a unit or a move
 * throws, no unit starts, `stopped()` turns true for those under way, and once all have settled the first error
 * is thrown: what was not moved is worked again by the next call (units are safe to work again). Pure: the
 * runner brings the work and the checkpoint's write.
 */
import { flowProbe } from '#platform/flow-probe.ts';

export interface UnitPoolOptions<R> {
  /** The checkpoint: the first unit not yet covered. */
  from: number;
  /** The phase's units. */
  total: number;
  /** Most units past the checkpoint under way or finished (50: "resume loses at most 50"). */
  window: number;
  /** A prefix this long is moved at once; a shorter one only when nothing else is under way. */
  minMove: number;
  work(index: number, stopped: () => boolean): Promise<R>;
  /** Moves the checkpoint from `from` over `results` (units from..from + results.length); false: stop. */
  move(from: number, results: R[]): Promise<boolean>;
  /** Read before each unit starts; false: start no more. */
  canStart(): boolean;
}

/** Where the checkpoint stands once the pool ended, and why it ended. */
export interface UnitPoolEnd {
  checkpoint: number;
  ended: 'done' | 'stopped';
}

export async function workUnitPool<R>(o: UnitPoolOptions<R>): Promise<UnitPoolEnd> {
  const probe = flowProbe();
  const finished = new Map<number, R>();
  let checkpoint = o.from;
  let next = o.from;
  let running = 0;
  let failed: { error: unknown } | undefined;
  let halted = false;
  let wake: () => void = () => undefined;
  const stopped = () => failed !== undefined;

  const start = (index: number) => {
    running++;
    probe?.unit(1);
    o.work(index, stopped)
      .then(
        (result) => finished.set(index, result),
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
    while (!failed && !halted && next < o.total && next < checkpoint + o.window) {
      if (!o.canStart()) {
        halted = true;
        break;
      }
      start(next++);
    }
    probe?.windowFull(!failed && !halted && next < o.total && next >= checkpoint + o.window);
    if (failed) {
      if (running === 0) throw failed.error;
    } else {
      let end = checkpoint;
      while (end < checkpoint + o.window && finished.has(end)) end++;
      if (end > checkpoint && (end - checkpoint >= o.minMove || running === 0)) {
        const results: R[] = [];
        for (let i = checkpoint; i < end; i++) {
          results.push(finished.get(i) as R);
          finished.delete(i);
        }
        let goOn: boolean;
        try {
          goOn = await o.move(checkpoint, results);
        } catch (error) {
          failed ??= { error };
          continue;
        }
        checkpoint = end;
        if (!goOn) halted = true;
        continue;
      }
      if (running === 0) return { checkpoint, ended: checkpoint >= o.total ? 'done' : 'stopped' };
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
}
