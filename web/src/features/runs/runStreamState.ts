/**
 * What the run page knows from a run's stream, and how a batch of the stream's events changes it: a pure fold,
 * so a replay of a long run (50,000 log lines from the first event) is applied as a few batches, each one
 * render, instead of one render per event.
 */
export interface RunStreamState {
  connection: 'connecting' | 'open' | 'reconnecting' | 'ended';
  progress?: { current: number; total: number; percent: number; speed: number };
  status?: string;
  done?: { created: number; skipped: number; failed: number };
  logs: { id: string; message: string }[];
  lastEventId?: string;
}

/** One event as the EventSource gave it: its type, its id (may be empty) and its parsed data. */
export interface RunStreamEvent {
  type: 'progress' | 'log' | 'status' | 'done';
  id: string;
  data: Record<string, unknown>;
}

/** The log lines the page keeps: the newest, as many as its log box is meant to scroll through. */
export const LOG_TAIL = 200;

export function applyRunEvents(state: RunStreamState, events: readonly RunStreamEvent[]): RunStreamState {
  if (events.length === 0) return state;
  let next: RunStreamState = { ...state };
  const lines: RunStreamState['logs'] = [];
  for (const e of events) {
    if (e.id) next.lastEventId = e.id;
    if (e.type === 'progress') next.progress = e.data as RunStreamState['progress'];
    // The stream says statuses in lower case (`paused`); the API's run objects in upper case.
    else if (e.type === 'status') next.status = String(e.data.status).toUpperCase();
    else if (e.type === 'log') lines.push({ id: e.id, message: String(e.data.message) });
    else if (e.type === 'done')
      next = { ...next, done: e.data.stats as RunStreamState['done'], connection: 'ended' };
  }
  if (lines.length > 0) {
    const kept = Math.max(0, LOG_TAIL - lines.length);
    next.logs = [...(kept > 0 ? state.logs.slice(-kept) : []), ...lines.slice(-LOG_TAIL)];
  }
  return next;
}
