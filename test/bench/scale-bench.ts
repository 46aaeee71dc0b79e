/**
 * `npm run bench:scale`: the engine bench's migration (engine-migration.ts) at each size of BENCH_SIZES (default
 * 2000,10000,50000) on one profile (BENCH_PROFILE, default `off`: under `realistic` the trackers' modelled latency
 * and rate limits make 50,000 items take hours). Each size runs in a fresh child process with the engine's heap
 * capped (BENCH_HEAP_MB, default 384: `--max-old-space-size`) and `--trace-gc`; this parent reads the child's GC
 * lines (the live heap after each Mark-Compact) and its figures, and prints per size: wall time, items/minute,
 * peak live heap after a major GC, peak RSS, the largest DynamoDB item, the most Step Functions history events in
 * one execution, Jira/ADO calls per item, the AWS cost per 10,000 items, the artifacts the engine read, and
 * whether the size completed. A size that dies (heap out of memory) says so and the next one runs.
 * Figures only; nothing is asserted. How to read them: docs/testing.md.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { AWS_GENERATION_BUDGET } from '../../statemachine/substitutions.ts';
import { ENGINE_MEMORY_MB, openMigrationBench } from './engine-migration.ts';
import { awsCostPer10k } from './floors.ts';
import { type HeapSites, startHeapSampler } from './heap-sampler.ts';
import { dynamoItemSize, liveHeapAfterMajorGc, mostHistoryEvents } from './scale-figures.ts';

const PROFILE = (process.env.BENCH_PROFILE ?? 'off') as 'realistic' | 'off';
/** A line the child prints once, its figures as JSON after it. */
const RESULT_MARK = 'SCALE-BENCH-RESULT ';

/** What a child measured (the parent adds the heap from the GC trace). */
interface SizeFigures {
  items: number;
  status: string | undefined;
  created: number;
  failed: number;
  totalMs: number;
  peakRssMiB: number;
  largestItem: { bytes: number; key: string };
  scannedItems: number;
  runBatchCalls: number;
  engineCalls: number;
  jiraPerItem: number;
  adoPerItem: number;
  costPer10k: number;
  /** The engine's artifact reads by kind: artifacts of the kind, times read, MB read in all. */
  artifactReads: { name: string; files: number; gets: number; mb: number }[];
  heapSites: HeapSites | undefined;
  /** The run's artifacts at the end: name and MB. */
  artifacts: { name: string; files: number; mb: number }[];
}

if (process.env.BENCH_SCALE_CHILD === '1') await child();
else await parent();

