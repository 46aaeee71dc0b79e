/**
 * The stream as a browser sees it: headless Chromium's own EventSource on a page of the gateway's origin, while
 * events are written into the store. It receives every event in order with its id, event name and data, and
 * a refused stream (bad token) fails for good instead of reconnecting. (Reconnects with Last-Event-ID are
 * tested over HTTP in stream.test.ts and by the CLI's watcher through a cutting proxy.)
 *
 * Chromium comes from Debian's package (`.ci/run` installs it). Without it the file is skipped with a note,
 * unless REQUIRE_BROWSER=1 (CI), where a missing browser fails.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chunkEventId, type RunEvent, statusEventId } from '../../functions/domain/run-events.ts';
import type { Run } from '../../functions/domain/runs.ts';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.ts';
import { createRun } from '../support/runs.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const required = process.env.REQUIRE_BROWSER === '1';
const available = existsSync(CHROMIUM);
if (!available && !required)
  console.warn(`stream-browser: no Chromium at ${CHROMIUM} (apt-get install chromium): skipped`);

let app: TestApp;
let t: TestTenant;
let browser: Browser;
let page: Page;
let projectId: string;

describe.skipIf(!available && !required)('the stream in a browser', () => {
  beforeAll(async () => {
    app = await startTestApp({ STREAM_POLL_MS: '50', STREAM_HEARTBEAT_MS: '200' });
    t = await app.createTenant('Browser');
    const project = await app.call('POST', '/api/projects', {
      token: t.owner.token,
      body: { name: 'Watched', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
    });
    projectId = project.body.id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    // A page of the API's own origin, as a web console served beside the API would be.
    await page.goto(`${app.url}/api/health`);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const append = (run: Run, id: string, event: RunEvent) =>
    app.store.runs.appendEvent(run.tenantId, run.projectId, run.id, id, event);
  const received = () =>
    page.evaluate(
      () => (globalThis as unknown as { received: { id: string; type: string; data: string }[] }).received,
    );
  const until = (assertion: () => Promise<void>) => vi.waitFor(assertion, { timeout: 20_000, interval: 50 });

  it('delivers stored and new events in order to EventSource, to the end', async () => {
    const run = await createRun(app.store, t.tenantId, projectId, 'FULL');
    await append(run, chunkEventId(2, 0, 0), { type: 'log', message: '#1 Task -> MIG-1' });
    await append(run, chunkEventId(2, 0, 1), {
      type: 'progress',
      current: 1,
      total: 3,
      percent: 10,
      speed: 4.5,
    });

    await page.evaluate(
      (url) => {
        const w = globalThis as unknown as { received: unknown[]; source: EventSource };
        w.received = [];
        w.source = new EventSource(url);
        for (const type of ['progress', 'log', 'status', 'done'])
          w.source.addEventListener(type, (e) => {
            const m = e as unknown as { lastEventId: string; data: string };
            w.received.push({ id: m.lastEventId, type, data: m.data });
            if (type === 'done') w.source.close();
          });
      },
      `/api/migrations/${run.id}/stream?token=${encodeURIComponent(t.member.token)}`,
    );
    await until(async () => expect(await received()).toHaveLength(2));

    // Written while the browser listens, as the engine writes them.
    await append(run, chunkEventId(2, 1, 0), { type: 'log', message: '#2 Task -> MIG-2' });
    await append(run, chunkEventId(2, 1, 1), { type: 'log', message: '#3 Bug -> MIG-3' });
    await app.store.runs.setStatus(t.tenantId, run.id, ['RUNNING'], 'COMPLETED', {
      finishedAt: new Date().toISOString(),
    });
    await append(run, statusEventId(8, 0, 1), { type: 'status', status: 'completed' });
    await append(run, statusEventId(8, 0, 2), {
      type: 'done',
      stats: { created: 3, skipped: 0, failed: 0 },
    });

    await until(async () => expect((await received()).at(-1)?.type).toBe('done'));
    const got = await received();
    expect(got.map((m) => m.type)).toEqual(['log', 'progress', 'log', 'log', 'status', 'done']);
    const ids = got.map((m) => m.id);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of got) expect(JSON.parse(m.data).type).toBe(m.type);
    expect(JSON.parse(got.at(-1)?.data ?? '{}')).toEqual({
      type: 'done',
      stats: { created: 3, skipped: 0, failed: 0 },
    });
  });

  it('an EventSource with a bad token gets an error, not a stream', async () => {
    const run = await createRun(app.store, t.tenantId, projectId, 'FULL');
    const outcome = await page.evaluate(
      (url) =>
        new Promise<{ readyState: number }>((resolve) => {
          const source = new EventSource(url);
          source.onerror = () => {
            resolve({ readyState: source.readyState });
            source.close();
          };
        }),
      `/api/migrations/${run.id}/stream?token=not-a-token`,
    );
    // A 401 is not a stream: EventSource fails for good (CLOSED), it does not keep reconnecting.
    expect(outcome.readyState).toBe(2);
  });
});
