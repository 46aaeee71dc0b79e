/** The events a run emits for its live stream (the spec's Events), and their order keys. Pure. */
export type RunEvent =
  | { type: 'progress'; current: number; total: number; percent: number; speed: number }
  | { type: 'log'; message: string }
  | { type: 'status'; status: string }
  | { type: 'done'; stats: { created: number; skipped: number; failed: number } };

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/**
 * Event ids sort in the order things happened: the position in the run (phase, unit index) first, then the
 * event's place within that chunk. Derived from the checkpoint, so a chunk worked twice writes the same ids
 * (an overwrite, never a second copy).
 */
export function chunkEventId(phase: number, index: number, n: number): string {
  return `${pad(phase, 2)}.${pad(index, 8)}.${pad(n, 4)}`;
}

/** Status events sit after every chunk event of their position; `at` (ms) keeps repeated ones apart. */
export function statusEventId(phase: number, index: number, at: number): string {
  return `${pad(phase, 2)}.${pad(index, 8)}.z${pad(at, 15)}`;
}