/** One size, in this (heap-capped) process: the migration, then the table scanned for its largest item. */
async function child(): Promise<void> {
  const items = Number(process.env.BENCH_ITEMS);
  // BENCH_HEAP_SITES=1: where the live heap comes from (heap-sampler.ts), at some cost in speed.
  const sampler = process.env.BENCH_HEAP_SITES === '1' ? await startHeapSampler() : undefined;
  const bench = await openMigrationBench({
    items,
    profile: PROFILE,
    comments: true,
    until: Number.POSITIVE_INFINITY,
    // The entries of every request would make this process's own memory grow with the project.
    requestLog: 'counts',
    // The sandboxes share this machine: under other work's load an upload can take longer than the service's 30 s
    // time-out (which then fails the run, as in AWS). The bench measures memory and calls, so it waits longer.
    trackerTimeoutMs: Number(process.env.BENCH_TRACKER_TIMEOUT_MS ?? 180_000),
    onPhase: (row) =>
      console.error(
        `  [${items}] ${row.finalized ? 'finalize' : `phase ${row.phase}`}: ${(row.ms / 1000).toFixed(1)} s, Jira ${row.jiraCalls}, ADO ${row.adoCalls} requests`,
      ),
  });
  let result: Awaited<ReturnType<typeof bench.migrate>>;
  try {
    result = await bench.migrate();
  } catch (err) {
    // A thrown engine call fails the run in AWS (the state machine's MarkFailed): the size did not complete, but
    // where its heap came from until then is still worth printing.
    const heapSites = await sampler?.stop();
    console.log(`${RESULT_MARK}${JSON.stringify({ error: String(err), heapSites })}`);
    await bench.close();
    process.exit(1);
  }
  const heapSites = await sampler?.stop();
  const runBatchCalls = result.engineCalls - 1 - (result.phaseRows.some((r) => r.finalized) ? 1 : 0);
  const largestItem = { bytes: 0, key: '' };
  let scannedItems = 0;
  let startKey: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
  do {
    const page = await bench.db.send(
      new ScanCommand({ TableName: bench.table, ExclusiveStartKey: startKey }),
    );
    for (const item of page.Items ?? []) {
      scannedItems++;
      const bytes = dynamoItemSize(item);
      if (bytes > largestItem.bytes) {
        // The key's shape only (ids replaced): which kind of item it is.
        const shape = (v: string | undefined) => (v ?? '').replace(/[0-9a-f-]{20,}|\d{3,}/gi, '…');
        largestItem.bytes = bytes;
        largestItem.key = `${shape(item.pk?.S)} ${shape(item.sk?.S)}`;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  const sum = (f: (r: (typeof result.phaseRows)[number]) => number) =>
    result.phaseRows.reduce((n, r) => n + f(r), 0);
  const perItem = (n: number) => n / Math.max(result.items, 1);
  const figures: SizeFigures = {
    items: result.items,
    status: result.run?.status,
    created: result.run?.successCount ?? 0,
    failed: result.run?.failureCount ?? 0,
    totalMs: result.totalMs,
    peakRssMiB: result.peakRss / 1024 ** 2,
    largestItem,
    scannedItems,
    runBatchCalls,
    engineCalls: result.engineCalls,
    jiraPerItem: perItem(sum((r) => r.jiraCalls)),
    adoPerItem: perItem(sum((r) => r.adoCalls)),
    costPer10k: awsCostPer10k(result.usage, result.items, ENGINE_MEMORY_MB).total,
    artifactReads: byKind(
      [...result.artifactReads].map(([name, r]) => ({ name, gets: r.gets, mb: r.chars / 1024 ** 2 })),
    ),
    heapSites,
    artifacts: byKind(
      filesUnder(bench.artifactsDir).map((f) => ({ name: f.name, gets: 0, mb: f.bytes / 1024 ** 2 })),
    ).map(({ name, files, mb }) => ({ name, files, mb })),
  };
  // The line is read whole by the parent: written out before the process exits (a pipe's write is asynchronous).
  await new Promise<void>((done) =>
    process.stdout.write(`${RESULT_MARK}${JSON.stringify(figures)}\n`, () => done()),
  );
  await bench.close();
  process.exit(0);
}

/**
 * Artifacts by kind, numbers in their names read as N (`history/window-N-N.json`): a run of 50,000 items has
 * hundreds of parts, which one line per name would make unreadable.
 */
function byKind(list: { name: string; gets: number; mb: number }[]) {
  const kinds = new Map<string, { name: string; files: number; gets: number; mb: number }>();
  for (const a of list) {
    const name = a.name.replace(/\d+/g, 'N');
    const kind = kinds.get(name) ?? { name, files: 0, gets: 0, mb: 0 };
    kind.files++;
    kind.gets += a.gets;
    kind.mb += a.mb;
    kinds.set(name, kind);
  }
  return [...kinds.values()];
}

function filesUnder(dir: string, prefix = ''): { name: string; bytes: number }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, `${prefix}${entry.name}/`);
    return [
      {
        name: `${prefix}${entry.name}`.replace(/^tenants\/[^/]+\/runs\/[^/]+\//, ''),
        bytes: statSync(path).size,
      },
    ];
  });
}

/** What a child that did not complete tells: why, and where its heap came from until then. */
interface FailedSize {
  error: string;
  heapSites: HeapSites | undefined;
}

interface SizeOutcome {
  size: number;
  figures: SizeFigures | undefined;
  failed?: FailedSize;
  peakHeapMb: number;
  majorGcs: number;
  exitCode: number | null;
  outOfMemory: boolean;
  lastErrors: string[];
}

/** Runs one size in a child with the heap cap and GC tracing; its GC lines are read here, its progress passed on. */
async function runSize(size: number, heapMb: number): Promise<SizeOutcome> {
  const script = fileURLToPath(import.meta.url);
  const proc = spawn(
    process.execPath,
    [...process.execArgv, `--max-old-space-size=${heapMb}`, '--trace-gc', script],
    {
      env: { ...process.env, BENCH_SCALE_CHILD: '1', BENCH_ITEMS: String(size), BENCH_PROFILE: PROFILE },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const outcome: SizeOutcome = {
    size,
    figures: undefined,
    peakHeapMb: 0,
    majorGcs: 0,
    exitCode: null,
    outOfMemory: false,
    lastErrors: [],
  };
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const heap = liveHeapAfterMajorGc(line);
    if (heap !== undefined) {
      outcome.majorGcs++;
      outcome.peakHeapMb = Math.max(outcome.peakHeapMb, heap);
    } else if (line.startsWith(RESULT_MARK)) {
      const figures = JSON.parse(line.slice(RESULT_MARK.length)) as SizeFigures | FailedSize;
      if ('error' in figures) outcome.failed = figures;
      else outcome.figures = figures;
    } else if (!/ ms: (Scavenge|Mark-Compact|Mark-sweep)/.test(line)) console.log(line);
  });
  createInterface({ input: proc.stderr }).on('line', (line) => {
    if (/heap out of memory|Reached heap limit|Ineffective mark-compacts/i.test(line))
      outcome.outOfMemory = true;
    outcome.lastErrors = [...outcome.lastErrors.slice(-9), line];
    // A phase's line carries the peak live heap so far: a size stopped before its end still tells it.
    console.error(
      /^\s*\[\d+\] (phase \d+|finalize):/.test(line)
        ? `${line}; peak live heap after GC so far ${outcome.peakHeapMb.toFixed(0)} MB (${outcome.majorGcs} major GCs)`
        : line,
    );
  });
  outcome.exitCode = await exited;
  return outcome;
}

