/**
 * GET /api/migrations/{runId}/stream over real HTTP: events written into the store while a client listens,
 * parsed with eventsource-parser as an EventSource would; and the moves made through the run API (resume,
 * cancel) as a watcher sees them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type ClientRequest, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Orchestrator } from '../../functions/domain/orchestration.ts';
import { chunkEventId, type RunEvent, statusEventId } from '../../functions/domain/run-events.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { setOrchestrator } from '../../functions/services/migrations.ts';
import { keys } from '../../functions/store/keys.ts';
import { RunRepository } from '../../functions/store/runs.ts';
import { expiredOwnerToken, startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { RecordingOrchestrator } from '../support/recording-orchestrator.ts';
import { createRun } from '../support/runs.ts';

// Short intervals so a test sees several polls and heartbeats in well under a second.
const POLL_MS = 40;
const HEARTBEAT_MS = 120;

let app: TestApp;
let a: TestTenant;
let b: TestTenant;
let projectId: string;
let activeStreams: () => number;
// A cancel writes the run's reports: to a directory of this file's own.
const dataDir = mkdtempSync(join(tmpdir(), 'tms-stream-'));

beforeAll(async () => {
  app = await startTestApp({
    STREAM_POLL_MS: String(POLL_MS),
    STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS),
    DATA_DIR: dataDir,
  });
  [a, b] = await Promise.all([app.createTenant('Alpha'), app.createTenant('Beta')]);
  const project = await app.call('POST', '/api/projects', {
    token: a.owner.token,
    body: { name: 'Streamed', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  projectId = project.body.id;
  // Loaded after the environment is set: the handler reads its intervals at cold start.
  ({ activeStreams } = await import('../../functions/api/stream.ts'));
});
afterAll(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  setOrchestrator(undefined);
});

interface Stream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  messages: EventSourceMessage[];
  comments: string[];
  retry: number | undefined;
  /** The raw body of a refusal (JSON). */
  text: string;
  ended: Promise<void>;
  close(): void;
}

/** Opens the stream and resolves once the status line and headers are in; events keep arriving after. */
function openStream(path: string, headers: Record<string, string> = {}): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(
      new URL(path, app.url),
      { headers: { Accept: 'text/event-stream', ...headers } },
      (res) => {
        let endedResolve: () => void = () => undefined;
        const stream: Stream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          messages: [],
          comments: [],
          retry: undefined,
          text: '',
          ended: new Promise<void>((r) => {
            endedResolve = r;
          }),
          close: () => req.destroy(),
        };
        const parser = createParser({
          onEvent: (m) => stream.messages.push(m),
          onComment: (c) => stream.comments.push(c),
          onRetry: (ms) => {
            stream.retry = ms;
          },
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          stream.text += chunk;
          parser.feed(chunk);
        });
        res.on('end', () => endedResolve());
        res.on('close', () => endedResolve());
        resolve(stream);
      },
    );
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
}

const streamPath = (runId: string, token: string, extra = '') =>
  `/api/migrations/${runId}/stream?token=${encodeURIComponent(token)}${extra}`;

async function newRun(): Promise<Run> {
  return createRun(app.store, a.tenantId, projectId, 'FULL');
}

const append = (run: Run, id: string, event: RunEvent) =>
  app.store.runs.appendEvent(run.tenantId, run.projectId, run.id, id, event);

const log = (message: string): RunEvent => ({ type: 'log', message });
const progress = (current: number): RunEvent => ({
  type: 'progress',
  current,
  total: 10,
  percent: current * 10,
  speed: 12.5,
});
const done: RunEvent = { type: 'done', stats: { created: 9, skipped: 1, failed: 0 } };

/** A finished run's history: two chunk events, then the final status and done (the engine's order). */
async function finishedRun(): Promise<{ run: Run; ids: string[] }> {
  const run = await newRun();
  const ids = [chunkEventId(2, 0, 0), chunkEventId(2, 0, 1), statusEventId(8, 0, 1), statusEventId(8, 0, 2)];
  await app.store.runs.setStatus(a.tenantId, run.id, ['RUNNING'], 'COMPLETED', {
    finishedAt: new Date().toISOString(),
  });
  await append(run, ids[0] as string, log('#1 Task -> MIG-1'));
  await append(run, ids[1] as string, progress(10));
  await append(run, ids[2] as string, { type: 'status', status: 'completed' });
  await append(run, ids[3] as string, done);
  return { run, ids };
}

