/**
 * A run's live events over Server-Sent Events (GET /api/migrations/{runId}/stream). The browser's EventSource
 * reconnects by itself with Last-Event-ID; when it gives up (the token expired: a refused stream is final),
 * a fresh token is fetched and a new EventSource resumes from the last event id seen (`lastEventId` query).
 */
import { useEffect, useRef, useState } from 'react';
import { currentToken, refreshSession } from '../../api/client';

export interface RunStreamState {
  connection: 'connecting' | 'open' | 'reconnecting' | 'ended';
  progress?: { current: number; total: number; percent: number; speed: number };
  status?: string;
  done?: { created: number; skipped: number; failed: number };
  logs: { id: string; message: string }[];
  lastEventId?: string;
}

const LOG_TAIL = 200;

export function useRunStream(runId: string): RunStreamState {
  const [state, setState] = useState<RunStreamState>({ connection: 'connecting', logs: [] });
  const lastId = useRef<string | undefined>(undefined);

  useEffect(() => {
    let source: EventSource | undefined;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;

    const open = () => {
      const params = new URLSearchParams({ token: currentToken() ?? '' });
      if (lastId.current) params.set('lastEventId', lastId.current);
      source = new EventSource(`/api/migrations/${encodeURIComponent(runId)}/stream?${params}`);
      const seen = (e: MessageEvent) => {
        if (e.lastEventId) lastId.current = e.lastEventId;
        return JSON.parse(e.data) as Record<string, unknown>;
      };
      source.onopen = () => setState((s) => ({ ...s, connection: 'open' }));
      source.addEventListener('progress', (e) => {
        const d = seen(e as MessageEvent);
        setState((s) => ({ ...s, progress: d as RunStreamState['progress'], lastEventId: lastId.current }));
      });
      source.addEventListener('log', (e) => {
        const d = seen(e as MessageEvent);
        const entry = { id: (e as MessageEvent).lastEventId, message: String(d.message) };
        setState((s) => ({ ...s, logs: [...s.logs, entry].slice(-LOG_TAIL), lastEventId: lastId.current }));
      });
      source.addEventListener('status', (e) => {
        const d = seen(e as MessageEvent);
        // The stream says statuses in lower case (`paused`); the API's run objects in upper case.
        setState((s) => ({ ...s, status: String(d.status).toUpperCase(), lastEventId: lastId.current }));
      });
      source.addEventListener('done', (e) => {
        const d = seen(e as MessageEvent);
        source?.close();
        setState((s) => ({ ...s, done: d.stats as RunStreamState['done'], connection: 'ended' }));
      });
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
      source?.close();
    };
  }, [runId]);

  return state;
}
