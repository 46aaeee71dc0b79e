/**
 * `node test/bench/cpu-by-kind.mjs -- <command> [args]`: runs the command and prints, when it ends, the CPU
 * seconds (user + system) that every process of its tree spent, summed by kind (vitest's workers and main process,
 * DynamoDB Local's JVMs, Chromium's processes, `npm start` children, type checks, esbuild...). It reads `/proc`
 * every 300 ms, so it also counts what `/usr/bin/time` misses: processes that another process reaps (Chromium's
 * zygote-forked renderers) and the JVMs. A process that lives less than 300 ms between two samples is missed.
 * With CPU_BY_KIND_EACH=<n> it also lists the n costliest processes one by one (how many JVMs, which children).
 * Linux only. Why and how it is used: docs/testing.md, "Finding where the time goes".
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** The kind a process's command line says it is. */
function kindOf(command) {
  if (/chrom/i.test(command)) {
    const type = /--type=(\S+)/.exec(command)?.[1] ?? 'browser';
    return `chromium:${type}${/--utility-sub-type=(\S+)/.exec(command)?.[1] ?? ''}`;
  }
  if (/java/.test(command))
    return /DynamoDBLocal|LoopbackDynamoDBLocal/.test(command) ? 'dynamodb-local jvm' : 'java';
  if (/vitest\/dist\/workers|forks\.js|vitest.*worker/.test(command)) return 'vitest worker';
  if (/vitest/.test(command)) return 'vitest main';
  if (/local-bundle|bin\/local|cli-bundles\/local\.mjs/.test(command)) return 'npm start child';
  if (/tsgo|tsc|typescript/.test(command)) return 'type check';
  if (/esbuild|cdk/.test(command)) return 'esbuild / cdk';
  if (/biome/.test(command)) return 'biome';
  return `other: ${command.slice(0, 60)}`;
}

/** pid:starttime -> what was seen of that process. */
const seen = new Map();
const tree = new Set();

function sample(rootPid) {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
      const key = `${pid}:${fields[19]}`;
      let entry = seen.get(key);
      if (!entry) {
        const inTree = rootPid !== undefined && (pid === String(rootPid) || tree.has(fields[1]));
        if (inTree) tree.add(pid);
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
        // A process already running before the command started counts only what it spends from now on.
        entry = { command, inTree, base: rootPid === undefined ? cpu : 0, cpu };
        seen.set(key, entry);
      }
      entry.cpu = cpu;
    } catch {
      // The process ended between the listing and the read.
    }
  }
}

sample(undefined);
const args = process.argv.slice(process.argv.indexOf('--') + 1);
const child = spawn(args[0], args.slice(1), { stdio: 'inherit' });
tree.add(String(child.pid));
const timer = setInterval(() => sample(child.pid), 300);
child.on('exit', (code) => {
  clearInterval(timer);
  sample(child.pid);
  const byKind = new Map();
  let total = 0;
  for (const entry of seen.values()) {
    const spent = entry.cpu - entry.base;
    if (!entry.inTree || spent <= 0) continue;
    const kind = kindOf(entry.command);
    byKind.set(kind, (byKind.get(kind) ?? 0) + spent);
    total += spent;
  }
  console.error(`CPU by kind of process: ${total.toFixed(1)} s in all`);
  for (const [kind, spent] of [...byKind].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    console.error(`${spent.toFixed(1).padStart(8)}  ${kind}`);
  }
  const each = Number(process.env.CPU_BY_KIND_EACH ?? 0);
  if (each > 0) {
    const processes = [...seen.values()].filter((e) => e.inTree && e.cpu - e.base > 0);
    console.error(`The ${each} costliest of ${processes.length} processes:`);
    for (const e of processes.sort((a, b) => b.cpu - b.base - (a.cpu - a.base)).slice(0, each))
      console.error(
        `${(e.cpu - e.base).toFixed(1).padStart(8)}  ${kindOf(e.command)}: ${e.command.slice(0, 140)}`,
      );
  }
  process.exit(code ?? 1);
});
