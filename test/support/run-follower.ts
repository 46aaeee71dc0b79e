/**
 * Follows a run's live event stream (`GET /api/migrations/{runId}/stream`) as an EventSource would: messages
 * parsed with eventsource-parser, and a reconnect with `Last-Event-ID` whenever the server ends the stream
 * before `done` or the connection is lost after it opened. For tests that watch a whole run over HTTP.
 */
import { type ClientRequest, request } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface RunFollower {
  /** Every message received so far, in order, across reconnections. */
  messages: EventSourceMessage[];
  /** How many connections were opened. */
  connections: number;
  /** Connections lost mid-stream (then reconnected), as their errors read. */
  errors: string[];
  /** Settles with the `done` message's data, or rejects if the stream cannot be followed. */
  done: Promise<{ stats: { created: number; skipped: number; failed: number } }>;
  /** Resolves once a message satisfies `test` (checked against those already in), or rejects after `timeoutMs`. */
  waitFor(
    test: (m: EventSourceMessage) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<EventSourceMessage>;
  close(): void;
}

/** The phase an event id belongs to (ids are `<phase>.<index>.<n>`, the phase two digits). */
export const phaseOf = (m: EventSourceMessage): number => Number(m.id?.slice(0, 2));

export function followRun(baseUrl: string, runId: string, token: string): RunFollower {
  let req: ClientRequest | undefined;
  let closed = false;
  const waiters = new Set<() => void>();
  const follower: RunFollower = {
    messages: [],
    connections: 0,
    errors: [],
    done: undefined as never,
    waitFor(test, timeoutMs, what) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = follower.messages.find(test);
          if (!hit) return false;
          waiters.delete(check as () => void);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check as () => void);
          reject(new Error(`no ${what} within ${timeoutMs} ms; got ${follower.messages.length} messages`));
        }, timeoutMs);
        if (!check()) waiters.add(check as () => void);
      });
    },
    close() {
      closed = true;
      req?.destroy();
    },
  };

  const connect = (lastEventId: string | undefined) =>
    new Promise<'done' | 'ended'>((resolve, reject) => {
      follower.connections++;
      const url = new URL(`/api/migrations/${runId}/stream?token=${encodeURIComponent(token)}`, baseUrl);
      let sawDone = false;
      let sawAny = false;
      req = request(
        url,
        {
          headers: { Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
        },
        (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`stream answered ${res.statusCode}`));
            res.resume();
            return;
          }
          const parser = createParser({
            onEvent: (m) => {
              follower.messages.push(m);
              if (m.event === 'done') sawDone = true;
              for (const w of [...waiters]) w();
            },
          });
          sawAny = true;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => parser.feed(chunk));
          res.on('close', () => resolve(sawDone ? 'done' : 'ended'));
        },
      );
      req.on('error', (err) => {
        // A connection lost mid-stream (reset, hung up) is reconnected as an EventSource does, from the last
        // event id; one that never opened (refused) ends the follow.
        if (closed || follower.connections > 1 || sawAny) {
          if (!closed) follower.errors.push(String(err));
          resolve('ended');
        } else reject(err);
      });
      req.end();
    });

  follower.done = (async () => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const last = follower.messages.at(-1)?.id;
      const outcome = await connect(last);
      const done = follower.messages.find((m) => m.event === 'done');
      if (outcome === 'done' && done) return JSON.parse(done.data);
      if (closed) throw new Error('the follower was closed before done');
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('the stream never delivered done');
  })();
  // A test that never awaits `done` (a cancelled run) must not see an unhandled rejection.
  follower.done.catch(() => undefined);
  return follower;
}
