/**
 * `npm run bench`, the console's part: figures, never assertions. The JavaScript the browser downloads
 * (gzipped, as CloudFront and most servers send it), and the time from navigation to the projects page's first
 * rows on screen in Debian's Chromium, against `npm start` itself (a signed-in reload: the refresh cookie's
 * exchange, the bundle, the projects query and the render).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../../bin/console-build.ts';
import { browserAvailable, CHROMIUM } from '../support/browser.ts';
import { freePort } from '../support/global-setup.ts';
import { startService } from '../support/local-service.ts';

const RUNS = 9;

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
  const dataDir = mkdtempSync(join(tmpdir(), 'tms-console-bench-'));
  const [port, dynamodbPort, adoPort, jiraPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const service = await startService({
    PORT: String(port),
    DYNAMODB_PORT: String(dynamodbPort),
    SANDBOX_ADO_PORT: String(adoPort),
    SANDBOX_JIRA_PORT: String(jiraPort),
    SANDBOX_ITEMS: '20',
    DATA_DIR: dataDir,
  });
  const base = `http://127.0.0.1:${port}`;
  const password = /password for every demo login: (\S+)/.exec(service.output())?.[1] ?? '';
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/signin`);
    await page.getByLabel('E-mail').fill('owner@demo.example.com');
    await page.getByLabel(/^Password/).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
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
  } finally {
    await browser.close();
    service.proc.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}
