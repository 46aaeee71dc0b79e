/**
 * The engine's flow, for the bench only: what holds units and requests back. The unit pool (engine/unit-pool.ts)
 * and the HTTP pacer (trackers/pacing.ts) tell a probe, if one is set, when units start and settle, when the
 * window stops the pool from starting more, and how long each request waited and on what. Nothing is set in
 * production or in tests (each call is one undefined check); `npm run bench` sets one and prints the figures.
 */

/** What a request waited on before it was sent. */
export type RequestWait = 'issue' | 'lane' | 'pause' | 'pace';

export interface FlowProbe {
  /** A pool's unit started (+1) or settled (-1). */
  unit(delta: 1 | -1): void;
  /** The pool has units left but its window lets none start (true), or it may start again / ended (false). */
  windowFull(full: boolean): void;
  /** Finished units now wait for a move of the checkpoint (+n), or a move took them (-n). */
  held(delta: number): void;
  /** A move of the checkpoint over `units` units took `ms`. */
  moved(units: number, ms: number): void;
  /** A request waited `ms` on `on` before its send (`issue`: its issue's writes; `lane`: its endpoint's slot). */
  waited(on: RequestWait, endpoint: string, ms: number): void;
}

let current: FlowProbe | undefined;

export function setFlowProbe(probe: FlowProbe | undefined): void {
  current = probe;
}

export function flowProbe(): FlowProbe | undefined {
  return current;
}
