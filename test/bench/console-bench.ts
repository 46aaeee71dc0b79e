/**
 * `npm run bench`, the console's part: figures, never assertions. The JavaScript the browser downloads
 * (gzipped, as CloudFront and most servers send it), the time from navigation to the projects page's first
 * rows on screen in Debian's Chromium, against `npm start` itself (a signed-in reload: the refresh cookie's
 * exchange, the bundle, the projects query and the render), and the stream-to-screen latency of a run's
 * progress events: from the engine's write of the event (its checkpoint's `at` in the table) to the run page's
 * DOM showing it (a MutationObserver in the page).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../../bin/console-build.ts';
import { chunkEventId } from '../../functions/domain/run-events.ts';
import { createDocumentClient } from '../../functions/store/client.ts';
import { createStore } from '../../functions/store/index.ts';
import { LOCAL_TABLE_NAME } from '../../local/runtime.ts';
import { sandboxConfigFromEnv } from '../../local/sandbox/common/config.ts';
import type { RunningSandboxes } from '../../local/sandbox/index.ts';
import { browserAvailable, CHROMIUM, signInThroughForm } from '../support/browser.ts';
import { type ConsoleHarness, startConsole } from '../support/console-browser.ts';
import { http } from '../support/http.ts';
import { prepareProjectOverHttp } from '../support/lifecycle.ts';
import { sandboxCredentials, sandboxStartBody } from '../support/sandbox-fixtures.ts';

const RUNS = 9;
/** Work items of the run whose progress events are timed: 50 a chunk, one progress event per chunk and phase. */
const STREAM_ITEMS = Number(process.env.BENCH_STREAM_ITEMS ?? 300);
/** Log lines the run page replays from the stream's first event (a 50,000-item run's log, issue "scale"). */
const REPLAY_LINES = Number(process.env.BENCH_REPLAY_LINES ?? 50_000);
/**
 * BENCH_REPLAY_PROFILE=1: the replay's page is sampled by Chromium's CPU profiler (DevTools protocol); the profile
 * goes to test-artifacts/bench/replay.cpuprofile and its heaviest functions (self time) are printed.
 */
const REPLAY_PROFILE = process.env.BENCH_REPLAY_PROFILE === '1';

ensureConsoleBuilt();
const assets = join(CONSOLE_DIST, 'assets');
const js = readdirSync(assets).filter((f) => f.endsWith('.js'));
const css = readdirSync(assets).filter((f) => f.endsWith('.css'));
const size = (files: string[]) =>
  files.reduce(
    (acc, f) => {
      const raw = readFileSync(join(assets, f));
      return { raw: acc.raw + raw.length, gz: acc.gz + gzipSync(raw, { level: 9 }).length };
    },
    { raw: 0, gz: 0 },
  );
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const jsSize = size(js);
const cssSize = size(css);
console.log(`\nConsole benchmark (${new Date().toISOString()})\n`);
// What the first page needs: the entry script and the chunks index.html preloads; the rest loads on demand.
const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
const initial = js.filter((f) => html.includes(`/assets/${f}`));
const initialSize = size(initial);
console.log(
  `console JavaScript, all (${js.length} files)     ${kb(jsSize.gz)} gzipped   (${kb(jsSize.raw)} raw)`,
);
console.log(
  `console JavaScript, first page (${initial.length} files) ${kb(initialSize.gz)} gzipped   (${kb(initialSize.raw)} raw)`,
);
console.log(
  `console CSS (${css.length} files)          ${kb(cssSize.gz)} gzipped   (${kb(cssSize.raw)} raw)`,
);