async function parent(): Promise<void> {
  const sizes = (process.env.BENCH_SIZES ?? '2000,10000,50000').split(',').map(Number);
  const heapMb = Number(process.env.BENCH_HEAP_MB ?? 384);
  console.log(
    `\nScale bench: sizes ${sizes.join(', ')}, sandbox profile ${PROFILE}, the engine's process capped at --max-old-space-size=${heapMb}\n`,
  );
  const outcomes: SizeOutcome[] = [];
  for (const size of sizes) {
    console.log(`--- ${size} items`);
    const outcome = await runSize(size, heapMb);
    outcomes.push(outcome);
    for (const line of report(outcome)) console.log(line);
  }
  console.log('\nSummary');
  for (const o of outcomes) console.log(`  ${summary(o)}`);
}

function report(o: SizeOutcome): string[] {
  const f = o.figures;
  if (!f)
    return [
      `${o.size} items: did not complete (${o.outOfMemory ? 'heap out of memory' : `exit ${o.exitCode}`}); peak live heap after GC ${o.peakHeapMb.toFixed(0)} MB over ${o.majorGcs} major GCs`,
      ...(o.failed ? [`    ${o.failed.error}`] : o.lastErrors.map((l) => `    ${l}`)),
      ...heapSiteLines(o.failed?.heapSites),
    ];
  const minutes = f.totalMs / 60_000;
  return [
    `${f.items} items: ${f.status}, created ${f.created}, failed ${f.failed}, in ${(f.totalMs / 1000).toFixed(0)} s (${(f.items / minutes).toFixed(0)} items/minute)`,
    `    peak live heap after a major GC ${o.peakHeapMb.toFixed(0)} MB (${o.majorGcs} major GCs); peak RSS ${f.peakRssMiB.toFixed(0)} MiB`,
    `    largest DynamoDB item ${(f.largestItem.bytes / 1024).toFixed(1)} KB (${f.largestItem.key}) of ${f.scannedItems} items`,
    `    engine calls ${f.engineCalls} (${f.runBatchCalls} RunBatch); most Step Functions history events in one execution ${mostHistoryEvents(f.runBatchCalls, AWS_GENERATION_BUDGET)} (derived: scale-figures.ts)`,
    `    calls per item: Jira ${f.jiraPerItem.toFixed(2)}, ADO ${f.adoPerItem.toFixed(3)}; AWS cost per 10,000 items $${f.costPer10k.toFixed(3)}`,
    `    artifacts read: ${f.artifactReads.map((r) => `${r.name}${r.files > 1 ? ` (${r.files})` : ''} ${r.gets}x (${r.mb.toFixed(1)} MB in all)`).join(', ') || 'none'}`,
    `    artifacts written: ${f.artifacts.map((a) => `${a.name}${a.files > 1 ? ` (${a.files})` : ''} ${a.mb.toFixed(2)} MB`).join(', ')}`,
    ...heapSiteLines(f.heapSites),
  ];
}

function heapSiteLines(sites: HeapSites | undefined): string[] {
  if (!sites) return [];
  const line = (s: { site: string; mb: number }) => `      ${s.mb.toFixed(1).padStart(7)} MB  ${s.site}`;
  return [
    `    heap sites (sampled, fullest reading ${sites.totalMb.toFixed(0)} MB live): by the service's own frame`,
    ...sites.byOwnFrame.map(line),
    '    by allocation site',
    ...sites.bySite.map(line),
  ];
}

function summary(o: SizeOutcome): string {
  const f = o.figures;
  if (!f)
    return `${o.size}: did not complete (${o.outOfMemory ? 'heap OOM' : `exit ${o.exitCode}`}), heap ${o.peakHeapMb.toFixed(0)} MB`;
  return `${f.items}: ${(f.totalMs / 1000).toFixed(0)} s, ${(f.items / (f.totalMs / 60_000)).toFixed(0)} items/min, heap ${o.peakHeapMb.toFixed(0)} MB, RSS ${f.peakRssMiB.toFixed(0)} MiB, item ${(f.largestItem.bytes / 1024).toFixed(1)} KB, events ${mostHistoryEvents(f.runBatchCalls, AWS_GENERATION_BUDGET)}, Jira ${f.jiraPerItem.toFixed(2)}/item, ADO ${f.adoPerItem.toFixed(3)}/item, $${f.costPer10k.toFixed(3)}/10k, ${f.status}`;
}
