/**
 * The bench's view of the engine's flow (functions/platform/flow-probe.ts): per phase, the units in flight on
 * average and at the peak, how long the pool's window let no unit start, and how long requests waited on their
 * issue's writes, their endpoint's lane, a pause and a pace, the finished units awaiting a move and the moves; the requests in flight per endpoint come from the
 * sandboxes' request logs (each answer's time at the sandbox). Figures only.
 */
import type { FlowProbe, RequestWait } from '../../functions/platform/flow-probe.ts';

export interface FlowFigures {
  ms: number;
  avgUnits: number;
  peakUnits: number;
  /** Time the window held the pool (units left, none allowed to start). */
  windowMs: number;
  /** Finished units waiting for a move of the checkpoint, on average (they still count in the window). */
  avgHeld: number;
  /** The checkpoint's moves: how many, their units and their time on average. */
  moves: { count: number; avgUnits: number; avgMs: number };
  /** Request-milliseconds waited, by what on. */
  waits: Record<RequestWait, number>;
  /** The endpoints whose requests waited longest for a lane slot, with the lane's in-flight limit at the end. */
  laneWaits: { endpoint: string; ms: number; limit?: number }[];
}

export class FlowStats implements FlowProbe {
  private since = performance.now();
  private at = this.since;
  private units = 0;
  private unitArea = 0;
  private peak = 0;
  private heldUnits = 0;
  private heldArea = 0;
  private moves = { count: 0, units: 0, ms: 0 };
  private windowSince: number | undefined;
  private windowMs = 0;
  private waits: Record<RequestWait, number> = { issue: 0, lane: 0, pause: 0, pace: 0 };
  private laneWaits = new Map<string, number>();

  /** `laneLimit`: an endpoint's in-flight limit now (the pacers'), for the figures. */
  constructor(private readonly laneLimit: (endpoint: string) => number | undefined = () => undefined) {}

  unit(delta: 1 | -1): void {
    this.advance();
    this.units += delta;
    this.peak = Math.max(this.peak, this.units);
  }

  held(delta: number): void {
    this.advance();
    this.heldUnits += delta;
  }

  moved(units: number, ms: number): void {
    this.moves.count++;
    this.moves.units += units;
    this.moves.ms += ms;
  }

  windowFull(full: boolean): void {
    const now = performance.now();
    if (full) this.windowSince ??= now;
    else if (this.windowSince !== undefined) {
      this.windowMs += now - this.windowSince;
      this.windowSince = undefined;
    }
  }

  waited(on: RequestWait, endpoint: string, ms: number): void {
    this.waits[on] += ms;
    if (on === 'lane') this.laneWaits.set(endpoint, (this.laneWaits.get(endpoint) ?? 0) + ms);
  }

  /** The figures since the last take; starts afresh. */
  take(): FlowFigures {
    this.advance();
    this.windowFull(false);
    const ms = this.at - this.since;
    const figures: FlowFigures = {
      ms,
      avgUnits: ms > 0 ? this.unitArea / ms : 0,
      peakUnits: this.peak,
      avgHeld: ms > 0 ? this.heldArea / ms : 0,
      moves: {
        count: this.moves.count,
        avgUnits: this.moves.count ? this.moves.units / this.moves.count : 0,
        avgMs: this.moves.count ? this.moves.ms / this.moves.count : 0,
      },
      windowMs: this.windowMs,
      waits: this.waits,
      laneWaits: [...this.laneWaits.entries()]
        .map(([endpoint, w]) => ({ endpoint, ms: w }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 3)
        .map((l) => ({ ...l, limit: this.laneLimit(l.endpoint) })),
    };
    this.since = this.at;
    this.unitArea = 0;
    this.heldArea = 0;
    this.moves = { count: 0, units: 0, ms: 0 };
    this.peak = this.units;
    this.windowMs = 0;
    this.waits = { issue: 0, lane: 0, pause: 0, pace: 0 };
    this.laneWaits = new Map();
    return figures;
  }

  private advance(): void {
    const now = performance.now();
    this.unitArea += this.units * (now - this.at);
    this.heldArea += this.heldUnits * (now - this.at);
    this.at = now;
  }
}

/** Requests in flight per endpoint on average over `ms` (each answer's time at the sandbox), busiest first. */
export function inFlight(
  log: { endpoint?: string; method: string; path: string; ms?: number }[],
  ms: number,
): { endpoint: string; avg: number }[] {
  const busy = new Map<string, number>();
  for (const e of log) {
    const key = e.endpoint ?? `${e.method} ${e.path.split('?')[0]}`;
    busy.set(key, (busy.get(key) ?? 0) + (e.ms ?? 0));
  }
  return [...busy.entries()]
    .map(([endpoint, b]) => ({ endpoint, avg: ms > 0 ? b / ms : 0 }))
    .sort((a, b) => b.avg - a.avg);
}

/** The flow's lines for one phase. */
export function flowLines(
  f: FlowFigures,
  jira: Parameters<typeof inFlight>[0],
  ado: Parameters<typeof inFlight>[0],
) {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const flights = [
    ...inFlight(jira, f.ms),
    ...inFlight(ado, f.ms).map((e) => ({ ...e, endpoint: `ADO ${e.endpoint}` })),
  ]
    .sort((a, b) => b.avg - a.avg)
    .slice(0, 4)
    .map((e) => `${e.endpoint} ${e.avg.toFixed(1)}`)
    .join(', ');
  return [
    `    flow: units in flight avg ${f.avgUnits.toFixed(1)}, peak ${f.peakUnits}, finished awaiting a move avg ${f.avgHeld.toFixed(1)}; ${f.moves.count} moves of ${f.moves.avgUnits.toFixed(1)} units, ${f.moves.avgMs.toFixed(0)} ms avg; window full ${s(f.windowMs)}; requests waited on issue ${s(f.waits.issue)}, lane ${s(f.waits.lane)}, pause ${s(f.waits.pause)}, pace ${s(f.waits.pace)}`,
    `    in flight: ${flights || '-'}${f.laneWaits.length ? `; lane waits: ${f.laneWaits.map((l) => `${l.endpoint} ${s(l.ms)}${l.limit ? ` (limit ${l.limit})` : ''}`).join(', ')}` : ''}`,
  ];
}