if (!browserAvailable) {
  console.log(`time to first render: skipped (no Chromium at ${CHROMIUM})`);
} else {
  const h = await startConsole(STREAM_ITEMS, false);
  const { base, page } = h;
  try {
    await signInThroughForm(page, base, 'owner@demo.example.com', h.password);
    await page.getByRole('link', { name: /^Demo/ }).waitFor();
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await page.goto(`${base}/`, { waitUntil: 'commit' });
      await page.getByRole('link', { name: /^Demo/ }).waitFor();
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    const median = samples[Math.floor(samples.length / 2)] ?? 0;
    console.log(
      `projects page, navigation to first rows       median ${median.toFixed(0)} ms  (min ${samples[0]?.toFixed(0)}, max ${samples.at(-1)?.toFixed(0)}, n=${RUNS}, signed-in reload)`,
    );
    const latency = await streamToScreen(h);
    const shown = latency.samples;
    console.log(
      shown.length
        ? `progress event, store write to DOM           median ${percentile(shown, 0.5).toFixed(0)} ms  p95 ${percentile(shown, 0.95).toFixed(0)} ms  (min ${shown[0]?.toFixed(0)}, max ${shown.at(-1)?.toFixed(0)}, ${shown.length} of ${latency.written} events shown, stream poll ${latency.pollMs} ms)`
        : `progress event, store write to DOM           no event shown (${latency.written} written)`,
    );
    const replay = await replayToScreen(h, latency.run, REPLAY_LINES);
    console.log(
      `run stream, whole replay read by a plain HTTP client   ${replay.plain.ms.toFixed(0)} ms, ${replay.plain.events.toLocaleString('en-US')} events, ${(replay.plain.bytes / 1024).toFixed(0)} KiB; ` +
        `GET /api/health meanwhile median ${replay.plain.healthMedianMs.toFixed(0)} ms, max ${replay.plain.healthMaxMs.toFixed(0)} ms`,
    );
    console.log(
      `run page on a run of ${replay.events.toLocaleString('en-US')} events, to "stream ended"   ${replay.ms.toFixed(0)} ms; ` +
        `its EventSource received ${replay.received.toLocaleString('en-US')} events; ` +
        `log redrawn ${replay.logRedraws.toLocaleString('en-US')} times; long tasks ${replay.longTasks} (${replay.longTaskMs.toFixed(0)} ms in all, longest ${replay.longestTaskMs.toFixed(0)} ms); log text in the DOM ${replay.logKiB.toFixed(1)} KiB`,
    );
  } finally {
    await h.close();
  }
}

/** The value below which `share` of the sorted samples fall (nearest rank). */
function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? 0;
}

/**
 * Starts a run on a project brought to READY through the API, opens its page with a MutationObserver recording
 * when each progress text appears (`performance.timeOrigin + performance.now()`: the same wall clock the
 * engine writes `at` with, on this machine), then matches each shown text to its stored progress event.
 */
async function streamToScreen(
  h: ConsoleHarness,
): Promise<{ samples: number[]; written: number; pollMs: number; run: BenchRun }> {
  const { base, page, password } = h;
  const call = (method: string, path: string, options?: { token?: string; body?: unknown }) =>
    http(base, method, path, options ?? {});
  const login = await call('POST', '/api/auth/login', {
    body: { email: 'owner@demo.example.com', password },
  });
  const token = login.body.accessToken as string;
  const tenantId = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).tenantId;
  const project = await call('POST', '/api/projects', {
    token,
    body: { name: 'Stream bench', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
  });
  const projectId = project.body.id as string;
  const sandboxes = { ado: { url: h.adoUrl }, jira: { url: h.jiraUrl } } as RunningSandboxes;
  const config = sandboxConfigFromEnv({});
  await prepareProjectOverHttp(call, token, projectId, sandboxCredentials(sandboxes, config));

  await page.addInitScript(() => {
    const g = globalThis as unknown as {
      document: { querySelector(s: string): { nextElementSibling: { textContent: string } | null } | null };
      MutationObserver: new (cb: () => void) => { observe(target: unknown, opts: unknown): void };
      performance: { timeOrigin: number; now(): number };
      __progressShown: { text: string; at: number }[];
    };
    g.__progressShown = [];
    let last = '';
    new g.MutationObserver(() => {
      const text =
        g.document.querySelector('[data-testid="run-progress"]')?.nextElementSibling?.textContent ?? '';
      const shown = /^(\d+)% \((\d+) of (\d+) in this phase\)/.exec(text)?.[0];
      if (!shown || shown === last) return;
      last = shown;
      g.__progressShown.push({ text: shown, at: g.performance.timeOrigin + g.performance.now() });
    }).observe(g.document, { subtree: true, childList: true, characterData: true });
  });
  const started = await call('POST', `/api/migrations/project/${projectId}/start`, {
    token,
    body: sandboxStartBody(sandboxes, config),
  });
  const runId = started.body.id as string;
  await page.goto(`${base}/runs/${runId}`);
  await page.getByText('COMPLETED', { exact: true }).waitFor({ timeout: 600_000 });
  const shown = (await page.evaluate(
    () => (globalThis as unknown as { __progressShown: { text: string; at: number }[] }).__progressShown,
  )) as { text: string; at: number }[];

  const store = createStore({
    db: createDocumentClient({ region: 'eu-west-2', endpoint: h.dynamodbEndpoint }),
    name: LOCAL_TABLE_NAME,
  });
  const written = (await store.runs.events(tenantId, projectId, runId, undefined, 10_000)).flatMap((e) =>
    e.event.type === 'progress'
      ? [
          {
            text: `${e.event.percent}% (${e.event.current} of ${e.event.total} in this phase)`,
            at: Date.parse(e.at),
          },
        ]
      : [],
  );
  // A text shown is the latest event with that text written before it showed (one poll may carry several).
  const samples = shown
    .flatMap((s) => {
      const event = written.filter((w) => w.text === s.text && w.at <= s.at).at(-1);
      return event ? [s.at - event.at] : [];
    })
    .sort((a, b) => a - b);
  return {
    samples,
    written: written.length,
    pollMs: Number(process.env.STREAM_POLL_MS ?? 500),
    run: { tenantId, projectId, runId, store },
  };
}

