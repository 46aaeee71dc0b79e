/**
 * The engine under the sandboxes' rate limits, end to end: a run whose Jira points quota runs out waits for the
 * window to turn (a 3-second window stands in for the hour), says so on its stream, and completes with nothing
 * failed; a per-issue 429 storm on one issue pauses that issue alone (other issues' writes go on meanwhile, by the
 * request log's timestamps) and no write to it is sent after the refusal before its Retry-After.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EngineHarness, startEngineHarness } from '../support/engine-harness.ts';
import { createRun } from '../support/runs.ts';

let h: EngineHarness;
beforeAll(async () => {
  // Six items (five in scope) with 32 comments between them (threads of 12, 9, 7 ...).
  h = await startEngineHarness({ items: 6, seed: 10 });
});
afterAll(async () => h.close());
beforeEach(async () => {
  await h.control('jira', 'POST', '/_sandbox/reset');
});

interface LogEntry {
  method: string;
  path: string;
  status: number;
  /** When the sandbox answered; `receivedAt`: when the request arrived. */
  at: string;
  receivedAt: string;
  reason?: string;
}
const jiraLog = async () => (await h.control('jira', 'GET', '/_sandbox/requests')) as LogEntry[];
const issueOf = (path: string) => /\/rest\/api\/3\/issue\/([A-Z]+-\d+)/.exec(path)?.[1];
/** How long after a 429 a write the client sent before it knew may still arrive. */
const IN_FLIGHT_MS = 100;
const isWrite = (e: LogEntry) => e.method !== 'GET' && !e.path.includes('/search');

async function migrate(name: string) {
  const project = await h.newProject(name);
  const run = await createRun(h.app.store, h.tenant.tenantId, project.id, 'FULL');
  await h.drive(run.id);
  const done = await h.app.store.runs.get(h.tenant.tenantId, run.id);
  const events = await h.app.store.runs.events(h.tenant.tenantId, project.id, run.id, undefined, 1000);
  return { done, lines: events.flatMap((e) => (e.event.type === 'log' ? [e.event.message] : [])) };
}

describe('the engine under Jira’s limits', () => {
  it('waits for a spent points quota to reset, says so, and completes', async () => {
    // 50 points a 3-second window: the run's few hundred points spend it even at a slow machine's pace.
    await h.control('jira', 'PUT', '/_sandbox/limits', {
      limits: { quota: { enabled: true, points: 50, windowSeconds: 3, apiTokenExempt: false } },
    });
    const { done, lines } = await migrate('Quota');
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0, successCount: done?.totalItems });
    const refused = (await jiraLog()).filter((e) => e.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((e) => e.reason))).toEqual(new Set(['jira-quota-global-based']));
    expect(lines).toContainEqual(
      expect.stringMatching(/^Waiting for Jira's hourly quota until \d\d:\d\d(:\d\d)? UTC$/),
    );
  });

  it('pauses only the issue a per-issue 429 names, and never sends to it again before its Retry-After', async () => {
    // Tighter than Jira's documented 20 writes in 2 s, which the client paces for: storms on the busy issues.
    await h.control('jira', 'PUT', '/_sandbox/limits', {
      limits: { perIssue: { enabled: true, windows: [{ writes: 3, seconds: 1 }] } },
    });
    const { done } = await migrate('Storm');
    expect(done).toMatchObject({ status: 'COMPLETED', failureCount: 0, successCount: done?.totalItems });
    const log = await jiraLog();
    const refused = log.filter((e) => e.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((e) => e.reason))).toEqual(new Set(['jira-per-issue-on-write']));
    // A refusal holds back its own issue only: while a refused issue waits out its Retry-After, writes to other
    // issues still arrive (a pause of the whole client would leave that second empty but for writes already on their
    // way when the 429 went out, which arrive within milliseconds of it). Order, not speed: no duration is asserted.
    const others = refused.flatMap((r) =>
      log.filter(
        (w) =>
          isWrite(w) &&
          issueOf(w.path) !== issueOf(r.path) &&
          Date.parse(w.receivedAt) > Date.parse(r.at) + IN_FLIGHT_MS &&
          Date.parse(w.receivedAt) < Date.parse(r.at) + 990,
      ),
    );
    expect(others.length).toBeGreaterThan(0);
    // No write to a refused issue was sent after a refusal reached the client before its Retry-After (1 s): each
    // write that arrived after a 429 went out arrived at least 990 ms after it (the log's arrival times; a write
    // already on its way when the 429 went out was sent before the client could know).
    const after = [...new Set(refused.map((e) => issueOf(e.path)))].flatMap((stormy) => {
      const writes = log.filter((e) => isWrite(e) && issueOf(e.path) === stormy);
      return writes.flatMap((w) =>
        writes
          .filter((r) => r.status === 429 && Date.parse(w.receivedAt) > Date.parse(r.at))
          .map((r) => Date.parse(w.receivedAt) - Date.parse(r.at)),
      );
    });
    expect(after.length).toBeGreaterThan(0);
    expect(Math.min(...after)).toBeGreaterThanOrEqual(990);
  });
});
