/**
 * What lives for one engine invocation (one call of the state machine's RunBatch step) and dies with it: its
 * interrupt (trackers/interrupt.ts: the one way "stop now" travels, aborted with a reason) and the phases'
 * per-invocation reads (the description people map, the batched history reader), kept here under a name instead
 * of in module-level maps keyed by a context object, so that nothing of one invocation is found by the next one
 * on a reused Lambda container. The runner makes one per invocation, around the interrupt the handler gave the
 * tracker clients, and hands it to every phase in its context.
 */
import { Interrupt } from '#trackers/interrupt.ts';

export class InvocationScope {
  private readonly held_ = new Map<string, unknown>();

  constructor(readonly interrupt: Interrupt = new Interrupt()) {}

  /** The value kept under `key` for this invocation, made by `make` the first time it is asked for. */
  keep<T>(key: string, make: () => T): T {
    if (this.held_.has(key)) return this.held_.get(key) as T;
    const made = make();
    this.held_.set(key, made);
    return made;
  }

  /** The value kept under `key`, if any. */
  held<T>(key: string): T | undefined {
    return this.held_.get(key) as T | undefined;
  }

  /** Forgets `key` (a read that failed is made again by the next one to ask), only if it still holds `value`. */
  drop(key: string, value: unknown): void {
    if (this.held_.get(key) === value) this.held_.delete(key);
  }
}