/** Waits for an assertion to hold; generous, as the machine may be busy: a bound on waiting, not a timing check. */
const until = (assertion: () => void) => vi.waitFor(assertion, { timeout: 15_000, interval: 20 });

const shape = (m: EventSourceMessage) => ({ id: m.id, event: m.event, data: JSON.parse(m.data) });

describe('GET /api/migrations/{runId}/stream', () => {
  it('sends stored and new events in order, with id, event and data repeating the type', async () => {
    const run = await newRun();
    await append(run, chunkEventId(2, 0, 0), log('#11 Task -> MIG-1'));
    await append(run, chunkEventId(2, 0, 1), progress(1));

    const s = await openStream(streamPath(run.id, a.member.token));
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toContain('no-cache');
    await until(() => expect(s.messages).toHaveLength(2));

    // Written while the client listens: a checkpoint (as the engine writes chunks), then a lone event.
    await app.store.runs.checkpoint(a.tenantId, run.id, {
      from: { phase: 1, index: 0 },
      to: { phase: 2, index: 2 },
      progressPercent: 20,
      events: [
        { id: chunkEventId(2, 1, 0), event: log('#12 Bug -> MIG-2') },
        { id: chunkEventId(2, 1, 1), event: progress(2) },
      ],
    });
    await append(run, statusEventId(2, 2, 1), { type: 'status', status: 'paused' });
    await until(() => expect(s.messages).toHaveLength(5));
    s.close();

    expect(s.messages.map(shape)).toEqual([
      { id: chunkEventId(2, 0, 0), event: 'log', data: { type: 'log', message: '#11 Task -> MIG-1' } },
      { id: chunkEventId(2, 0, 1), event: 'progress', data: progress(1) },
      { id: chunkEventId(2, 1, 0), event: 'log', data: { type: 'log', message: '#12 Bug -> MIG-2' } },
      { id: chunkEventId(2, 1, 1), event: 'progress', data: progress(2) },
      { id: statusEventId(2, 2, 1), event: 'status', data: { type: 'status', status: 'paused' } },
    ]);
    expect(s.retry).toBeGreaterThan(0);
  });

  it('resumes after Last-Event-ID (header or lastEventId query) with only what the client missed', async () => {
    const run = await newRun();
    const ids = [0, 1, 2, 3].map((n) => chunkEventId(2, 0, n));
    for (const [n, id] of ids.entries()) await append(run, id, log(`line ${n}`));

    const byHeader = await openStream(streamPath(run.id, a.admin.token), {
      'Last-Event-ID': ids[1] as string,
    });
    const byQuery = await openStream(streamPath(run.id, a.admin.token, `&lastEventId=${ids[2]}`));
    await append(run, chunkEventId(2, 0, 4), log('line 4'));
    await until(() => {
      expect(byHeader.messages.map((m) => m.id)).toEqual([ids[2], ids[3], chunkEventId(2, 0, 4)]);
      expect(byQuery.messages.map((m) => m.id)).toEqual([ids[3], chunkEventId(2, 0, 4)]);
    });
    byHeader.close();
    byQuery.close();
  });

  it("stores a move's events as one item, and a client resuming inside it gets only the rest", async () => {
    const run = await newRun();
    const ids = [0, 1, 2, 3].map((n) => chunkEventId(2, 0, n));
    await app.store.runs.checkpoint(a.tenantId, run.id, {
      from: { phase: 1, index: 0 },
      to: { phase: 2, index: 3 },
      progressPercent: 20,
      events: [
        { id: ids[0] as string, event: log('#11 Task -> MIG-1') },
        { id: ids[1] as string, event: log('#12 Bug -> MIG-2') },
        { id: ids[2] as string, event: log('#13 Epic -> MIG-3') },
        { id: ids[3] as string, event: progress(3) },
      ],
    });
    // One item for the move's events: a transaction's writes are billed twice, and a move is written per few units.
    const { pk, skPrefix } = keys.runEventPrefix(a.tenantId, projectId, run.id);
    const stored = await app.db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      }),
    );
    expect(stored.Items).toHaveLength(1);
    expect((await app.store.runs.events(a.tenantId, projectId, run.id)).map((e) => e.id)).toEqual(ids);
    expect((await app.store.runs.events(a.tenantId, projectId, run.id, ids[1])).map((e) => e.id)).toEqual(
      ids.slice(2),
    );
    // A move whose lines are long is kept in several items, each well under DynamoDB's 400 KB, in order.
    const long = Array.from({ length: 98 }, (_, n) => ({
      id: chunkEventId(2, 3, n),
      event: log(`#${n} ${'x'.repeat(2_000)}`),
    }));
    await app.store.runs.checkpoint(a.tenantId, run.id, {
      from: { phase: 2, index: 3 },
      to: { phase: 2, index: 101 },
      progressPercent: 30,
      events: long,
    });
    const after = await app.db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      }),
    );
    expect(after.Items?.length).toBeGreaterThan(2);
    expect(after.Items?.every((i) => JSON.stringify(i).length < 100_000)).toBe(true);
    expect((await app.store.runs.events(a.tenantId, projectId, run.id, ids[3])).map((e) => e.id)).toEqual(
      long.map((e) => e.id),
    );
    const resumed = await openStream(streamPath(run.id, a.admin.token), {
      'Last-Event-ID': ids[0] as string,
    });
    await until(() =>
      expect(resumed.messages.map((m) => m.id)).toEqual([...ids.slice(1), ...long.map((e) => e.id)]),
    );
    resumed.close();
  });

  it('starts with the newest `tail` events instead of the first, then goes on live', async () => {
    const run = await newRun();
    // Three checkpoints' worth (each a bundle of four lines and a progress event), so the window's start falls
    // inside one item: the events of that item before it are not sent.
    const ids: string[] = [];
    for (const chunk of [0, 1, 2]) {
      const events = [0, 1, 2, 3].map((n) => ({
        id: chunkEventId(2, chunk, n),
        event: log(`chunk ${chunk} line ${n}`),
      }));
      events.push({ id: chunkEventId(2, chunk, 4), event: progress(chunk + 1) });
      await app.store.runs.appendEvents(a.tenantId, projectId, run.id, events);
      ids.push(...events.map((e) => e.id));
    }
    const s = await openStream(streamPath(run.id, a.member.token, '&tail=7'));
    expect(s.status).toBe(200);
    await until(() => expect(s.messages.map((m) => m.id)).toEqual(ids.slice(-7)));
    await append(run, chunkEventId(2, 3, 0), log('written while watching'));
    await until(() => expect(s.messages.map((m) => m.id)).toEqual([...ids.slice(-7), chunkEventId(2, 3, 0)]));
    s.close();

    // A history no longer than the tail is sent whole.
    const whole = await openStream(streamPath(run.id, a.member.token, '&tail=1000'));
    await until(() => expect(whole.messages.map((m) => m.id)).toEqual([...ids, chunkEventId(2, 3, 0)]));
    whole.close();
  });

  it("a finished run's tail ends with its status and done, and the stream ends", async () => {
    const { run, ids } = await finishedRun();
    const s = await openStream(streamPath(run.id, a.member.token, '&tail=2'));
    await s.ended;
    expect(s.messages.map((m) => m.id)).toEqual(ids.slice(-2));
    expect(s.messages.map((m) => m.event)).toEqual(['status', 'done']);
  });

  it('resumes after Last-Event-ID (header or query) whatever the tail: a reconnecting EventSource keeps its URL', async () => {
    const run = await newRun();
    const ids = [0, 1, 2, 3, 4, 5].map((n) => chunkEventId(2, 0, n));
    for (const [n, id] of ids.entries()) await append(run, id, log(`line ${n}`));
    const byHeader = await openStream(streamPath(run.id, a.member.token, '&tail=1'), {
      'Last-Event-ID': ids[1] as string,
    });
    const byQuery = await openStream(streamPath(run.id, a.member.token, `&tail=1&lastEventId=${ids[3]}`));
    await until(() => {
      expect(byHeader.messages.map((m) => m.id)).toEqual(ids.slice(2));
      expect(byQuery.messages.map((m) => m.id)).toEqual(ids.slice(4));
    });
    byHeader.close();
    byQuery.close();
  });

  it('sends heartbeat comments while nothing happens', async () => {
    const run = await newRun();
    const s = await openStream(streamPath(run.id, a.owner.token));
    await until(() => expect(s.comments.filter((c) => c.trim() === 'ping').length).toBeGreaterThanOrEqual(2));
    expect(s.messages).toEqual([]);
    s.close();
  });

  it('ends the stream after done', async () => {
    const run = await newRun();
    const s = await openStream(streamPath(run.id, a.member.token));
    await append(run, chunkEventId(2, 0, 0), progress(10));
    await app.store.runs.setStatus(a.tenantId, run.id, ['RUNNING'], 'COMPLETED', {
      finishedAt: new Date().toISOString(),
    });
    await append(run, statusEventId(8, 0, 1), { type: 'status', status: 'completed' });
    await append(run, statusEventId(8, 0, 2), done);
    await s.ended;
    expect(s.messages.map((m) => m.event)).toEqual(['progress', 'status', 'done']);
    expect(JSON.parse(s.messages.at(-1)?.data ?? '')).toEqual(done);
  });

  it('gives a late client the whole history, ending with the status and done', async () => {
    const { run, ids } = await finishedRun();
    const s = await openStream(streamPath(run.id, a.member.token));
    await s.ended;
    expect(s.messages.map((m) => m.id)).toEqual(ids);
    expect(s.messages.slice(-2).map(shape)).toEqual([
      { id: ids[2], event: 'status', data: { type: 'status', status: 'completed' } },
      { id: ids[3], event: 'done', data: done },
    ]);
  });

  it('gives a late client with a Last-Event-ID only the rest: the status and done', async () => {
    const { run, ids } = await finishedRun();
    const s = await openStream(streamPath(run.id, a.member.token), { 'Last-Event-ID': ids[1] as string });
    await s.ended;
    expect(s.messages.map((m) => m.event)).toEqual(['status', 'done']);
  });

  it('ends once a run that has no done (one cancelled before cancels told it) is over and every event is sent', async () => {
    const run = await newRun();
    await append(run, chunkEventId(2, 0, 0), log('#1 Task -> MIG-1'));
    await app.store.runs.setStatus(a.tenantId, run.id, ['RUNNING'], 'CANCELLED', {
      finishedAt: new Date(Date.now() - 60_000).toISOString(),
    });
    await append(run, statusEventId(2, 1, 1), { type: 'status', status: 'cancelled' });
    const s = await openStream(streamPath(run.id, a.member.token));
    await s.ended;
    expect(s.messages.map((m) => JSON.parse(m.data))).toEqual([
      log('#1 Task -> MIG-1'),
      { type: 'status', status: 'cancelled' },
    ]);
  });

  it('stops polling the store when the client disconnects', async () => {
    const run = await newRun();
    const reads = vi.spyOn(RunRepository.prototype, 'events');
    const readsOfRun = () => reads.mock.calls.filter((c) => c[2] === run.id).length;
    const s = await openStream(streamPath(run.id, a.member.token));
    await until(() => expect(readsOfRun()).toBeGreaterThanOrEqual(3));
    expect(activeStreams()).toBe(1);

    s.close();
    await until(() => expect(activeStreams()).toBe(0));
    const after = readsOfRun();
    // Ten poll intervals: a loop still running would have read the store again by now.
    await new Promise((r) => setTimeout(r, POLL_MS * 10));
    expect(readsOfRun()).toBe(after);
  });
});

