/**
 * The tenant's live run events over the WebSocket `/api/ws?token=…` (same origin; docs/console.md). Frames are
 * handed to `onEvents` in batches (at most one per BATCH_MS). A ping every PING_MS keeps the socket alive
 * through idle timeouts. When the socket is refused or drops, it is reopened with a growing backoff, after a
 * session refresh if the token is at its end (the usual refusal); meanwhile the state says `polling` and the
 * page polls the runs lists instead (those requests refresh an expired token by themselves: api/client.ts).
 */
import { useEffect, useRef, useState } from 'react';
import { currentToken, refreshSession } from '../../api/client';
import { expiresWithin } from '../../api/tokenExpiry';
import { createBatcher, parseTenantEvent, type TenantEvent } from './board';

export type TenantConnection = 'connecting' | 'live' | 'polling';

const BATCH_MS = 250;
const PING_MS = 30_000;
const BACKOFF_MS = [1_000, 2_000, 5_000, 10_000];
const REFRESH_MARGIN_MS = 60_000;

export function tenantSocketUrl(token: string): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/api/ws?token=${encodeURIComponent(token)}`;
}

export function useTenantEvents(onEvents: (events: TenantEvent[]) => void): TenantConnection {
  const [connection, setConnection] = useState<TenantConnection>('connecting');
  // The latest callback, without reopening the socket when the page re-renders.
  const handler = useRef(onEvents);
  handler.current = onEvents;

  useEffect(() => {
    let socket: WebSocket | undefined;
    let stopped = false;
    let failures = 0;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let ping: ReturnType<typeof setInterval> | undefined;
    const batcher = createBatcher<TenantEvent>((events) => handler.current(events), BATCH_MS, {
      set: (fn, ms) => setTimeout(fn, ms),
      clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    });

    const reconnect = () => {
      if (stopped) return;
      setConnection('polling');
      const delay = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)] ?? 10_000;
      failures++;
      retry = setTimeout(() => {
        // Only a token at its end is worth a refresh (an expired token is the refusal a refresh cures), and
        // the refresh route is rate-limited: a proxy that blocks WebSockets must not make every retry one.
        const token = currentToken();
        const fresh =
          token && !expiresWithin(token, REFRESH_MARGIN_MS) ? Promise.resolve() : refreshSession();
        void fresh.then(() => {
          if (!stopped) open();
        });
      }, delay);
    };

    const open = () => {
      const token = currentToken();
      if (!token) return reconnect();
      const ws = new WebSocket(tenantSocketUrl(token));
      socket = ws;
      ws.onopen = () => {
        failures = 0;
        setConnection('live');
        ping = setInterval(() => {
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ action: 'ping' }));
        }, PING_MS);
      };
      ws.onmessage = (m) => {
        const event = typeof m.data === 'string' ? parseTenantEvent(m.data) : undefined;
        if (event) batcher.push(event);
      };
      // An error is always followed by a close: the close decides.
      ws.onclose = () => {
        if (ping) clearInterval(ping);
        ping = undefined;
        if (socket === ws) socket = undefined;
        reconnect();
      };
    };
    open();
    return () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      if (ping) clearInterval(ping);
      batcher.stop();
      socket?.close();
    };
  }, []);

  return connection;
}
