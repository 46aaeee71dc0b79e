/** A real WebSocket client (the `ws` package) on the dashboard channel, keeping every frame it receives. */
import WebSocket from 'ws';
import type { DashboardFrame } from '../../functions/domain/dashboard-events.ts';

export interface DashboardSocket {
  ws: WebSocket;
  frames: (DashboardFrame & { receivedAt: number })[];
  /** Resolves once a frame matching `test` has arrived (already, or later). */
  next(test: (f: DashboardFrame) => boolean): Promise<DashboardFrame>;
  send(message: unknown): void;
  close(): Promise<void>;
  /** Resolves with the close code once the socket is closed, by either side. */
  closed: Promise<number>;
}

export interface Refusal {
  status: number;
  body: unknown;
}

const wsUrl = (httpUrl: string, token: string | undefined) =>
  `${httpUrl.replace(/^http/, 'ws')}/api/ws${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`;

/** Connects; resolves with the open socket, or with the HTTP answer when the upgrade is refused. */
export function connectDashboard(
  httpUrl: string,
  token: string | undefined,
): Promise<DashboardSocket | Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(httpUrl, token));
    const frames: DashboardSocket['frames'] = [];
    const waiters: { test: (f: DashboardFrame) => boolean; done: (f: DashboardFrame) => void }[] = [];
    ws.on('message', (data) => {
      const frame = { ...(JSON.parse(data.toString()) as DashboardFrame), receivedAt: Date.now() };
      frames.push(frame);
      for (const w of [...waiters])
        if (w.test(frame)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.done(frame);
        }
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }),
      );
    });
    ws.once('error', reject);
    const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
    ws.once('open', () =>
      resolve({
        ws,
        frames,
        next: (test) => {
          const seen = frames.find(test);
          if (seen) return Promise.resolve(seen);
          return new Promise((done) => waiters.push({ test, done }));
        },
        send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
        closed,
        close: () =>
          new Promise<void>((done) => {
            if (ws.readyState === WebSocket.CLOSED) return done();
            ws.once('close', () => done());
            ws.close();
          }),
      }),
    );
  });
}

export async function openDashboard(httpUrl: string, token: string): Promise<DashboardSocket> {
  const out = await connectDashboard(httpUrl, token);
  if (!('ws' in out)) throw new Error(`dashboard refused: ${out.status} ${JSON.stringify(out.body)}`);
  return out;
}