describe('moves made through the run API, as a watcher sees them', () => {
  const control = (run: Run, action: 'resume' | 'cancel') =>
    app.call('POST', `/api/migrations/${run.id}/${action}`, { token: a.admin.token });
  /** A status event told at the run's checkpoint (phase 2, unit 3): after the chunk events there. */
  const statusAt = (status: string) => ({
    id: expect.stringMatching(/^02\.00000003\.-\d{15}$/),
    event: 'status',
    data: { type: 'status', status },
  });

  /** A run that worked three units of the create phase (2 created, 1 skipped), as the engine checkpoints them. */
  async function workedRun(): Promise<Run> {
    const run = await newRun();
    await app.store.runs.checkpoint(a.tenantId, run.id, {
      from: { phase: 1, index: 0 },
      to: { phase: 2, index: 3 },
      progressPercent: 20,
      success: 2,
      skipped: 1,
      events: [
        { id: chunkEventId(2, 0, 0), event: log('#11 Task -> MIG-1') },
        { id: chunkEventId(2, 0, 1), event: progress(3) },
      ],
    });
    return run;
  }

  /** The engine's pause, carried out at its checkpoint, with its status event. */
  async function pausedRun(): Promise<Run> {
    const run = await workedRun();
    expect(
      await app.store.runs.setStatus(a.tenantId, run.id, ['RUNNING'], 'PAUSED', { control: 'pause' }),
    ).toBe(true);
    await append(run, statusEventId(2, 3, 1), { type: 'status', status: 'paused' });
    return run;
  }

  it('a resume puts `running` on the stream after `paused`', async () => {
    const orch = new RecordingOrchestrator();
    setOrchestrator(orch);
    const run = await pausedRun();
    const s = await openStream(streamPath(run.id, a.member.token));
    await until(() => expect(s.messages).toHaveLength(3));

    const resumed = await control(run, 'resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body).toEqual({ id: run.id, status: 'RUNNING' });
    await until(() => expect(s.messages).toHaveLength(4));
    s.close();

    expect(s.messages.slice(2).map(shape)).toEqual([
      { id: statusEventId(2, 3, 1), event: 'status', data: { type: 'status', status: 'paused' } },
      statusAt('running'),
    ]);
    expect(orch.starts).toEqual([{ tenantId: a.tenantId, runId: run.id, generation: 1 }]);
  });

  it('a resume whose worker cannot be started tells `running`, then `paused` again', async () => {
    const failing: Orchestrator = {
      start: async () => {
        throw new Error('StartExecution: AccessDenied');
      },
      stop: async () => {},
    };
    setOrchestrator(failing);
    const run = await pausedRun();
    const s = await openStream(streamPath(run.id, a.member.token));
    await until(() => expect(s.messages).toHaveLength(3));

    const resumed = await control(run, 'resume');
    expect(resumed.status).toBe(502);
    expect(resumed.body.code).toBe('ENGINE_DISPATCH_FAILED');
    await until(() => expect(s.messages).toHaveLength(5));
    s.close();

    expect(s.messages.slice(3).map(shape)).toEqual([statusAt('running'), statusAt('paused')]);
  });

  it("a cancel puts `cancelled`, then `done` with the run's counters, on the stream, which then ends", async () => {
    setOrchestrator(new RecordingOrchestrator());
    const run = await workedRun();
    const s = await openStream(streamPath(run.id, a.member.token));
    await until(() => expect(s.messages).toHaveLength(2));

    const cancelled = await control(run, 'cancel');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ id: run.id, status: 'CANCELLED' });
    await s.ended;

    expect(s.messages.map(shape)).toEqual([
      { id: chunkEventId(2, 0, 0), event: 'log', data: log('#11 Task -> MIG-1') },
      { id: chunkEventId(2, 0, 1), event: 'progress', data: progress(3) },
      statusAt('cancelled'),
      {
        id: expect.stringMatching(/^02\.00000003\.-\d{15}$/),
        event: 'done',
        data: { type: 'done', stats: { created: 2, skipped: 1, failed: 0 } },
      },
    ]);
  });

  it('a stream opened after the cancel replays the history, `cancelled` and `done`, and ends', async () => {
    setOrchestrator(new RecordingOrchestrator());
    const run = await workedRun();
    expect((await control(run, 'cancel')).status).toBe(200);

    const s = await openStream(streamPath(run.id, a.member.token));
    await s.ended;
    expect(s.messages.map((m) => JSON.parse(m.data))).toEqual([
      log('#11 Task -> MIG-1'),
      progress(3),
      { type: 'status', status: 'cancelled' },
      { type: 'done', stats: { created: 2, skipped: 1, failed: 0 } },
    ]);
  });
});

