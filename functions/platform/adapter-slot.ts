/**
 * The one way an adapter is chosen (artifact store, payment provider, scan dispatcher, orchestrator, mailer,
 * credentials cipher): from the environment catalogue (functions/platform/env.ts) at first use, then kept for the
 * process.
 * The offline runtime and tests put their own in place with `use`; `use(undefined)` goes back to the
 * environment's choice at the next use. A choice that throws, or a promised one that rejects, is not kept: the
 * next use tries again.
 */
export interface AdapterSlot<T> {
  /** The adapter in place: the one given to `use`, else the environment's choice. */
  (): T;
  /** Puts this adapter in place (undefined: choose from the environment again at the next use). */
  use(adapter: T | undefined): void;
}

export function adapterSlot<T>(choose: () => T): AdapterSlot<T> {
  let held: { adapter: T } | undefined;
  const slot = (): T => {
    if (held) return held.adapter;
    const mine = { adapter: choose() };
    held = mine;
    if (mine.adapter instanceof Promise)
      mine.adapter.catch(() => {
        if (held === mine) held = undefined;
      });
    return mine.adapter;
  };
  slot.use = (adapter: T | undefined): void => {
    held = adapter === undefined ? undefined : { adapter };
  };
  return slot;
}