interface BenchRun {
  tenantId: string;
  projectId: string;
  runId: string;
  store: ReturnType<typeof createStore>;
}

/**
 * The finished run's page opened afresh after `lines` log events were added before its first (ids of phase 0,
 * which sort first). First the server's part alone: a plain HTTP client reads the whole stream from its first
 * event (what a client without `tail` gets) while another asks for /api/health every 100 ms. Then the page, timed
 * from navigation to "stream ended", with the events its EventSource received, its long tasks
 * (PerformanceObserver) and how often the log's text was redrawn (a MutationObserver on it): what a 50,000-line
 * log costs the browser.
 */
async function replayToScreen(
  h: ConsoleHarness,
  run: BenchRun,
  lines: number,
): Promise<{
  events: number;
  received: number;
  ms: number;
  logRedraws: number;
  longTasks: number;
  longTaskMs: number;
  longestTaskMs: number;
  logKiB: number;
  plain: { ms: number; events: number; bytes: number; healthMedianMs: number; healthMaxMs: number };
}> {
  const { tenantId, projectId, runId, store } = run;
  const own = (await store.runs.events(tenantId, projectId, runId, undefined, 100_000)).length;
  const PER_WRITE = 100;
  for (let i = 0; i < lines; i += PER_WRITE * 8) {
    await Promise.all(
      Array.from({ length: 8 }, (_, w) => i + w * PER_WRITE)
        .filter((from) => from < lines)
        .map((from) =>
          store.runs.appendEvents(
            tenantId,
            projectId,
            runId,
            Array.from({ length: Math.min(PER_WRITE, lines - from) }, (_, k) => ({
              id: chunkEventId(0, Math.floor((from + k) / PER_WRITE), (from + k) % PER_WRITE),
              event: {
                type: 'log' as const,
                message: `Replayed line ${from + k + 1} of ${lines}: #${from + k} migrated`,
              },
            })),
          ),
        ),
    );
  }
  // The server's part alone: the whole stream from its first event, read by a client that only counts it.
  const login = await http(h.base, 'POST', '/api/auth/login', {
    body: { email: 'owner@demo.example.com', password: h.password },
  });
  // Meanwhile another client asks for /api/health every 100 ms: how long the replay keeps it waiting.
  const plainStarted = performance.now();
  let reading = true;
  const healthMs: number[] = [];
  const probing = (async () => {
    while (reading) {
      const asked = performance.now();
      await http(h.base, 'GET', '/api/health');
      healthMs.push(performance.now() - asked);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const whole = await http(
    h.base,
    'GET',
    `/api/migrations/${runId}/stream?token=${encodeURIComponent(login.body.accessToken as string)}`,
  );
  const plainMs = performance.now() - plainStarted;
  reading = false;
  await probing;
  healthMs.sort((a, b) => a - b);
  const plain = {
    ms: plainMs,
    events: (whole.text.match(/^event: /gm) ?? []).length,
    bytes: Buffer.byteLength(whole.text),
    healthMedianMs: percentile(healthMs, 0.5),
    healthMaxMs: healthMs.at(-1) ?? 0,
  };
  const page = await h.page.context().newPage();
  const cdp = REPLAY_PROFILE ? await page.context().newCDPSession(page) : undefined;
  try {
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
      await cdp.send('Profiler.start');
    }
    await page.addInitScript(() => {
      const g = globalThis as unknown as {
        document: { querySelector(s: string): unknown };
        MutationObserver: new (
          cb: (records: { target: unknown }[]) => void,
        ) => {
          observe(target: unknown, opts: unknown): void;
        };
        PerformanceObserver: new (
          cb: (list: { getEntries(): { duration: number }[] }) => void,
        ) => { observe(opts: unknown): void };
        __replay: { redraws: number; tasks: number[]; received: number };
      };
      g.__replay = { redraws: 0, tasks: [], received: 0 };
      new g.PerformanceObserver((list) => {
        for (const e of list.getEntries()) g.__replay.tasks.push(e.duration);
      }).observe({ type: 'longtask', buffered: true });
      // The log's text is one node React replaces or edits on each render that changes it.
      // No named inner function here: the bench's loader would wrap it in a helper the page does not have.
      new g.MutationObserver((records) => {
        for (const r of records) {
          const n = r.target as {
            closest?(s: string): unknown;
            parentElement?: { closest(s: string): unknown };
          };
          if (
            n.closest
              ? n.closest('[data-testid="run-log"]')
              : n.parentElement?.closest('[data-testid="run-log"]')
          ) {
            g.__replay.redraws++;
            return;
          }
        }
      }).observe(g.document, { subtree: true, characterData: true, childList: true });
    });
    // What the page's EventSource hands it, of every kind the page listens to. As text: the bench's loader would
    // name the Proxy's handler with a helper the page does not have.
    await page.addInitScript({
      content: `EventSource = new Proxy(EventSource, { construct: (target, args) => {
        const source = new target(...args);
        for (const type of ['progress', 'log', 'status', 'done'])
          source.addEventListener(type, () => { globalThis.__replay.received++; });
        return source;
      } });`,
    });
    const started = performance.now();
    await page.goto(`${h.base}/runs/${runId}`);
    await page.getByText('stream ended').waitFor({ timeout: 600_000 });
    const ms = performance.now() - started;
    type Seen = { redraws: number; tasks: number[]; received: number };
    const seen = (await page.evaluate(() => (globalThis as unknown as { __replay: Seen }).__replay)) as Seen;
    const logText = (await page.getByTestId('run-log').textContent()) ?? '';
    if (cdp) printProfile((await cdp.send('Profiler.stop')).profile as CpuProfile);
    return {
      plain,
      events: own + lines,
      received: seen.received,
      ms,
      logRedraws: seen.redraws,
      longTasks: seen.tasks.length,
      longTaskMs: seen.tasks.reduce((a, b) => a + b, 0),
      longestTaskMs: Math.max(0, ...seen.tasks),
      logKiB: logText.length / 1024,
    };
  } finally {
    await page.close();
  }
}

interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** Writes the replay's CPU profile to test-artifacts/bench/ and prints its heaviest functions by self time. */
function printProfile(profile: CpuProfile): void {
  const dir = join('test-artifacts', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'replay.cpuprofile'), JSON.stringify(profile));
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const f = byNode.get(id)?.callFrame;
    const name = f
      ? `${f.functionName || '(anonymous)'} ${f.url.split('/').pop() ?? ''}:${f.lineNumber + 1}`
      : '?';
    self.set(name, (self.get(name) ?? 0) + ms);
    total += ms;
  });
  console.log(
    `replay CPU profile (${join(dir, 'replay.cpuprofile')}), ${total.toFixed(0)} ms sampled, self time:`,
  );
  for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20))
    console.log(`  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
}
