/**
 * `npm run bench`, the console's part: figures, never assertions. The JavaScript the browser downloads
 * (gzipped, as CloudFront and most servers send it), the time from navigation to the projects page's first
 * rows on screen in Debian's Chromium, against `npm start` itself (a signed-in reload: the refresh cookie's
 * exchange, the bundle, the projects query and the render), and the stream-to-screen latency of a run's
 * progress events: from the engine's write of the event (its checkpoint's `at` in the table) to the run page's
 * DOM showing it (a MutationObserver in the page).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../../bin/console-build.ts';
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
): Promise<{ samples: number[]; written: number; pollMs: number }> {
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
  return { samples, written: written.length, pollMs: Number(process.env.STREAM_POLL_MS ?? 500) };
}
