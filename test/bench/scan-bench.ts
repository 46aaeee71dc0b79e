/**
 * `npm run bench:scan`: a background scan of BENCH_ITEMS work items (default 100,000) against the Azure DevOps
 * sandbox (a process of its own, SANDBOX_PROFILE from BENCH_PROFILE, default off), read by the scan's code in a
 * process capped like a small Lambda (`--max-old-space-size`, BENCH_HEAP_MB, default 256). It prints the time,
 * items per second, the peak heap after a forced GC (sampled every BENCH_SAMPLE_MS and at each chunk's
 * progress) and the ADO requests per item. BENCH_BEFORE=<dir> (a checkout of another commit, with package.json,
 * functions/ and local/) runs that code's scan first against the same sandbox, for a before/after in one sitting.
 * It asserts nothing; a scan that does not fit the heap reports so.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startSandboxProcess } from './sandbox-process.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'WARN';

interface ScanFigures {
  items: number;
  ms: number;
  peakHeapMb: number;
  error?: string;
}

const ORG = 'sandbox-org';
const PROJECT = 'Contoso';
const PAT = 'sandbox-ado-pat';
const MB = 1024 ** 2;

/** The child: the scan's code from CODE_DIR over the sandbox at ADO_URL; one line of JSON figures on stdout. */
async function scanInThisProcess(): Promise<void> {
  const codeDir = process.env.CODE_DIR as string;
  const adoUrl = process.env.ADO_URL as string;
  const { allowSandboxPorts } = await import(`${codeDir}/local/loopback-ports.ts`);
  const { AdoClient } = await import(`${codeDir}/functions/trackers/ado/client.ts`);
  const { scanItems } = await import(`${codeDir}/functions/services/scan-items.ts`);
  allowSandboxPorts({ ado: { url: adoUrl }, jira: { url: adoUrl } });
  const gc = runInNewContext('gc') as () => void;
  let peak = 0;
  const sample = () => {
    gc();
    peak = Math.max(peak, getHeapStatistics().used_heap_size);
  };
  const timer = setInterval(sample, Number(process.env.BENCH_SAMPLE_MS ?? 500));
  const started = performance.now();
  const client = new AdoClient({ organization: `${adoUrl}/${ORG}`, project: PROJECT, token: PAT });
  const ids: number[] = await client.idsInScope();
  const report = await scanItems(client, ids, async () => sample());
  clearInterval(timer);
  sample();
  const figures: ScanFigures = {
    items: report.totalWorkItems,
    ms: performance.now() - started,
    peakHeapMb: peak / MB,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/** Runs the scan of `codeDir` in a child process under the heap cap; its figures, or why it ended. */
function scanInChild(codeDir: string, adoUrl: string, heapMb: number): Promise<ScanFigures> {
  const loaderArgs = process.execArgv.filter((arg) => !arg.startsWith('--max-old-space-size'));
  const child = spawn(
    process.execPath,
    [...loaderArgs, `--max-old-space-size=${heapMb}`, '--expose-gc', fileURLToPath(import.meta.url)],
    {
      env: { ...process.env, SCAN_BENCH_ROLE: 'scan', CODE_DIR: codeDir, ADO_URL: adoUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const started = performance.now();
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) return resolve(JSON.parse(line) as ScanFigures);
      const oom = /heap out of memory|Reached heap limit/.test(err);
      resolve({
        items: 0,
        ms: performance.now() - started,
        peakHeapMb: heapMb,
        error: oom ? `out of memory (heap cap ${heapMb} MB)` : `exit ${code ?? signal}: ${err.slice(-400)}`,
      });
    }),
  );
}

async function main(): Promise<void> {
  const items = Number(process.env.BENCH_ITEMS ?? 100_000);
  const heapMb = Number(process.env.BENCH_HEAP_MB ?? 256);
  const here = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
  const variants = [
    ...(process.env.BENCH_BEFORE ? [['before', process.env.BENCH_BEFORE] as const] : []),
    ['after', here] as const,
  ];
  const generating = performance.now();
  const sandbox = await startSandboxProcess({
    SANDBOX_ITEMS: String(items),
    SANDBOX_SEED: '99',
    SANDBOX_PROFILE: process.env.BENCH_PROFILE ?? 'off',
  });
  console.log(
    `ADO sandbox: ${items} items generated in ${((performance.now() - generating) / 1000).toFixed(1)} s, ` +
      `sandbox RSS ${(sandbox.rss() / MB).toFixed(0)} MB`,
  );
  const requests = async () =>
    ((await (await fetch(`${sandbox.ado.url}/_sandbox/requests/count`)).json()) as { count: number }).count;
  try {
    for (const [name, dir] of variants) {
      const before = await requests();
      const f = await scanInChild(dir, sandbox.ado.url, heapMb);
      const calls = (await requests()) - before;
      const line = f.error
        ? `${name}: FAILED after ${(f.ms / 1000).toFixed(1)} s: ${f.error}; ${calls} ADO requests`
        : `${name}: ${f.items} items in ${(f.ms / 1000).toFixed(1)} s (${Math.round(f.items / (f.ms / 1000))} items/s), ` +
          `peak heap after GC ${f.peakHeapMb.toFixed(1)} MB (cap ${heapMb} MB), ` +
          `${calls} ADO requests (${(calls / f.items).toFixed(4)} per item)`;
      console.log(line);
    }
  } finally {
    await sandbox.stop();
  }
}

if (process.env.SCAN_BENCH_ROLE === 'scan') await scanInThisProcess();
else await main();
