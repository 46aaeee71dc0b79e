/**
 * `watch`: reads a run's Server-Sent Events stream (eventsource-parser over fetch, since an access token must
 * go in the query and Node has no EventSource) until `done`. A dropped or server-ended connection is resumed
 * with Last-Event-ID, as an EventSource would, after the `retry` the server asked for; an expired token is
 * refreshed once per connection.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ApiClient } from './client.ts';
import type { Display } from './display.ts';
import { ApiError, type ApiErrorBody, CliError, EXIT } from './errors.ts';
import { type DoneStats, phaseLabel } from './format.ts';

const FINAL = new Set(['COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED']);
/** The server pings after 15 s of silence; twice that and more without a byte means the connection is gone. */
const IDLE_MS = 45_000;
/**
 * Events a watch starts from, newest last, as the console's run page does: a run of 50,000 items has as many log
 * lines, and replaying them all before the live ones is minutes of scrolling (`--all` asks for it). The stream's
 * `tail` takes 1-1000.
 */
export const WATCH_TAIL_DEFAULT = 200;
export const WATCH_TAIL_MAX = 1000;

export interface WatchResult {
  runId: string;
  status?: string;
  stats?: DoneStats;
  lastEventId?: string;
  reconnects: number;
}

export interface WatchOptions {
  display: Display;
  /** Consecutive failed connections before giving up. */
  maxRetries?: number;
  /** The first connection starts at the run's newest `tail` events; undefined: from the first event. */
  tail?: number;
}

interface RunStatus {
  status: string;
  currentPhase?: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function watchRun(client: ApiClient, runId: string, opts: WatchOptions): Promise<WatchResult> {
  const { display } = opts;
  const maxRetries = opts.maxRetries ?? 10;
  const result: WatchResult = { runId, reconnects: 0 };
  let retryMs = 2000;
  let failures = 0;
  let lastTotal: number | undefined;
  const runStatus = () => client.request<RunStatus>('GET', `/migrations/${runId}/status`);
  const showPhase = async () => {
    try {
      const s = await runStatus();
      if (s.currentPhase) display.phase(phaseLabel(s.currentPhase));
    } catch {
      // The phase is decoration; the stream is what matters.
    }
  };

  const handle = (m: EventSourceMessage): boolean => {
    if (m.id) result.lastEventId = m.id;
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(m.data) as Record<string, unknown>;
    } catch {
      return false;
    }
    switch (m.event) {
      case 'progress': {
        const total = Number(data.total);
        // A new total means a new phase: ask which.
        if (total !== lastTotal) void showPhase();
        lastTotal = total;
        display.progress(Number(data.percent) || 0, Number(data.speed) || 0);
        return false;
      }
      case 'log':
        display.log(String(data.message ?? ''));
        return false;
      case 'status':
        result.status = String(data.status ?? '').toUpperCase();
        display.log(`status: ${String(data.status)}`);
        void showPhase();
        return false;
      case 'done':
        result.stats = data.stats as DoneStats;
        return true;
      default:
        return false;
    }
  };

  await showPhase();
  let refreshed = false;
  for (;;) {
    const session = await client.currentSession();
    const abort = new AbortController();
    let idle = setTimeout(() => abort.abort(), IDLE_MS);
    let done = false;
    let dropped = false;
    try {
      // A resume names its place (Last-Event-ID); only a first connection asks for the newest events.
      const tail = result.lastEventId || opts.tail === undefined ? {} : { tail: String(opts.tail) };
      const url = client.url(`/migrations/${runId}/stream`, { token: session.accessToken, ...tail });
      const res = await fetch(url, {
        headers: {
          Accept: 'text/event-stream',
          ...(result.lastEventId ? { 'Last-Event-ID': result.lastEventId } : {}),
        },
        signal: abort.signal,
      });
      if (!res.ok) {
        const body = (await res.json().catch(() => undefined)) as ApiErrorBody | undefined;
        if (res.status === 401 && body?.code === 'TOKEN_EXPIRED' && !refreshed) {
          refreshed = true;
          await client.refresh();
          continue;
        }
        throw new ApiError(res.status, body);
      }
      refreshed = false;
      const parser = createParser({
        onEvent: (m) => {
          failures = 0;
          // The run's last `done` ends the watch: one that later events follow (a finished run verified since)
          // does not, and the server ends the stream after the last.
          done = handle(m);
        },
        onRetry: (ms) => {
          retryMs = ms;
        },
      });
      const decoder = new TextDecoder();
      const reader = res.body?.getReader();
      while (reader) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        clearTimeout(idle);
        idle = setTimeout(() => abort.abort(), IDLE_MS);
        parser.feed(decoder.decode(value, { stream: true }));
      }
      if (done) {
        await reader?.cancel().catch(() => undefined);
        return result;
      }
    } catch (err) {
      if (err instanceof CliError) throw err;
      dropped = true;
      failures += 1;
      if (failures > maxRetries)
        throw new CliError(`Lost the stream of run ${runId}: ${(err as Error).message}`, EXIT.api);
    } finally {
      clearTimeout(idle);
    }
    // Ended cleanly without `done`: a run that has ended has nothing more to send (the server stops after its
    // final events), so stop; otherwise the server's invocation ended: resume. A dropped connection resumes.
    if (!dropped) {
      const now = await runStatus();
      if (FINAL.has(now.status)) {
        result.status = now.status;
        return result;
      }
    }
    result.reconnects += 1;
    await sleep(retryMs);
  }
}
