/**
 * A run's live events over Server-Sent Events (GET /api/migrations/{runId}/stream). The stream starts at the run's
 * newest LOG_TAIL events (`tail`), not its first: the page shows no more than that of the log, and a long run's
 * whole history (50,000 lines for a 50,000-item run) cost the browser seconds of parsing and dispatching events it
 * threw away. The browser's EventSource reconnects by itself with Last-Event-ID, which the stream prefers to `tail`;
 * when it gives up (the token expired: a refused stream is final), a fresh token is fetched and a new EventSource
 * resumes from the last event id seen (`lastEventId` query). A `done` closes it; when the run is worked on again
 * after that (`working` turns true: a verification started), a new one goes on from the last event seen.
 */
import { useEffect, useRef, useState } from 'react';
import { currentToken, refreshSession } from '../../api/client';
import { applyRunEvents, LOG_TAIL, type RunStreamEvent, type RunStreamState } from './runStreamState';

export type { RunStreamState };

export function useRunStream(runId: string, working = true): RunStreamState {
  const [state, setState] = useState<RunStreamState>({ connection: 'connecting', logs: [] });
  const lastId = useRef<string | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const wasWorking = useRef(working);

  useEffect(() => {
    if (working && !wasWorking.current) setGeneration((g) => g + 1);
    wasWorking.current = working;
  }, [working]);

  useEffect(() => {
    if (generation > 0) setState((s) => ({ ...s, connection: 'connecting' }));
    let source: EventSource | undefined;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Events wait for the next frame and are applied together: a replay delivers thousands a second, and a
    // render per event would keep the page busy long after the last one arrived.
    let pending: RunStreamEvent[] = [];
    let frame: number | undefined;
    const flush = () => {
      frame = undefined;
      const batch = pending;
      pending = [];
      setState((s) => applyRunEvents(s, batch));
    };
    const queue = (type: RunStreamEvent['type'], e: Event) => {
      const m = e as MessageEvent;
      if (m.lastEventId) lastId.current = m.lastEventId;
      pending.push({ type, id: m.lastEventId, data: JSON.parse(m.data) as Record<string, unknown> });
      if (type === 'done') {
        source?.close();
        if (frame !== undefined) cancelAnimationFrame(frame);
        flush();
      } else if (frame === undefined) frame = requestAnimationFrame(flush);
    };

    const open = () => {
      const params = new URLSearchParams({ token: currentToken() ?? '' });
      if (lastId.current) params.set('lastEventId', lastId.current);
      else params.set('tail', String(LOG_TAIL));
      source = new EventSource(`/api/migrations/${encodeURIComponent(runId)}/stream?${params}`);
      source.onopen = () => setState((s) => ({ ...s, connection: 'open' }));
      for (const type of ['progress', 'log', 'status', 'done'] as const)
        source.addEventListener(type, (e) => queue(type, e));
      source.onerror = () => {
        if (stopped || source?.readyState !== EventSource.CLOSED) {
          setState((s) => (s.connection === 'ended' ? s : { ...s, connection: 'reconnecting' }));
          return;
        }
        setState((s) => (s.connection === 'ended' ? s : { ...s, connection: 'reconnecting' }));
        timer = setTimeout(() => {
          void refreshSession().then(() => {
            if (!stopped) open();
          });
        }, 1000);
      };
    };
    open();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (frame !== undefined) cancelAnimationFrame(frame);
      source?.close();
    };
  }, [runId, generation]);

  return state;
}