describe('a watcher who loses their place in the team', () => {
  /** A tenant of its own with a project and a running run (members are removed here). */
  async function watchedRun(name: string): Promise<{ t: TestTenant; run: Run }> {
    const t = await app.createTenant(name);
    const project = await app.call('POST', '/api/projects', {
      token: t.owner.token,
      body: { name, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    return { t, run: await createRun(app.store, t.tenantId, project.body.id, 'FULL') };
  }

  it('a removed member: the open stream ends and sends nothing written after the removal', async () => {
    const { t, run } = await watchedRun('RemovedWatcher');
    await append(run, chunkEventId(2, 0, 0), log('before the removal'));
    const s = await openStream(streamPath(run.id, t.member.token));
    let ended = false;
    void s.ended.then(() => {
      ended = true;
    });
    await until(() => expect(s.messages).toHaveLength(1));

    const removed = await app.call('DELETE', `/api/team/members/${t.member.id}`, { token: t.owner.token });
    expect(removed.status).toBe(204);
    await append(run, chunkEventId(2, 0, 1), log('after the removal'));
    await until(() => expect(ended).toBe(true));
    expect(s.messages.map((m) => JSON.parse(m.data))).toEqual([log('before the removal')]);
    await until(() => expect(activeStreams()).toBe(0));
  });

  it('a demoted admin: the stream of the old session ends too', async () => {
    const { t, run } = await watchedRun('DemotedWatcher');
    const s = await openStream(streamPath(run.id, t.admin.token));
    let ended = false;
    void s.ended.then(() => {
      ended = true;
    });
    await until(() => expect(s.retry).toBe(2000));
    const demoted = await app.call('PATCH', `/api/team/members/${t.admin.id}`, {
      token: t.owner.token,
      body: { role: 'member' },
    });
    expect(demoted.status).toBe(200);
    await append(run, chunkEventId(2, 0, 0), log('after the demotion'));
    await until(() => expect(ended).toBe(true));
    expect(s.messages).toEqual([]);
  });
});

describe('refusals, before any stream starts', () => {
  const unauthorized = {
    statusCode: 401,
    message: 'Invalid or expired access token',
    error: 'Unauthorized',
  };

  it('answers 401 UNAUTHORIZED without a token or with a bad one', async () => {
    const run = await newRun();
    for (const path of [`/api/migrations/${run.id}/stream`, streamPath(run.id, 'not-a-jwt')]) {
      const s = await openStream(path);
      await s.ended;
      expect(s.status).toBe(401);
      expect(s.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(s.text)).toEqual({ ...unauthorized, code: 'UNAUTHORIZED' });
    }
  });

  it('ignores an Authorization header: the stream takes its token from the query', async () => {
    const run = await newRun();
    const s = await openStream(`/api/migrations/${run.id}/stream`, {
      Authorization: `Bearer ${a.owner.token}`,
    });
    await s.ended;
    expect(s.status).toBe(401);
  });

  it('answers 401 TOKEN_EXPIRED for an expired token', async () => {
    const run = await newRun();
    const expired = await expiredOwnerToken(app, a);
    const s = await openStream(streamPath(run.id, expired));
    await s.ended;
    expect(s.status).toBe(401);
    expect(JSON.parse(s.text)).toEqual({ ...unauthorized, code: 'TOKEN_EXPIRED' });
  });

  it("answers 404 MIGRATION_NOT_FOUND for another tenant's run, as for an unknown or malformed id", async () => {
    const run = await newRun();
    const unknownId = '01a20392-0000-7000-8000-000000000000';
    for (const id of [run.id, unknownId, 'not-a-run-id']) {
      const s = await openStream(streamPath(id, b.owner.token));
      await s.ended;
      expect(s.status).toBe(404);
      expect(JSON.parse(s.text)).toEqual({
        statusCode: 404,
        message: `Migration run ${id} not found`,
        error: 'Not Found',
        code: 'MIGRATION_NOT_FOUND',
      });
    }
  });

  it('answers 400 with the problems listed for a tail that is not a whole number from 1 to 1000', async () => {
    // A finished run: a stream wrongly let through would end rather than wait.
    const { run } = await finishedRun();
    const cases: [string, string][] = [
      ['0', 'tail must be at least 1'],
      ['1001', 'tail must be at most 1000'],
      ['2.5', 'tail must be a whole number'],
      ['ten', 'tail must be a whole number'],
      ['', 'tail must be a whole number'],
    ];
    for (const [tail, message] of cases) {
      const s = await openStream(streamPath(run.id, a.owner.token, `&tail=${tail}`));
      await s.ended;
      expect(s.status, tail).toBe(400);
      expect(JSON.parse(s.text)).toEqual({
        statusCode: 400,
        message: [message],
        error: 'Bad Request',
        code: 'VALIDATION_FAILED',
      });
    }
  });

  it('answers 400 for a Last-Event-ID that is not one of ours', async () => {
    const run = await newRun();
    const s = await openStream(streamPath(run.id, a.owner.token), { 'Last-Event-ID': 'x'.repeat(300) });
    await s.ended;
    expect(s.status).toBe(400);
    expect(JSON.parse(s.text).code).toBe('VALIDATION_FAILED');
  });
});
